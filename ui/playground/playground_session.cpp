// PlaygroundPage's saved sessions (ui/shell/session.h): the whole worked example as the user left it. Inputs
// that a preset made are saved as the preset (and seed); edited ones value by value.

#include "ui/playground/playground_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QTabWidget>

namespace attnlens::ui {

namespace {

using Input = PlaygroundModel::Input;
using MaskMode = PlaygroundModel::MaskMode;
using Preset = PlaygroundModel::Preset;

const QStringList kPresets{"worked_example", "random", "identity", "edited"};
const QStringList kMasks{"none", "causal", "padding", "custom"};
const char* const kInputs[] = {"q", "k", "v", "w_o"};

struct State {
    QStringList tokens;
    int n = 4, dModel = 4, dValue = 4, heads = 1, seed = 1, padding = 1, head = 0, query = 0, key = 0,
        tab = 0;
    QString preset, mask;
    ColorMap colorMap = ColorMap::Viridis;
    std::array<QList<QList<double>>, 4> inputs; // when edited
    QList<QList<double>> customMask;
    bool weightsAuto = false;
};

State parse(const QJsonObject& o, SessionReader& r) {
    State s;
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
    s.padding = r.integer("padding", 1, 1, PlaygroundModel::kMaxLength);
    if (s.mask == QLatin1String("custom")) s.customMask = r.matrix("custom_mask", s.n, s.n);
    s.head = r.integer("head", 0, 0, PlaygroundModel::kMaxDModel - 1);
    const QList<int> focus =
        r.has("focus") ? r.integers("focus", 0, PlaygroundModel::kMaxLength - 1, 2) : QList<int>{0, 0};
    if (focus.size() == 2) s.query = focus[0], s.key = focus[1];
    s.tab = r.integer("tab", 0, 0, 8);
    s.colorMap = readColorMap(r, "color_map", allColorMaps().front());
    s.weightsAuto = r.boolean("weights_auto_range", false);
    return s;
}

} // namespace

QJsonObject PlaygroundPage::saveSession() const {
    const PlaygroundModel& m = *m_model;
    QJsonObject s;
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
    s.insert("tab", m_stageTabs->currentIndex());
    s.insert("color_map", colorMapId(static_cast<ColorMap>(m_colorMap->currentData().toInt())));
    s.insert("weights_auto_range", m_weightsAuto->isChecked());
    return s;
}

QString PlaygroundPage::checkSession(const QJsonObject& state) const {
    SessionReader r(state, QStringLiteral("pages.attention"));
    (void)parse(state, r);
    return r.error();
}

void PlaygroundPage::restoreSession(const QJsonObject& state) {
    SessionReader r(state, QStringLiteral("pages.attention"));
    const State s = parse(state, r);
    if (!r.ok()) return; // checked before: not reached
    PlaygroundModel& m = *m_model;
    // The preset first (it fills the whole store), then the sizes that show part of it. Edited values are
    // saved for the visible part only; the rest of the store (shown when the sizes grow) comes from the seed.
    if (s.preset == QLatin1String("random") || s.preset == QLatin1String("edited"))
        m.applyRandom(s.seed);
    else if (s.preset == QLatin1String("identity"))
        m.applyIdentity();
    else
        m.applyWorkedExample();
    m.setSequenceLength(s.n);
    m.setDModel(s.dModel);
    m.setDValue(s.dValue);
    m.setHeads(s.heads);
    if (!s.tokens.isEmpty()) m.setTokens(s.tokens);
    if (s.preset == QLatin1String("edited"))
        for (int i = 0; i < 4; ++i) {
            const auto& values = s.inputs[size_t(i)];
            for (qsizetype row = 0; row < values.size(); ++row)
                for (qsizetype col = 0; col < values[row].size(); ++col)
                    m.setInputValue(static_cast<Input>(i), int(row), int(col),
                                    static_cast<float>(values[row][col]));
        }
    m.setMaskMode(static_cast<MaskMode>(kMasks.indexOf(s.mask)));
    if (s.mask == QLatin1String("padding")) m.setPaddingCount(std::min(s.padding, std::max(1, s.n - 1)));
    if (s.mask == QLatin1String("custom")) {
        RowMatrix keep(s.n, s.n);
        for (int i = 0; i < s.n; ++i)
            for (int j = 0; j < s.n; ++j)
                keep(i, j) = s.customMask[i][j] != 0.0 ? 1.0f : 0.0f;
        m.setCustomMask(keep);
    }
    m.setSelectedHead(std::min(s.head, m.heads() - 1));
    m.setFocus(std::min(s.query, s.n - 1), std::min(s.key, s.n - 1));
    m_stageTabs->setCurrentIndex(std::min(s.tab, m_stageTabs->count() - 1));
    const int mapIndex = m_colorMap->findData(static_cast<int>(s.colorMap));
    if (mapIndex >= 0) m_colorMap->setCurrentIndex(mapIndex);
    m_weightsAuto->setChecked(s.weightsAuto);
}

} // namespace attnlens::ui
