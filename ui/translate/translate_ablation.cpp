// The Translate page's head ablation (issue 21): heads switched off from the Heads tab, the comparison with the
// plain model, and ranking the heads of one kind by how much the translation leans on each.
#include "ui/translate/translate_page.h"

#include "core/analysis/head_importance.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/heads_lens.h"

#include <QLabel>
#include <QLineEdit>
#include <QPalette>

namespace attnlens::ui {

void TranslatePage::setAblation(MarianAblation ablation) {
    m_ablation = std::move(ablation);
    m_baselineTranslation.clear();
    refreshHeads();
    if (m_doc->hasModel() && !m_input->text().trimmed().isEmpty()) translate();
}

void TranslatePage::refreshTranslationLabel() {
    const auto t = m_doc->trace();
    if (!t) {
        m_translation->setText(QString());
        return;
    }
    QString text = tr("<span style='color:%3'>translation:</span> <b>%1</b>%2")
                       .arg(QString::fromStdString(t->translation).toHtmlEscaped(),
                            m_doc->selectedBeamNode() > 0 ? tr(" (beam node %1)").arg(m_doc->selectedBeamNode()) : QString(),
                            palette().color(QPalette::PlaceholderText).name());
    if (m_ablation.any()) {
        const int n = m_ablation.count();
        text += (n == 1 ? tr(" — <b>1 head off</b>") : tr(" — <b>%1 heads off</b>").arg(n));
        if (!m_baselineTranslation.isEmpty())
            text += tr("; with all heads: <i>%1</i>").arg(m_baselineTranslation.toHtmlEscaped());
    }
    m_translation->setText(text);
}

void TranslatePage::compareWithAllHeads() {
    const MarianFolder model = m_doc->model();
    const auto trace = m_doc->trace();
    if (!trace || !model.model) return;
    DecodeOptions options;
    options.numBeams = m_doc->snapshot() && m_doc->snapshot()->numBeams > 1 ? m_doc->snapshot()->numBeams : 1;
    options.maxNewTokens = m_doc->snapshot() ? m_doc->snapshot()->maxNewTokens : 64;
    options.captureAttention = false;
    m_worker->run<std::string>(
        tr("Translating with all heads"),
        [model, options, text = trace->source](const Callbacks& cb) {
            DecodeSession plain(model.model, model.tokenizer, text, options);
            plain.run(cb);
            return plain.trace()->translation;
        },
        [this](std::string translation) {
            m_baselineTranslation = QString::fromStdString(translation);
            refreshTranslationLabel();
        });
}

void TranslatePage::rankHeadsByImportance() {
    const MarianFolder model = m_doc->model();
    const auto trace = m_doc->trace();
    if (!trace || !model.model) return;
    const AttentionKind kind = m_doc->kind();
    m_worker->run<RowMatrix>(
        tr("Ranking heads"),
        [model, trace, kind](const Callbacks& cb) {
            return marianHeadImportance(*model.model, trace->sourceIds, trace->targetIds, static_cast<int>(kind), cb);
        },
        [this, kind, trace](RowMatrix drop) {
            if (m_doc->kind() != kind || m_doc->trace() != trace) return; // the user moved on
            m_rankedFor = trace.get();
            m_rankedKind = kind;
            m_headsView->setImportance(
                drop, tr("Importance: how much the log-probability of the translation on screen drops when the head "
                         "alone is switched off (teacher-forced over its tokens). Large = the translation leans on "
                         "this head."));
        });
}

} // namespace attnlens::ui
