#include "ui/text/text_candidates.h"

#include "ui/text/text_document.h"
#include "ui/widgets/candidate_bars.h"

#include <QListWidget>
#include <QVBoxLayout>

#include <cmath>

namespace attnlens::ui {

TextCandidates::TextCandidates(TextDocument* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_bars(new CandidateBars(this)), m_list(new QListWidget(this)) {
    m_list->setObjectName(QStringLiteral("candidates"));
    m_bars->setMinimumWidth(220); // room for the bars beside the tokens and percentages
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_bars);
    layout->addWidget(m_list, 1);
    layout->addStretch(0);
    m_list->hide();
}

void TextCandidates::clear() {
    m_bars->setCandidates({}, -1);
    m_list->clear();
}

void TextCandidates::refresh() {
    clear();
    const auto& run = m_doc->run();
    const bool decoder = m_doc->model() && m_doc->model()->decoderOnly();
    m_bars->setVisible(decoder || !m_doc->model());
    m_list->setVisible(!m_bars->isVisibleTo(this));
    if (!run) return;
    if (!decoder) return refreshMasks();
    const auto& folder = *m_doc->model();
    const int chosen = m_doc->visibleTokens() < static_cast<int>(run->ids.size())
                           ? run->ids[size_t(m_doc->visibleTokens())]
                           : -1;
    std::vector<TokenCandidate> bars;
    for (const TextCandidate& c : m_doc->stepCandidates()) {
        // A leading space shows as ␣: " the" and "the" are different tokens.
        const QString text = QString::fromStdString(folder.tokenText(c.id)).replace(' ', QChar(0x2423));
        bars.push_back({c.id, text.toStdString(), std::log(std::max(c.probability, 1e-30f)), c.probability});
    }
    m_bars->setCandidates(std::move(bars), chosen);
}

void TextCandidates::refreshMasks() {
    const auto& run = m_doc->run();
    const auto& folder = *m_doc->model();
    for (const auto& [position, top] : run->maskPredictions) {
        auto* header = new QListWidgetItem(tr("[MASK] at %1").arg(position), m_list);
        QFont bold = header->font();
        bold.setBold(true);
        header->setFont(bold);
        for (const TextCandidate& c : top)
            new QListWidgetItem(QStringLiteral("   %1   %2 %")
                                    .arg(QString::fromStdString(folder.token(c.id)),
                                         QString::number(100.0 * c.probability, 'f', 1)),
                                m_list);
    }
    if (run->maskPredictions.empty())
        new QListWidgetItem(folder.hasLmHead()
                                ? tr("Type [MASK] in the text to see what the model predicts there.")
                                : tr("This folder has no masked-LM head (a BertModel)."),
                            m_list);
}

} // namespace attnlens::ui
