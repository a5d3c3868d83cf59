// The Translate page's head ablation (issue 21): heads switched off from the Heads tab, the comparison with
// the plain model, and ranking the heads of one kind by how much the translation leans on each.
#include "core/analysis/ablation_change.h"
#include "core/analysis/head_importance.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/heads_lens.h"

#include <QLabel>
#include <QLineEdit>
#include <QPalette>

namespace attnlens::ui {

struct TranslatePage::AblationComparison {
    std::string translation; // the plain model's
    std::vector<int> plainIds;
    AblationChange change; // against the ablated trace on screen
};

QString TranslatePage::ablationDetails() const {
    return m_translation->toolTip();
}

void TranslatePage::setAblation(MarianAblation ablation) {
    m_ablation = std::move(ablation);
    m_baselineTranslation.clear();
    m_ablationChange.reset();
    refreshHeads();
    if (m_doc->hasModel() && !m_input->text().trimmed().isEmpty()) translate();
}

void TranslatePage::refreshTranslationLabel() {
    const auto t = m_doc->trace();
    if (!t) {
        m_translation->setText(QString());
        return;
    }
    QString text =
        tr("<span style='color:%3'>translation:</span> <b>%1</b>%2")
            .arg(QString::fromStdString(t->translation).toHtmlEscaped(),
                 m_doc->selectedBeamNode() > 0 ? tr(" (beam node %1)").arg(m_doc->selectedBeamNode())
                                               : QString(),
                 palette().color(QPalette::PlaceholderText).name());
    QString tip;
    if (m_ablation.any()) {
        const int n = m_ablation.count();
        text += (n == 1 ? tr(" — <b>1 head off</b>") : tr(" — <b>%1 heads off</b>").arg(n));
        if (!m_baselineTranslation.isEmpty())
            text += tr("; with all heads: <i>%1</i>").arg(m_baselineTranslation.toHtmlEscaped());
        if (const auto& c = m_ablationChange; c && c->change.position >= 0) {
            const auto piece = [this](int id) {
                return QString::fromStdString(m_doc->model().tokenizer->idToPiece(id)).toHtmlEscaped();
            };
            const size_t at = static_cast<size_t>(c->change.position);
            const QString token = piece(c->plainIds[at]);
            text += c->change.partsAt >= 0
                        ? tr(" · the tokens part at target position %1: p(<b>%2</b>) %3 → <b>%4</b>")
                        : tr(" · same tokens; the largest drop at target position %1: p(<b>%2</b>) %3 → "
                             "<b>%4</b>");
            text = text.arg(c->change.position)
                       .arg(token)
                       .arg(c->change.plainProbability[at], 0, 'f', 3)
                       .arg(c->change.ablatedProbability[at], 0, 'f', 3);
            const auto list = [&piece](const std::vector<TokenChoice>& top) {
                QStringList items;
                for (const TokenChoice& choice : top)
                    items << QStringLiteral("%1 %2").arg(piece(choice.id)).arg(choice.probability, 0, 'f', 3);
                return items.join(QStringLiteral(", "));
            };
            tip = tr("At target position %1 (teacher-forced over the plain translation):<br>top 5 with all "
                     "heads: %2<br>"
                     "top 5 with the heads off: %3")
                      .arg(c->change.position)
                      .arg(list(c->change.topPlain), list(c->change.topAblated));
        }
    }
    m_translation->setText(text);
    m_translation->setToolTip(tip);
}

void TranslatePage::compareWithAllHeads() {
    const MarianFolder model = m_doc->model();
    const auto trace = m_doc->trace();
    if (!trace || !model.model) return;
    DecodeOptions options;
    options.numBeams = m_doc->snapshot() && m_doc->snapshot()->numBeams > 1 ? m_doc->snapshot()->numBeams : 1;
    options.maxNewTokens = m_doc->snapshot() ? m_doc->snapshot()->maxNewTokens : 64;
    options.captureAttention = false;
    m_ablationChange.reset();
    worker()->run<std::shared_ptr<const AblationComparison>>(
        tr("Translating with all heads"),
        [model, options, trace, ablation = m_ablation](const Callbacks& cb) {
            DecodeSession plain(model.model, model.tokenizer, trace->source, options);
            plain.run(cb);
            auto out = std::make_shared<AblationComparison>();
            out->translation = plain.trace()->translation;
            out->plainIds = plain.trace()->targetIds;
            if (!out->plainIds.empty())
                out->change = marianAblationChange(*model.model, trace->sourceIds, out->plainIds,
                                                   trace->targetIds, ablation);
            return std::shared_ptr<const AblationComparison>(std::move(out));
        },
        [this, trace](std::shared_ptr<const AblationComparison> comparison) {
            m_baselineTranslation = QString::fromStdString(comparison->translation);
            if (m_doc->trace() == trace) m_ablationChange = std::move(comparison);
            refreshTranslationLabel();
        });
}

void TranslatePage::rankHeadsByImportance() {
    const MarianFolder model = m_doc->model();
    const auto trace = m_doc->trace();
    if (!trace || !model.model) return;
    const AttentionKind kind = m_doc->kind();
    worker()->run<RowMatrix>(
        tr("Ranking heads"),
        [model, trace, kind](const Callbacks& cb) {
            return marianHeadImportance(*model.model, trace->sourceIds, trace->targetIds,
                                        static_cast<int>(kind), cb);
        },
        [this, kind, trace](RowMatrix drop) {
            if (m_doc->kind() != kind || m_doc->trace() != trace) return; // the user moved on
            m_rankedFor = trace.get();
            m_rankedKind = kind;
            m_headsView->setImportance(
                drop,
                tr("Importance: how much the log-probability of the translation on screen drops when the "
                   "head "
                   "alone is switched off (teacher-forced over its tokens). Large = the translation leans on "
                   "this head."));
        });
}

} // namespace attnlens::ui
