#include "ui/text/text_embeddings_view.h"

#include "core/models/text_folder.h"
#include "ui/text/text_document.h"
#include "ui/widgets/embedding_maps.h"
#include "ui/widgets/page_parts.h"

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace attnlens::ui {

TextEmbeddingsView::TextEmbeddingsView(TextDocument* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_info(new QLabel(this)),
      m_maps(new EmbeddingMaps({tr("Token embedding"), tr("Position embedding"), tr("Input to layer 0")},
                               this)) {
    setObjectName(QStringLiteral("textEmbeddings"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    mute(m_info);
    m_info->setWordWrap(true);
    layout->addWidget(m_info);
    layout->addWidget(m_maps, 1);
    for (auto signal : {&TextDocument::runChanged, &TextDocument::modelChanged,
                        &TextDocument::selectionChanged, &TextDocument::hoverChanged})
        connect(m_doc, signal, this, &TextEmbeddingsView::refresh);
}

void TextEmbeddingsView::showEvent(QShowEvent*) {
    if (m_dirty) refresh();
}

void TextEmbeddingsView::refresh() {
    if (!isVisible()) {
        m_dirty = true;
        return;
    }
    m_dirty = false;
    const auto& run = m_doc->run();
    if (!run || !m_doc->model()) {
        m_info->setText(tr("Run a text to see its embeddings."));
        m_maps->clear();
        return;
    }
    const int n = std::min(m_doc->visibleTokens(), static_cast<int>(run->ids.size()));
    const std::vector<int> ids(run->ids.begin(), run->ids.begin() + n);
    const TextEmbeddingParts parts = m_doc->model()->model->embeddingParts(ids);
    QStringList labels;
    for (int i = 0; i < n; ++i)
        labels << QString::fromStdString(run->texts[size_t(i)])
                      .replace(' ', QChar(0x2423)); // as the matrix shows
    // The focus is a row of the views; those rows are tokens unless words are merged or tokens hidden.
    const bool rowsAreTokens = !m_doc->wordLevel() && !m_doc->hideSpecial();
    m_maps->setParts({&parts.tokens, &parts.positions, &parts.input}, labels,
                     rowsAreTokens ? m_doc->focusToken() : -1);
    const bool bert = !m_doc->model()->decoderOnly();
    m_info->setText(
        tr("%1 tokens × d_model %2. Each position has a learned row of its own%3, so what layer 0 "
           "receives tells the layers where each token stands.")
            .arg(n)
            .arg(parts.tokens.cols())
            .arg(bert ? tr(" (with token type 0's; the sum then goes through LayerNorm)") : QString()));
}

} // namespace attnlens::ui
