#include "ui/translate/embeddings_view.h"

#include "ui/widgets/embedding_maps.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

namespace attnlens::ui {

EmbeddingsView::EmbeddingsView(TranslationDocument* document, QWidget* parent)
    : QWidget(parent), m_doc(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* top = new QHBoxLayout;
    m_side = new QComboBox(this);
    m_side->setObjectName(QStringLiteral("embeddingSide"));
    m_side->addItem(tr("Source (encoder input)"));
    m_side->addItem(tr("Target (decoder input)"));
    top->addWidget(m_side);
    m_info = new QLabel(this);
    mute(m_info);
    m_info->setWordWrap(true);
    top->addWidget(m_info, 1);
    layout->addLayout(top);
    m_maps = new EmbeddingMaps(
        {tr("Token embedding × scale"), tr("Positional encoding"), tr("Sum = input to layer 1")}, this);
    layout->addWidget(m_maps, 1);
    connect(m_side, &QComboBox::currentIndexChanged, this, &EmbeddingsView::refresh);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &EmbeddingsView::refresh);
    // Only the focus token matters here (its row is highlighted), not kind / layer / head.
    connect(m_doc, &TranslationDocument::selectionChanged, this, [this] {
        if (m_doc->focusToken() != m_lastFocus) refresh();
    });
    connect(m_doc, &TranslationDocument::hoverChanged, this, [this] {
        if (m_doc->focusToken() != m_lastFocus) refresh();
    });
    refresh();
}

HeatmapView* EmbeddingsView::view(Part part) const {
    return m_maps->view(part);
}

void EmbeddingsView::setSide(TokenSide side) {
    m_side->setCurrentIndex(side == TokenSide::Source ? 0 : 1);
}

void EmbeddingsView::showEvent(QShowEvent*) {
    if (m_dirty) refresh();
}

void EmbeddingsView::refresh() {
    if (!isVisible()) {
        m_dirty = true;
        return;
    }
    m_dirty = false;
    const auto snap = m_doc->snapshot();
    if (!snap) {
        m_info->setText(tr("Translate a sentence to see its embeddings."));
        m_maps->clear();
        return;
    }
    const bool source = m_side->currentIndex() == 0;
    const MarianEmbeddingParts& parts = source ? snap->sourceEmbedding : snap->targetEmbedding;
    const QStringList labels = source ? m_doc->tokens(TokenSide::Source) : snap->targetInputTokens;
    const RowMatrix sum = parts.tokens + parts.positions; // [n, D]
    auto limit = [](const RowMatrix& m) { return std::max(m.cwiseAbs().maxCoeff(), 1e-6f); };
    // Focus: the hovered/selected token's row on this side (target: decoder input index + 1).
    const TokenRef focus = m_doc->focusToken();
    m_lastFocus = focus;
    int row = -1;
    if (focus.isValid() && source && focus.side == TokenSide::Source) row = focus.index;
    if (focus.isValid() && !source && focus.side == TokenSide::Target) row = focus.index + 1;
    m_maps->setParts({&parts.tokens, &parts.positions, &sum}, labels, row);
    const float scale = m_doc->hasModel() ? m_doc->model().model->embedScale() : 1.0f;
    m_info->setText(
        tr("%1 tokens × d_model %2; embed scale %3 (token rows ±%4, positions ±%5). Each row of the "
           "positional encoding is unique, so the sum tells the layers where each token stands.")
            .arg(parts.tokens.rows())
            .arg(parts.tokens.cols())
            .arg(double(scale), 0, 'g', 4)
            .arg(double(limit(parts.tokens)), 0, 'f', 2)
            .arg(double(limit(parts.positions)), 0, 'f', 2));
}

} // namespace attnlens::ui
