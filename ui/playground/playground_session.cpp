#include "ui/playground/playground_session.h"

#include <QJsonArray>

#include <algorithm>

namespace attnlens::ui {

namespace {

using Input = PlaygroundModel::Input;
using MaskMode = PlaygroundModel::MaskMode;
using Preset = PlaygroundModel::Preset;

const QStringList kPresets{"worked_example", "random", "identity", "edited"};
const QStringList kMasks{"none", "causal", "padding", "custom"};
const char* const kInputs[] = {"q", "k", "v", "w_o"};

} // namespace

PlaygroundSession PlaygroundSession::parse(const QJsonObject& o, SessionReader& r) {
    PlaygroundSession s;
    s.n = r.integer("length", 4, 1, PlaygroundModel::kMaxLength);
    s.dModel = r.integer("d_model", 4, 1, PlaygroundModel::kMaxDModel);
    s.dValue = r.integer("d_value", s.dModel, 1, PlaygroundModel::kMaxDModel);
    s.heads = r.integer("heads", 1, 1, PlaygroundModel::kMaxDModel);
    if (r.ok() && !PlaygroundModel::validHeadCounts(s.dModel, s.dValue).contains(s.heads))
        r.fail(
            "heads",
            QString("%1 heads do not divide d_model %2 and d_v %3").arg(s.heads).arg(s.dModel).arg(s.dValue));
    for (const QJsonValue& t : r.array("tokens")) {
        if (!t.isString()) r.fail("tokens", "expected strings");
        s.tokens << t.toString();
    }
    s.preset = r.choice("preset", "worked_example", kPresets);
    s.seed = r.integer("seed", 1, 0, 2147483647);
    if (s.preset == QLatin1String("edited")) {
        for (int i = 0; i < 4; ++i) {
            const int rows = i == 3 ? s.dValue : s.n, cols = i >= 2 ? s.dValue : s.dModel;
            s.inputs[size_t(i)] = r.matrix(kInputs[i], rows, cols);
            if (r.ok() && !o.contains(kInputs[i]))
                r.fail(kInputs[i], "missing (an edited example keeps its values)");
        }
    }
    s.mask = r.choice("mask", "none", kMasks);
    // 0: a one-token input has no key to pad (PlaygroundModel saves it so; the monkey test found the reader
    // refusing the page's own session)
    s.padding = r.integer("padding", 1, 0, PlaygroundModel::kMaxLength);
    if (s.mask == QLatin1String("custom")) s.customMask = r.matrix("custom_mask", s.n, s.n);
    s.head = r.integer("head", 0, 0, PlaygroundModel::kMaxDModel - 1);
    const QList<int> focus =
        r.has("focus") ? r.integers("focus", 0, PlaygroundModel::kMaxLength - 1, 2) : QList<int>{0, 0};
    if (focus.size() == 2) s.query = focus[0], s.key = focus[1];
    s.tab = r.integer("tab", 0, 0, 8);
    s.colorMap = readColorMap(r, "color_map", allColorMaps().front());
    s.weightsAuto = r.boolean("weights_auto_range", false);
    s.valueWeighted = r.boolean("value_weighted", false);
    return s;
}

void PlaygroundSession::writeModel(const PlaygroundModel& m, QJsonObject& s) {
    s.insert("length", m.sequenceLength());
    s.insert("d_model", m.dModel());
    s.insert("d_value", m.dValue());
    s.insert("heads", m.heads());
    s.insert("tokens", QJsonArray::fromStringList(m.tokens()));
    s.insert("preset", kPresets[static_cast<int>(m.preset())]);
    s.insert("seed", m.seed());
    if (m.preset() == Preset::Edited)
        for (int i = 0; i < 4; ++i)
            s.insert(kInputs[i], matrixToJson(m.input(static_cast<Input>(i))));
    s.insert("mask", kMasks[static_cast<int>(m.maskMode())]);
    s.insert("padding", m.paddingCount());
    if (m.maskMode() == MaskMode::Custom) s.insert("custom_mask", matrixToJson(m.effectiveMask()));
    s.insert("head", m.selectedHead());
    s.insert("focus", QJsonArray{m.focusQuery(), m.focusKey()});
}

void PlaygroundSession::applyTo(PlaygroundModel& m) const {
    // The preset first (it fills the whole store), then the sizes that show part of it. Edited values are
    // saved for the visible part only; the rest of the store (shown when the sizes grow) comes from the seed.
    // The seed first: the other presets fill what they do not set from it (the monkey test found a worked
    // example saved with seed 0 coming back with seed 1).
    m.applyRandom(seed);
    if (preset == QLatin1String("identity"))
        m.applyIdentity();
    else if (preset != QLatin1String("random") && preset != QLatin1String("edited"))
        m.applyWorkedExample();
    m.setSequenceLength(n);
    m.setDModel(dModel);
    m.setDValue(dValue);
    m.setHeads(heads);
    if (!tokens.isEmpty()) m.setTokens(tokens);
    if (preset == QLatin1String("edited"))
        for (int i = 0; i < 4; ++i) {
            const auto& values = inputs[size_t(i)];
            for (qsizetype row = 0; row < values.size(); ++row)
                for (qsizetype col = 0; col < values[row].size(); ++col)
                    m.setInputValue(static_cast<Input>(i), int(row), int(col),
                                    static_cast<float>(values[row][col]));
        }
    m.setMaskMode(static_cast<MaskMode>(kMasks.indexOf(mask)));
    if (mask == QLatin1String("padding")) m.setPaddingCount(std::min(padding, std::max(1, n - 1)));
    if (mask == QLatin1String("custom")) {
        RowMatrix keep(n, n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                keep(i, j) = customMask[i][j] != 0.0 ? 1.0f : 0.0f;
        m.setCustomMask(keep);
    }
    m.setSelectedHead(std::min(head, m.heads() - 1));
    m.setFocus(std::min(query, n - 1), std::min(key, n - 1));
}

} // namespace attnlens::ui
