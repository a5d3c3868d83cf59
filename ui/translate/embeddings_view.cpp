#include "ui/translate/embeddings_view.h"

#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
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
    const std::array<QString, 3> titles = {tr("Token embedding × scale"), tr("Positional encoding"),
                                           tr("Sum = input to layer 1")};
    // The three maps one under the other, each tall enough for a label per token (the page scrolls
    // for long sentences); titles above the maps, so that they are never clipped to a narrow grid.
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("embeddingScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* maps = new QWidget(scroll);
    auto* mapsLayout = new QVBoxLayout(maps);
    mapsLayout->setContentsMargins(0, 0, 0, 0);
    // Colour ranges are symmetric per map (see refresh()).
    for (int i = 0; i < 3; ++i) {
        auto* title = caption(titles[static_cast<size_t>(i)], maps);
        title->setObjectName(QStringLiteral("embeddingTitle%1").arg(i));
        mapsLayout->addWidget(title);
        auto* v = new HeatmapView(maps);
        v->setObjectName(QStringLiteral("embedding%1").arg(i));
        v->setColorMap(ColorMap::Magma);
        v->setRangeMode(HeatmapView::RangeMode::Fixed);
        v->setAnnotationsEnabled(false);
        v->setAxisTitles(tr("token"), tr("dimension →"));
        v->setMaximumCellSize(28);
        m_views[static_cast<size_t>(i)] = v;
        mapsLayout->addWidget(v, 1);
    }
    scroll->setWidget(maps);
    layout->addWidget(scroll, 1);
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
        for (auto* v : m_views)
            v->setMatrix(RowMatrix::Zero(1, 1));
        return;
    }
    const bool source = m_side->currentIndex() == 0;
    const MarianEmbeddingParts& parts = source ? snap->sourceEmbedding : snap->targetEmbedding;
    const QStringList labels = source ? m_doc->tokens(TokenSide::Source) : snap->targetInputTokens;
    const RowMatrix sum = parts.tokens + parts.positions; // [n, D]
    // A symmetric range per map (0 in the middle of the colour scale): the positional table lies in
    // [-1, 1] while scaled token embeddings are several times larger, so a shared range would hide
    // the positional pattern.
    auto limit = [](const RowMatrix& m) { return std::max(m.cwiseAbs().maxCoeff(), 1e-6f); };
    const std::array<const RowMatrix*, 3> mats = {&parts.tokens, &parts.positions, &sum};
    QStringList dims;
    for (Eigen::Index d = 0; d < parts.tokens.cols(); ++d)
        dims << QString::number(d);
    // Focus: the hovered/selected token's row on this side (target: decoder input index + 1).
    const TokenRef focus = m_doc->focusToken();
    m_lastFocus = focus;
    int row = -1;
    if (focus.isValid() && source && focus.side == TokenSide::Source) row = focus.index;
    if (focus.isValid() && !source && focus.side == TokenSide::Target) row = focus.index + 1;
    for (size_t i = 0; i < 3; ++i) {
        const float lim = limit(*mats[i]);
        m_views[i]->setFixedRange(-lim, lim);
        m_views[i]->setMatrix(*mats[i], labels, dims);
        // A text line per token row (labels at every row), the dimension labels and the colour bar.
        m_views[i]->setMinimumHeight(std::clamp(90 + 16 * static_cast<int>(mats[i]->rows()), 150, 1100));
        if (row >= 0 && row < m_views[i]->rows())
            m_views[i]->selectRow(row);
        else
            m_views[i]->clearSelection();
    }
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
