#include "ui/translate/matrix_view.h"

#include "ui/render/trace_heatmap.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace attnlens::ui {

AttentionMatrixView::AttentionMatrixView(TranslationDocument* document, QWidget* parent)
    : QWidget(parent), m_doc(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* titleRow = new QHBoxLayout;
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("matrixTitle"));
    m_title->setTextFormat(Qt::RichText);
    titleRow->addWidget(m_title, 1);
    layout->addLayout(titleRow);
    m_stack = new QStackedWidget(this);
    m_placeholder = new QLabel(m_stack);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setStyleSheet(QStringLiteral("font-size: 11pt;"));
    mute(m_placeholder);
    m_heatmap = new HeatmapView(m_stack);
    m_heatmap->setObjectName(QStringLiteral("attentionMatrix"));
    m_heatmap->setColorMap(ColorMap::Viridis);
    m_heatmap->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_heatmap->setFixedRange(0.0f, 1.0f);
    m_heatmap->setMaximumCellSize(56);
    m_heatmap->setDimUnselected(true);
    titleRow->addWidget(zoomButtons(
        this, QStringLiteral("matrixZoom"), [this] { m_heatmap->zoomOut(); }, [this] { m_heatmap->zoomIn(); },
        [this] { m_heatmap->fitToView(); }));
    m_stack->addWidget(m_placeholder);
    m_stack->addWidget(m_heatmap);
    layout->addWidget(m_stack, 1);

    connect(m_heatmap, &HeatmapView::rowSelected, this,
            [this](int row) { m_doc->setSelectedToken(m_matrix.tokenOfRow(row)); });
    connect(m_heatmap, &HeatmapView::columnSelected, this,
            [this](int col) { m_doc->setSelectedToken(m_matrix.tokenOfColumn(col)); });
    connect(m_heatmap, &HeatmapView::cellClicked, this,
            [this](int row, int) { m_doc->setSelectedToken(m_matrix.tokenOfRow(row)); });
    // Hovering a cell focuses its query token in every view (as hovering a chip does); leaving
    // the grid gives the focus back to the selection.
    connect(m_heatmap, &HeatmapView::cellHovered, this, [this](int row, int) {
        m_doc->setHoveredToken(row >= 0 ? m_matrix.tokenOfRow(row) : TokenRef{});
    });
    connect(m_doc, &TranslationDocument::selectionChanged, this, &AttentionMatrixView::refresh);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &AttentionMatrixView::refresh);
    connect(m_doc, &TranslationDocument::hoverChanged, this, &AttentionMatrixView::applyFocus);
    refresh();
}

QString AttentionMatrixView::title() const {
    if (m_doc->showsThrough())
        return tr("<b>%1</b> · %2 through layers 0–%3 · heads averaged, residual added")
            .arg(attentionKindName(m_doc->kind()), m_doc->through() == TranslationDocument::Through::Rollout
                                                       ? tr("rollout")
                                                       : tr("attention flow"))
            .arg(m_doc->layer());
    const QString head =
        m_doc->head() >= 0
            ? tr("head %1").arg(m_doc->head())
            : tr("%1 over heads").arg(m_doc->fusion() == HeadFusion::Max ? tr("max") : tr("mean"));
    return tr("<b>%1</b> · layer %2 · %3")
        .arg(attentionKindName(m_doc->kind()))
        .arg(m_doc->layer())
        .arg(head);
}

void AttentionMatrixView::refresh() {
    m_matrix = m_doc->currentMatrix();
    m_title->setText(
        title() + (m_doc->valueWeighted() && !m_doc->showsThrough() ? tr(" · value-weighted") : QString()) +
        (m_doc->wordLevel() ? tr(" · words") : QString()) +
        (m_doc->hideSpecial() ? tr(" · special tokens hidden") : QString()));
    if (m_matrix.empty()) {
        m_placeholder->setText(!m_doc->hasModel() ? tr("Open a Marian model (File → Open model…).")
                               : !m_doc->trace()  ? tr("Type a German sentence and press Translate.")
                               : m_doc->flowPending()
                                   ? tr("Computing the attention flow…")
                                   : tr("No target token yet: step forward to generate one."));
        m_stack->setCurrentWidget(m_placeholder);
        return;
    }
    m_heatmap->setAxisTitles(traceAxisTitle(m_doc->kind(), true), traceAxisTitle(m_doc->kind(), false));
    m_heatmap->setMatrix(m_matrix.values, m_matrix.rowLabels, m_matrix.columnLabels);
    m_stack->setCurrentWidget(m_heatmap);
    applyFocus();
}

void AttentionMatrixView::applyFocus() {
    if (m_matrix.empty()) return;
    const TokenRef focus = m_doc->focusToken();
    if (const int row = m_matrix.rowOf(focus); row >= 0)
        m_heatmap->selectRow(row);
    else if (const int col = m_matrix.columnOf(focus); col >= 0)
        m_heatmap->selectColumn(col);
    else
        m_heatmap->clearSelection();
}

} // namespace attnlens::ui
