#include "ui/text/text_session.h"

#include "ui/shell/session.h"
#include "ui/text/chat_toggle.h"
#include "ui/text/sampling_button.h"
#include "ui/text/text_lenses.h"
#include "ui/text/text_page.h"

#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>

namespace attnlens::ui {

const QStringList TextSession::kViews{"matrix",     "model",      "lines", "heads",
                                      "difference", "embeddings", "lens",  "kv"};

TextSession TextSession::parse(SessionReader& r, int maxNewTokens) {
    TextSession s;
    (void)r.string("model_dir");
    s.input = r.string("input");
    if (r.has("draft")) s.draft = r.string("draft");
    s.newTokens = r.integer("new_tokens", 0, 0, maxNewTokens);
    s.ran = r.boolean("ran", false);
    s.generated = r.integer("generated", -1, 0, 100000);
    s.step = r.integer("step", 0, 0, 100000);
    s.layer = r.integer("layer", 0, 0, 1024);
    s.head = r.integer("head", -1, -1, 1024);
    s.fusion = r.choice("fusion", "mean", {"mean", "max"}) == QLatin1String("max") ? HeadFusion::Max
                                                                                   : HeadFusion::Mean;
    s.view = r.choice("view", "matrix", kViews);
    s.wordLevel = r.boolean("word_level", false);
    s.hideSpecial = r.boolean("hide_special", false);
    s.valueWeighted = r.boolean("value_weighted", false);
    s.offHeads = readHeadPairs(r, "off_heads");
    s.sampling.temperature = static_cast<float>(r.number("temperature", 0.0, 0.0, 5.0));
    s.sampling.topK = r.integer("top_k", 0, 0, 100000);
    s.sampling.topP = static_cast<float>(r.number("top_p", 1.0, 0.01, 1.0));
    s.sampling.seed = static_cast<uint64_t>(r.integer("seed", 0, 0, 2147483647));
    s.chat = r.boolean("chat", false);
    return s;
}

void TextSession::write(QJsonObject& s) const {
    s.insert("input", input);
    if (draft) s.insert("draft", *draft);
    s.insert("new_tokens", newTokens);
    s.insert("ran", ran);
    if (generated >= 0) s.insert("generated", generated);
    s.insert("step", step);
    s.insert("layer", layer);
    s.insert("head", head);
    s.insert("fusion", fusion == HeadFusion::Max ? "max" : "mean");
    s.insert("view", view);
    s.insert("word_level", wordLevel);
    s.insert("value_weighted", valueWeighted);
    s.insert("hide_special", hideSpecial);
    if (!offHeads.empty()) s.insert("off_heads", headPairsToJson(offHeads));
    if (chat) s.insert("chat", true);
    if (!sampling.greedy()) {
        s.insert("temperature", double(sampling.temperature));
        s.insert("top_k", sampling.topK);
        s.insert("top_p", double(sampling.topP));
        s.insert("seed", static_cast<qint64>(sampling.seed));
    }
}

// --- the page's part (TextPage) ---------------------------------------------------------------

QJsonObject TextPage::saveSession() const {
    TextSession t;
    t.input = m_input->text();
    if (m_doc->run() && t.input != m_ranText) t.draft = t.input, t.input = m_ranText; // edited since its run
    t.newTokens = m_newTokens->value();
    t.ran = m_doc->run() != nullptr;
    t.generated = t.ran && m_doc->model()->decoderOnly() ? m_doc->run()->generated() : -1;
    t.step = m_doc->step();
    t.layer = m_doc->layer(), t.head = m_doc->head();
    t.sampling = m_sampling->sampling(), t.chat = m_chat->isChecked();
    t.fusion = m_doc->fusion() == HeadFusion::Max ? HeadFusion::Max : HeadFusion::Mean;
    t.view = TextSession::kViews.value(m_tabs->currentIndex());
    t.wordLevel = m_doc->wordLevel();
    t.valueWeighted = m_valueWeighted->isChecked();
    t.hideSpecial = m_doc->hideSpecial();
    t.offHeads = m_lenses->ablated();
    QJsonObject s = modelSessionState();
    t.write(s);
    return s;
}

QString TextPage::checkSession(const QJsonObject& state) const {
    SessionReader r = sessionReader(state);
    (void)TextSession::parse(r, m_newTokens->maximum());
    return r.error();
}

bool TextPage::restoreInputs(const QJsonObject& state) {
    SessionReader r = sessionReader(state);
    const TextSession t = TextSession::parse(r, m_newTokens->maximum());
    if (!r.ok()) return false;
    setPlaying(false);
    m_input->setText(t.input);
    m_newTokens->setValue(state.contains("new_tokens") ? t.newTokens : m_newTokens->value());
    m_sampling->setSampling(t.sampling);
    m_doc->setWordLevel(t.wordLevel), m_doc->setHideSpecial(t.hideSpecial);
    m_valueWeighted->setChecked(t.valueWeighted);
    m_tabs->setCurrentIndex(std::max(0, static_cast<int>(TextSession::kViews.indexOf(t.view))));
    return true;
}

// The model is the session's: its layer and head, then the run (whose result sets the step) or nothing more.
void TextPage::continueRestore() {
    if (!restoreState()) return;
    SessionReader r = sessionReader(*restoreState());
    const TextSession t = TextSession::parse(r, m_newTokens->maximum());
    m_chat->setChecked(t.chat &&
                       m_chat->isEnabled()); // after the model: a folder without a template unticks it
    m_doc->setLayer(t.layer);
    m_doc->setFusion(t.fusion);
    m_doc->setHead(t.head);
    HeadList off;
    for (const auto& [l, h] : t.offHeads) // heads the model has
        if (l < m_doc->model()->layers() && h < m_doc->model()->heads()) off.emplace_back(l, h);
    {
        const QSignalBlocker quiet(m_lenses); // the run below is the session's
        m_lenses->setAblated(std::move(off));
    }
    if (t.ran && !m_input->text().trimmed().isEmpty())
        runText(); // its result ends the restore
    else
        finishRestore();
}

// The restore ends; what was typed after the run it saved goes back into the text box.
void TextPage::finishRestore() {
    SessionReader r = sessionReader(*restoreState());
    const TextSession t = TextSession::parse(r, m_newTokens->maximum());
    endRestore();
    if (t.draft) m_input->setText(*t.draft);
}

} // namespace attnlens::ui
