// TranslatePage's saved sessions (ui/shell/session.h): what the page shows, saved as JSON and restored in
// stages — the model loads, the sentence is translated with the saved settings and heads off, the decoding
// goes to the saved step, then the selection, view options and tab are set and the pinned matrix comes back.

#include "ui/render/string_lists.h"
#include "ui/translate/step_panel.h"
#include "ui/translate/translate_page.h"
#include "ui/widgets/page_message.h"

#include <QComboBox>
#include <QFileInfo>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>

namespace attnlens::ui {

namespace {

const QStringList kViews{"matrix", "model", "lines", "embeddings", "beam", "heads", "difference"};
const QStringList kKinds{"encoder", "decoder", "cross"};
const QStringList kFusions{"mean", "max", "min"};
const QStringList kThroughs{"layer", "rollout", "flow"};
constexpr int kMaxLayers = 256;

// The parsed state; every field checked (reader.ok()).
struct State {
    QString input;
    int beamWidth = 1, maxNewTokens = 0;
    bool translated = false;
    int step = -1;
    QString view, kind, fusion, through;
    int layer = 0, head = -1, beamNode = -1;
    bool wordLevel = false, hideSpecial = false;
    std::optional<TokenRef> selected;
    std::array<std::vector<std::pair<int, int>>, 3> ablation; // encoder, decoder, cross
    std::optional<LabelledMatrix> pinned;
    QString pinnedDescription;
};

State parse(const QJsonObject& o, SessionReader& r, int maxBeam, int maxLength) {
    State s;
    (void)r.string("model_dir");
    s.input = r.string("input");
    s.beamWidth = r.integer("beam_width", 1, 1, maxBeam);
    s.maxNewTokens = r.integer("max_new_tokens", 0, 1, maxLength);
    s.translated = r.boolean("translated", false);
    s.step = r.integer("step", -1, 0, 100000);
    s.view = r.choice("view", "matrix", kViews);
    s.kind = r.choice("kind", "cross", kKinds);
    s.layer = r.integer("layer", 0, 0, kMaxLayers);
    s.head = r.integer("head", -1, -1, kMaxLayers);
    s.fusion = r.choice("fusion", "mean", kFusions);
    s.through = r.choice("through", "layer", kThroughs);
    s.wordLevel = r.boolean("word_level", false);
    s.hideSpecial = r.boolean("hide_special", false);
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

} // namespace

QJsonObject TranslatePage::saveSession() const {
    QJsonObject s;
    saveModelDir(s, m_doc->modelDir(), ModelKind::Marian);
    s.insert("input", m_input->text());
    s.insert("beam_width", m_mode->currentIndex() == 1 ? m_beamWidth->value() : 1);
    s.insert("max_new_tokens", m_maxLength->value());
    const auto snapshot = m_doc->snapshot();
    s.insert("translated", snapshot != nullptr);
    if (snapshot) s.insert("step", snapshot->step);
    s.insert("view", kViews[static_cast<int>(currentView())]);
    s.insert("kind", QString::fromLatin1(attentionKindId(m_doc->kind()).data()));
    s.insert("layer", m_doc->layer());
    s.insert("head", m_doc->head());
    s.insert("fusion", QString::fromLatin1(headFusionName(m_doc->fusion()).data()));
    s.insert("through", kThroughs[static_cast<int>(m_doc->through())]);
    s.insert("word_level", m_doc->wordLevel());
    s.insert("hide_special", m_doc->hideSpecial());
    s.insert("beam_node", m_doc->selectedBeamNode());
    if (const TokenRef t = m_doc->selectedToken(); t.isValid())
        s.insert("selected", QJsonObject{{"side", t.side == TokenSide::Target ? "target" : "source"},
                                         {"index", t.index}});
    QJsonObject ablation;
    for (int k = 0; k < 3; ++k)
        if (const auto heads = m_ablation.heads(k); !heads.empty())
            ablation.insert(kKinds[k], headPairsToJson(heads));
    if (!ablation.isEmpty()) s.insert("ablation", ablation);
    if (m_pinned) {
        QJsonObject pinned = pinnedMapToJson(m_pinned->matrix.values, m_pinned->description);
        pinned.insert("rows", QJsonArray::fromStringList(toQStringList(m_pinned->matrix.rows)));
        pinned.insert("columns", QJsonArray::fromStringList(toQStringList(m_pinned->matrix.columns)));
        s.insert("pinned", pinned);
    }
    return s;
}

QString TranslatePage::checkSession(const QJsonObject& state) const {
    SessionReader r(state, QStringLiteral("pages.translate"));
    (void)parse(state, r, m_beamWidth->maximum(), m_maxLength->maximum());
    return r.error();
}

bool TranslatePage::restoreWantsTranslation() const {
    return restoreState() && restoreState()->value("translated").toBool() &&
           !restoreState()->value("input").toString().trimmed().isEmpty();
}

bool TranslatePage::restoreInputs(const QJsonObject& state) {
    SessionReader r(state, QStringLiteral("pages.translate"));
    const State s = parse(state, r, m_beamWidth->maximum(), m_maxLength->maximum());
    if (!r.ok()) {
        showStatus(r.error(), true);
        return false;
    }
    setPlaying(false);
    m_restoreStepAsked = false;
    m_input->setText(s.input);
    setBeamWidth(s.beamWidth);
    if (s.maxNewTokens > 0) setMaxNewTokens(s.maxNewTokens);
    if (s.pinned)
        m_pinned = Pinned{*s.pinned, s.pinnedDescription};
    else
        m_pinned.reset();
    return true;
}

// The session's model is here: the heads off, then the translation, the step and the view.
void TranslatePage::continueRestore() {
    if (!restoreState()) return;
    if (!m_doc->hasModel()) { // nothing to translate with: the settings and the text are back, nothing more
        endRestore();
        showStatus(tr("Session restored without a model: open one with File → Open model…"), true);
        return;
    }
    applyRestoredAblation();
    if (restoreWantsTranslation())
        translate();
    else
        applyRestoredView();
}

void TranslatePage::applyRestoredAblation() {
    if (!restoreState() || !m_doc->hasModel()) return;
    SessionReader r(*restoreState(), QStringLiteral("pages.translate"));
    const State s = parse(*restoreState(), r, m_beamWidth->maximum(), m_maxLength->maximum());
    MarianAblation ablation;
    try {
        for (int k = 0; k < 3; ++k)
            ablation.setHeads(k, s.ablation[size_t(k)], m_doc->model().model->config());
        m_ablation = ablation;
    } catch (const Error& e) {
        m_ablation = {};
        messageLine()->showError( // the restore goes on
            tr("The session's heads switched off do not fit this model (%1); all heads are on.")
                .arg(QString::fromStdString(e.what())));
    }
}

void TranslatePage::restoreStep() {
    if (!restoreState()) return;
    const auto snapshot = m_doc->snapshot();
    const int target = restoreState()->value("step").toInt(-1);
    if (snapshot && target >= 0 && snapshot->step != target && !m_restoreStepAsked) {
        m_restoreStepAsked = true; // once: a shorter decoding than saved stays where it ends
        goToStep(target);
        return;
    }
    applyRestoredView();
}

void TranslatePage::applyRestoredView() {
    if (!restoreState()) return;
    SessionReader r(*restoreState(), QStringLiteral("pages.translate"));
    const State s = parse(*restoreState(), r, m_beamWidth->maximum(), m_maxLength->maximum());
    endRestore();
    m_doc->setKind(*parseAttentionKind(s.kind.toStdString()));
    m_doc->setLayer(s.layer);
    m_doc->setFusion(*parseHeadFusion(s.fusion.toStdString()));
    m_doc->setHead(s.head);
    if (s.head < 0)
        m_doc->setThrough(static_cast<TranslationDocument::Through>(kThroughs.indexOf(s.through)));
    m_doc->setWordLevel(s.wordLevel);
    m_doc->setHideSpecial(s.hideSpecial);
    m_doc->setSelectedBeamNode(s.beamNode);
    m_doc->setSelectedToken(s.selected.value_or(TokenRef{}));
    syncSelectors();
    refreshDifference();
    showView(*parseView(s.view));
    showStatus(tr("Session restored."));
}

} // namespace attnlens::ui
