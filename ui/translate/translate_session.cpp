#include "ui/translate/translate_session.h"

#include "ui/render/string_lists.h"

#include <QJsonArray>

namespace attnlens::ui {

namespace {

const QStringList kKinds{"encoder", "decoder", "cross"};
const QStringList kFusions{"mean", "max", "min"};
const QStringList kThroughs{"layer", "rollout", "flow"};
constexpr int kMaxLayers = 256;

} // namespace

const QStringList TranslateSession::kViews{"matrix", "model", "lines",      "embeddings",
                                           "beam",   "heads", "difference", "lens"};

TranslateSession TranslateSession::parse(const QJsonObject& o, SessionReader& r, int maxBeam, int maxLength) {
    TranslateSession s;
    (void)r.string("model_dir");
    s.input = r.string("input");
    if (r.has("draft")) s.draft = r.string("draft");
    s.sentence = r.integer("sentence", 0, 0, 100000);
    s.wholeInput = r.boolean("whole_input", false);
    s.beamWidth = r.integer("beam_width", 1, 1, maxBeam);
    s.maxNewTokens = r.integer("max_new_tokens", 0, 1, maxLength);
    s.translated = r.boolean("translated", false);
    s.step = r.integer("step", -1, 0, 100000);
    s.view = r.choice("view", "matrix", kViews);
    s.kind = static_cast<AttentionKind>(kKinds.indexOf(r.choice("kind", "cross", kKinds)));
    s.layer = r.integer("layer", 0, 0, kMaxLayers);
    s.head = r.integer("head", -1, -1, kMaxLayers);
    s.fusion = *parseHeadFusion(r.choice("fusion", "mean", kFusions).toStdString());
    s.through =
        static_cast<TranslationDocument::Through>(kThroughs.indexOf(r.choice("through", "layer", kThroughs)));
    s.wordLevel = r.boolean("word_level", false);
    s.hideSpecial = r.boolean("hide_special", false);
    s.valueWeighted = r.boolean("value_weighted", false);
    s.beamNode = r.integer("beam_node", -1, -1, 1 << 20);
    if (r.has("selected") && !o.value("selected").isNull()) {
        SessionReader sel(r.object("selected"), r.where("selected"));
        TokenRef t;
        t.side = sel.choice("side", "source", {"source", "target"}) == QLatin1String("target")
                     ? TokenSide::Target
                     : TokenSide::Source;
        t.index = sel.integer("index", 0, 0, 100000);
        if (!sel.ok()) r.fail("selected", sel.error().section(": ", 1));
        s.selected = t;
    }
    SessionReader ab(r.object("ablation"), r.where("ablation"));
    for (int k = 0; k < 3; ++k)
        s.ablation[size_t(k)] = readHeadPairs(ab, kKinds[k]);
    if (!ab.ok()) r.fail("ablation", ab.error().section(": ", 1));
    if (r.has("pinned")) {
        SessionReader p(r.object("pinned"), r.where("pinned"));
        LabelledMatrix m;
        s.pinnedDescription = p.string("description");
        const auto values = p.matrix("values", -1, -1);
        auto labels = [&p](const char* key, qsizetype count) {
            std::vector<std::string> out;
            const QJsonArray a = p.array(key);
            if (!a.isEmpty() && a.size() != count) p.fail(key, QString("expected %1 labels").arg(count));
            for (const QJsonValue& v : a) {
                if (!v.isString()) p.fail(key, "expected strings");
                out.push_back(v.toString().toStdString());
            }
            return out;
        };
        const qsizetype rows = values.size(), cols = values.isEmpty() ? 0 : values.front().size();
        m.rows = labels("rows", rows);
        m.columns = labels("columns", cols);
        if (p.ok() && rows == 0) p.fail("values", "expected a matrix, found none");
        if (p.ok()) {
            m.values = matrixFromValues(values);
            s.pinned = std::move(m);
        }
        if (!p.ok()) r.fail("pinned", p.error().section(": ", 1));
    }
    return s;
}

TranslateSession TranslateSession::capture(const TranslationDocument& doc) {
    TranslateSession s;
    s.kind = doc.kind();
    s.layer = doc.layer();
    s.head = doc.head();
    s.fusion = doc.fusion();
    s.through = doc.through();
    s.wordLevel = doc.wordLevel();
    s.hideSpecial = doc.hideSpecial();
    s.valueWeighted = doc.valueWeightedSwitch();
    s.beamNode = doc.selectedBeamNode();
    if (const TokenRef t = doc.selectedToken(); t.isValid()) s.selected = t;
    return s;
}

void TranslateSession::write(QJsonObject& s) const {
    s.insert("input", input);
    if (draft) s.insert("draft", *draft);
    s.insert("sentence", sentence);
    s.insert("whole_input", wholeInput);
    s.insert("beam_width", beamWidth);
    s.insert("max_new_tokens", maxNewTokens);
    s.insert("translated", translated);
    if (translated) s.insert("step", step);
    s.insert("view", view);
    s.insert("kind", QString::fromLatin1(attentionKindId(kind).data()));
    s.insert("layer", layer);
    s.insert("head", head);
    s.insert("fusion", QString::fromLatin1(headFusionName(fusion).data()));
    s.insert("through", kThroughs[static_cast<int>(through)]);
    s.insert("word_level", wordLevel);
    s.insert("hide_special", hideSpecial);
    s.insert("value_weighted", valueWeighted);
    s.insert("beam_node", beamNode);
    if (selected)
        s.insert("selected", QJsonObject{{"side", selected->side == TokenSide::Target ? "target" : "source"},
                                         {"index", selected->index}});
    QJsonObject heads;
    for (int k = 0; k < 3; ++k)
        if (!ablation[size_t(k)].empty()) heads.insert(kKinds[k], headPairsToJson(ablation[size_t(k)]));
    if (!heads.isEmpty()) s.insert("ablation", heads);
    if (pinned) {
        QJsonObject p = pinnedMapToJson(pinned->values, pinnedDescription);
        p.insert("rows", QJsonArray::fromStringList(toQStringList(pinned->rows)));
        p.insert("columns", QJsonArray::fromStringList(toQStringList(pinned->columns)));
        s.insert("pinned", p);
    }
}

void TranslateSession::applyView(TranslationDocument& doc) const {
    doc.setKind(kind);
    doc.setLayer(layer);
    doc.setFusion(fusion);
    doc.setHead(head);
    if (head < 0) doc.setThrough(through);
    doc.setWordLevel(wordLevel);
    doc.setHideSpecial(hideSpecial);
    doc.setValueWeighted(valueWeighted);
    doc.setSelectedBeamNode(beamNode);
    doc.setSelectedToken(selected.value_or(TokenRef{}));
}

MarianAblation TranslateSession::ablationFor(const MarianConfig& config) const {
    MarianAblation out;
    for (int k = 0; k < 3; ++k)
        out.setHeads(static_cast<AttentionKind>(k), ablation[size_t(k)], config);
    return out;
}

void TranslateSession::setAblation(const MarianAblation& a) {
    for (int k = 0; k < 3; ++k)
        ablation[size_t(k)] = a.heads(static_cast<AttentionKind>(k));
}

} // namespace attnlens::ui
