#include "ui/text/text_candidates.h"

#include "ui/text/text_document.h"

namespace attnlens::ui {

TextCandidatesList::TextCandidatesList(TextDocument* doc, QWidget* parent) : QListWidget(parent), m_doc(doc) {
    setObjectName(QStringLiteral("candidates"));
}

void TextCandidatesList::refresh() {
    clear();
    const auto& run = m_doc->run();
    if (!run) return;
    const auto& folder = *m_doc->model();
    if (folder.decoderOnly()) {
        const int chosen = m_doc->visibleTokens() < static_cast<int>(run->ids.size())
                               ? run->ids[size_t(m_doc->visibleTokens())]
                               : -1;
        for (const TextCandidate& c : m_doc->stepCandidates()) {
            auto* item = new QListWidgetItem(
                QStringLiteral("%1   %2 %")
                    .arg(QString::fromStdString(folder.tokenText(c.id)).replace(' ', QChar(0x2423)),
                         QString::number(100.0 * c.probability, 'f', 1)),
                this);
            if (c.id == chosen) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
        }
    } else {
        for (const auto& [position, top] : run->maskPredictions) {
            auto* header = new QListWidgetItem(tr("[MASK] at %1").arg(position), this);
            QFont bold = header->font();
            bold.setBold(true);
            header->setFont(bold);
            for (const TextCandidate& c : top)
                new QListWidgetItem(QStringLiteral("   %1   %2 %")
                                        .arg(QString::fromStdString(folder.token(c.id)),
                                             QString::number(100.0 * c.probability, 'f', 1)),
                                    this);
        }
        if (run->maskPredictions.empty())
            new QListWidgetItem(folder.hasLmHead()
                                    ? tr("Type [MASK] in the text to see what the model predicts there.")
                                    : tr("This folder has no masked-LM head (a BertModel)."),
                                this);
    }
}

} // namespace attnlens::ui
