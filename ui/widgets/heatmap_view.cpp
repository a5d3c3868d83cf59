#include "ui/widgets/heatmap_view.h"

#include "ui/widgets/heatmap_find.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace attnlens::ui {

namespace {

constexpr int kMaxZoomCell = 128;
// Zoom steps (cell edge in px) for zoomIn/zoomOut and Ctrl+wheel.
constexpr std::array<int, 20> kZoomSteps = {1,  2,  3,  4,  5,  6,  8,  10, 12, 14,
                                            16, 20, 24, 28, 32, 40, 48, 64, 96, 128};

} // namespace

HeatmapView::HeatmapView(QWidget* parent) : QAbstractScrollArea(parent) {
    setFrameShape(QFrame::NoFrame);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

HeatmapView::~HeatmapView() = default;

// --- data ------------------------------------------------------------------------------------

// After values or mask changed: range, image and measurements follow; geometry when the shape did.
void HeatmapView::dataChanged(bool reshaped) {
    m_metrics.reset();
    updateRange();
    invalidateImage();
    if (reshaped) {
        updateGeometry();
        updateScrollBars();
    }
    viewport()->update();
}

void HeatmapView::labelsChanged() {
    m_metrics.reset();
    updateGeometry();
    viewport()->update();
}

void HeatmapView::setMatrix(RowMatrix&& values) {
    HeatmapScene& s = m_scene;
    const bool reshaped = values.rows() != s.values.rows() || values.cols() != s.values.cols();
    s.values = std::move(values);
    if (s.rowLabels.size() != rows()) s.rowLabels.clear();
    if (s.columnLabels.size() != columns()) s.columnLabels.clear();
    if (s.hasMask() && (s.mask.rows() != s.values.rows() || s.mask.cols() != s.values.cols()))
        s.mask.resize(0, 0);
    if (s.selectedRow >= rows()) s.selectedRow = -1;
    if (s.selectedColumn >= columns()) s.selectedColumn = -1;
    if (s.marked.row >= rows() || s.marked.col >= columns()) s.marked = {};
    if (s.hovered.row >= rows() || s.hovered.col >= columns()) s.hovered = {};
    dataChanged(reshaped);
}

void HeatmapView::setMatrix(RowMatrix values, const QStringList& rowLabels, const QStringList& columnLabels) {
    m_scene.rowLabels = rowLabels;
    m_scene.columnLabels = columnLabels;
    setMatrix(std::move(values));
}

void HeatmapView::setColouredMatrix(HeatmapScene coloured) {
    const bool recolour =
        coloured.colorMap != m_scene.colorMap || coloured.image.isNull() || !(coloured.hi > coloured.lo);
    m_scene.rowLabels = std::move(coloured.rowLabels);
    m_scene.columnLabels = std::move(coloured.columnLabels);
    m_scene.mask = std::move(coloured.mask);
    m_scene.scale = coloured.scale;
    m_scene.image = std::move(coloured.image);
    m_scene.overview = std::move(coloured.overview);
    m_scene.sinks = std::move(coloured.sinks);
    m_rangeMode = RangeMode::Fixed;
    m_fixedLo = coloured.lo;
    m_fixedHi = coloured.hi;
    setMatrix(std::move(coloured.values)); // labels, mask and range kept, the image marked stale
    m_imageStale = recolour;
}

void HeatmapView::setRowLabels(const QStringList& labels) {
    m_scene.rowLabels = labels.size() == rows() ? labels : QStringList();
    labelsChanged();
}

void HeatmapView::setColumnLabels(const QStringList& labels) {
    m_scene.columnLabels = labels.size() == columns() ? labels : QStringList();
    labelsChanged();
}

void HeatmapView::setAxisTitles(const QString& rowTitle, const QString& columnTitle) {
    m_scene.rowTitle = rowTitle;
    m_scene.columnTitle = columnTitle;
    updateGeometry();
    viewport()->update();
}

void HeatmapView::setMask(const RowMatrix& keep) {
    if (keep.rows() != m_scene.values.rows() || keep.cols() != m_scene.values.cols()) {
        clearMask();
        return;
    }
    m_scene.mask = keep;
    dataChanged(false);
}

void HeatmapView::clearMask() {
    if (!m_scene.hasMask()) return;
    m_scene.mask.resize(0, 0);
    dataChanged(false);
}

void HeatmapView::setMaskedText(const QString& text) {
    m_scene.maskedText = text;
    m_metrics.reset();
    viewport()->update();
}

// --- colours ---------------------------------------------------------------------------------

void HeatmapView::setColorMap(ColorMap map) {
    if (map == m_scene.colorMap) return;
    m_scene.colorMap = map;
    invalidateImage();
    viewport()->update();
}

void HeatmapView::setRangeMode(RangeMode mode) {
    m_rangeMode = mode;
    dataChanged(false);
}

void HeatmapView::setColorScale(ColorScale scale) {
    if (scale == m_scene.scale) return;
    m_scene.scale = scale;
    dataChanged(false);
}

void HeatmapView::setFixedRange(float lo, float hi) {
    m_fixedLo = lo;
    m_fixedHi = hi > lo ? hi : lo + 1.0f;
    updateRange();
    invalidateImage();
    viewport()->update();
}

void HeatmapView::updateRange() {
    std::tie(m_scene.lo, m_scene.hi) =
        m_rangeMode == RangeMode::Fixed ? std::pair(m_fixedLo, m_fixedHi) : m_scene.autoRange();
}

// --- look ------------------------------------------------------------------------------------

HeatmapStyle HeatmapView::style() const {
    return heatmapStyle(palette(), font());
}

const HeatmapMetrics& HeatmapView::metrics() const {
    if (m_metrics) return *m_metrics;
    MeasuredLabels& l = m_measured;
    if (l.rowCount == rows() && l.columnCount == columns() && l.font == font() &&
        l.rows == m_scene.rowLabels && l.columns == m_scene.columnLabels) {
        m_metrics = HeatmapMetrics{l.rowWidth, l.columnWidth, heatmapAnnotationSamples(m_scene)};
        return *m_metrics;
    }
    m_metrics = measureHeatmap(m_scene, font());
    l = {m_scene.rowLabels,        m_scene.columnLabels,       rows(), columns(), font(),
         m_metrics->rowLabelWidth, m_metrics->columnLabelWidth};
    return *m_metrics;
}

void HeatmapView::setAnnotationsEnabled(bool enabled) {
    m_scene.annotate = enabled;
    viewport()->update();
}

bool HeatmapView::annotationsVisible() const {
    return currentLayout().annotate;
}

void HeatmapView::setValueDecimals(int decimals) {
    m_scene.decimals = std::clamp(decimals, 0, 8);
    m_metrics.reset();
    viewport()->update();
}

void HeatmapView::setColorBarVisible(bool visible) {
    m_scene.colorBar = visible;
    updateGeometry();
    updateScrollBars();
    viewport()->update();
}

void HeatmapView::setLabelsVisible(bool visible) {
    m_scene.labels = visible;
    updateGeometry();
    updateScrollBars();
    viewport()->update();
}

void HeatmapView::setMaximumCellSize(int px) {
    m_maxCell = std::max(kHeatmapMinCell, px);
    updateGeometry();
    viewport()->update();
}

void HeatmapView::setPreferredCellSize(int px) {
    m_preferredCell = std::max(kHeatmapMinCell, px);
    updateGeometry();
}

bool HeatmapView::colorBarBelow() const {
    return currentLayout().barBelow;
}

void HeatmapView::setColorBarPlacement(HeatmapFrame::Bar placement) {
    if (placement == m_barPlacement) return;
    m_barPlacement = placement;
    updateGeometry();
    updateScrollBars();
    viewport()->update();
}

void HeatmapView::setMaximumCellAspect(double ratio) {
    m_maxAspect = std::max(1.0, ratio);
    viewport()->update();
}

void HeatmapView::setDimUnselected(bool dim) {
    m_scene.dimUnselected = dim;
    viewport()->update();
}

// --- zoom ------------------------------------------------------------------------------------

void HeatmapView::setZoomMode(ZoomMode mode) {
    if (mode == m_zoomMode) return;
    if (mode == ZoomMode::Fixed) m_fixedCell = cellSize();
    m_zoomMode = mode;
    updateScrollBars();
    viewport()->update();
    emit zoomChanged(cellSize());
}

void HeatmapView::setCellSize(int px) {
    m_fixedCell = std::clamp(px, kHeatmapMinCell, kMaxZoomCell);
    m_zoomMode = ZoomMode::Fixed;
    updateScrollBars();
    viewport()->update();
    emit zoomChanged(m_fixedCell);
}

int HeatmapView::cellSize() const {
    return currentLayout().cell;
}

void HeatmapView::zoomIn() {
    zoomAround(-1, viewport()->rect().center());
}
void HeatmapView::zoomOut() {
    zoomAround(-2, viewport()->rect().center());
}

void HeatmapView::fitToView() {
    setZoomMode(ZoomMode::Fit);
}

// newCell: a cell size, or -1 / -2 for the next zoom step up / down from the current size.
void HeatmapView::zoomAround(int newCell, QPoint anchor) {
    const HeatmapLayout before = currentLayout();
    if (newCell == -1) {
        const auto it = std::upper_bound(kZoomSteps.begin(), kZoomSteps.end(), before.cell);
        newCell = it == kZoomSteps.end() ? kZoomSteps.back() : *it;
    } else if (newCell == -2) {
        auto it = std::lower_bound(kZoomSteps.begin(), kZoomSteps.end(), before.cell);
        newCell = it == kZoomSteps.begin() ? kZoomSteps.front() : *std::prev(it);
    }
    if (newCell == before.cell && m_zoomMode == ZoomMode::Fixed) return;
    // Keep the matrix point under `anchor` in place.
    const double fx = (anchor.x() - before.origin.x()) / static_cast<double>(before.cw);
    const double fy = (anchor.y() - before.origin.y()) / static_cast<double>(before.ch);
    m_zoomMode = ZoomMode::Fixed;
    m_fixedCell = std::clamp(newCell, kHeatmapMinCell, kMaxZoomCell);
    updateScrollBars();
    const HeatmapLayout after = layoutFor(viewport()->size(), m_fixedCell, QPoint());
    horizontalScrollBar()->setValue(
        static_cast<int>(std::lround(after.origin.x() + fx * m_fixedCell - anchor.x())));
    verticalScrollBar()->setValue(
        static_cast<int>(std::lround(after.origin.y() + fy * m_fixedCell - anchor.y())));
    viewport()->update();
    emit zoomChanged(m_fixedCell);
}

void HeatmapView::updateScrollBars() {
    // Fit mode scrolls too when even 1 px cells overflow the pane (over ~500 rows).
    const HeatmapLayout l =
        layoutFor(viewport()->size(), m_zoomMode == ZoomMode::Fixed ? m_fixedCell : 0, QPoint());
    const int contentW = columns() * l.cw, contentH = rows() * l.ch;
    const bool overflow = contentW > l.available.width() || contentH > l.available.height();
    if (m_scene.empty() || (m_zoomMode == ZoomMode::Fit && !overflow)) {
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        horizontalScrollBar()->setRange(0, 0);
        verticalScrollBar()->setRange(0, 0);
        return;
    }
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    horizontalScrollBar()->setRange(0, std::max(0, contentW - l.available.width()));
    verticalScrollBar()->setRange(0, std::max(0, contentH - l.available.height()));
    horizontalScrollBar()->setPageStep(std::max(1, l.available.width()));
    verticalScrollBar()->setPageStep(std::max(1, l.available.height()));
    horizontalScrollBar()->setSingleStep(std::max(1, l.cw));
    verticalScrollBar()->setSingleStep(std::max(1, l.ch));
}

// --- selection -------------------------------------------------------------------------------

void HeatmapView::selectRow(int row) {
    m_scene.selectedRow = row >= 0 && row < rows() ? row : -1;
    m_scene.selectedColumn = -1;
    viewport()->update();
}

void HeatmapView::selectColumn(int col) {
    m_scene.selectedColumn = col >= 0 && col < columns() ? col : -1;
    m_scene.selectedRow = -1;
    viewport()->update();
}

void HeatmapView::clearSelection() {
    m_scene.selectedRow = m_scene.selectedColumn = -1;
    viewport()->update();
}

void HeatmapView::setMarkedCell(HeatmapCell cell) {
    m_scene.marked =
        cell.row >= 0 && cell.row < rows() && cell.col >= 0 && cell.col < columns() ? cell : HeatmapCell{};
    viewport()->update();
}

void HeatmapView::setSinkColumns(std::vector<KeyShare> sinks) {
    m_scene.sinks = std::move(sinks);
    viewport()->update();
}

// --- layout ----------------------------------------------------------------------------------

HeatmapLayout HeatmapView::currentLayout() const {
    return layoutFor(viewport()->size(), m_zoomMode == ZoomMode::Fixed ? m_fixedCell : 0,
                     QPoint(horizontalScrollBar()->value(), verticalScrollBar()->value()));
}

HeatmapLayout HeatmapView::layoutFor(QSize area, int fixedCell, QPoint scroll) const {
    return layoutHeatmap(m_scene, metrics(), font(),
                         {.area = area,
                          .fixedCell = fixedCell,
                          .maxCell = m_maxCell,
                          .scroll = scroll,
                          .centre = true,
                          .maxAspect = m_maxAspect,
                          .bar = m_barPlacement});
}

QSize HeatmapView::sizeHint() const {
    if (m_scene.empty()) return {200, 160};
    const int longest = std::max(rows(), columns());
    const int cell = std::clamp(560 / std::max(1, longest), 4, m_preferredCell);
    const HeatmapLayout l = layoutWholeHeatmap(m_scene, metrics(), font(), cell);
    return l.natural + QSize(2 * frameWidth(), 2 * frameWidth());
}

QSize HeatmapView::sizeForCell(int cell) const {
    if (m_scene.empty()) return minimumSizeHint();
    HeatmapLayout l = layoutWholeHeatmap(m_scene, metrics(), font(), std::max(1, cell), m_barPlacement);
    return l.natural + QSize(2 * frameWidth(), 2 * frameWidth());
}

QSize HeatmapView::labelledMinimumSize() const {
    return sizeForCell(QFontMetrics(font()).height() + 1).expandedTo(minimumSizeHint());
}

QSize HeatmapView::minimumSizeHint() const {
    return {80, 60};
}

HeatmapCell HeatmapView::cellAt(const QPoint& pos) const {
    if (m_scene.empty()) return {};
    return currentLayout().cellAt(pos, rows(), columns());
}

int HeatmapView::rowLabelAt(const QPoint& pos) const {
    if (!m_scene.labels || m_scene.empty()) return -1;
    const HeatmapLayout l = currentLayout();
    if (pos.x() < l.rowLabels.left() || pos.x() > l.rowLabels.right() + 6) return -1;
    if (pos.y() < l.gridArea.top() || pos.y() > l.gridArea.bottom()) return -1;
    const int r = (pos.y() - l.origin.y()) / l.ch;
    return r >= 0 && r < rows() ? r : -1;
}

int HeatmapView::columnLabelAt(const QPoint& pos) const {
    if (!m_scene.labels || m_scene.empty()) return -1;
    const HeatmapLayout l = currentLayout();
    if (pos.y() < l.colLabels.top() || pos.y() > l.colLabels.bottom() + 3) return -1;
    if (pos.x() < l.gridArea.left() || pos.x() > l.gridArea.right()) return -1;
    const int c = (pos.x() - l.origin.x()) / l.cw;
    return c >= 0 && c < columns() ? c : -1;
}

QRect HeatmapView::cellRect(int row, int col) const {
    return currentLayout().cellRect(row, col);
}

bool HeatmapView::rowLabelDrawn(int row) const {
    return heatmapRowLabelDrawn(m_scene, currentLayout(), row);
}

bool HeatmapView::columnLabelDrawn(int col) const {
    return heatmapColumnLabelDrawn(m_scene, currentLayout(), col);
}

QRect HeatmapView::overviewRect() const {
    if (m_scene.empty()) return {};
    const HeatmapLayout l = currentLayout();
    const int contentW = columns() * l.cw, contentH = rows() * l.ch;
    if (contentW <= l.gridArea.width() && contentH <= l.gridArea.height()) return {};
    // At most 140 px and a third of the grid area, with the matrix's aspect ratio.
    const double limit = std::min({140.0, l.gridArea.width() / 3.0, l.gridArea.height() / 3.0});
    if (limit < 24) return {};
    const double scale = limit / std::max(columns(), rows());
    const QSize size(std::max(8, static_cast<int>(columns() * scale)),
                     std::max(8, static_cast<int>(rows() * scale)));
    return QRect(l.gridArea.right() - 8 - size.width(), l.gridArea.bottom() - 8 - size.height(), size.width(),
                 size.height());
}

void HeatmapView::centreOn(double fx, double fy) {
    const HeatmapLayout l = currentLayout();
    const int contentW = columns() * l.cw, contentH = rows() * l.ch;
    horizontalScrollBar()->setValue(static_cast<int>(std::lround(fx * contentW - l.gridArea.width() / 2.0)));
    verticalScrollBar()->setValue(static_cast<int>(std::lround(fy * contentH - l.gridArea.height() / 2.0)));
}

void HeatmapView::reveal(bool row, int index) {
    if (index < 0 || index >= (row ? rows() : columns())) return;
    if (const int legible = fontMetrics().height(); cellSize() < legible) setCellSize(legible);
    const HeatmapLayout l = currentLayout();
    const double contentW = std::max(1, columns() * l.cw), contentH = std::max(1, rows() * l.ch);
    double fx = (horizontalScrollBar()->value() + l.gridArea.width() / 2.0) / contentW;
    double fy = (verticalScrollBar()->value() + l.gridArea.height() / 2.0) / contentH;
    const bool square = rows() == columns();
    if (row) {
        fy = (index + 0.5) / rows();
        if (square) fx = fy;
    } else {
        fx = (index + 0.5) / columns();
        if (square) fy = fx;
    }
    centreOn(fx, fy);
    // A page that scrolls around this view (a small window) scrolls too, so that the hit is on screen.
    const int cellRow = std::clamp(static_cast<int>(fy * rows()), 0, rows() - 1);
    const int cellCol = std::clamp(static_cast<int>(fx * columns()), 0, columns() - 1);
    const QRect cell = cellRect(cellRow, cellCol);
    for (QWidget* w = parentWidget(); w != nullptr; w = w->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(w);
            area != nullptr && area->widget() != nullptr && area->widget()->isAncestorOf(this)) {
            const QPoint p = viewport()->mapTo(area->widget(), cell.center());
            area->ensureVisible(p.x(), p.y(), 3 * cell.width() + 60, 6 * cell.height());
        }
    if (row) {
        selectRow(index);
        emit rowSelected(index);
    } else {
        selectColumn(index);
        emit columnSelected(index);
    }
}

HeatmapFind* HeatmapView::findBar() {
    if (!m_find) m_find = new HeatmapFind(this);
    return m_find;
}

void HeatmapView::panFromOverview(QPoint pos) {
    const QRect o = overviewRect();
    if (o.isEmpty()) return;
    centreOn(std::clamp((pos.x() - o.left()) / static_cast<double>(o.width()), 0.0, 1.0),
             std::clamp((pos.y() - o.top()) / static_cast<double>(o.height()), 0.0, 1.0));
}

QString HeatmapView::toolTipText(int row, int col) const {
    if (row < 0 || row >= rows() || col < 0 || col >= columns()) return {};
    const QString rowTitle = m_scene.rowTitle.isEmpty() ? tr("row") : m_scene.rowTitle;
    const QString colTitle = m_scene.columnTitle.isEmpty() ? tr("column") : m_scene.columnTitle;
    QString text = QStringLiteral("%1 <b>%2</b> (%3) \u2192 %4 <b>%5</b> (%6)<br>")
                       .arg(rowTitle.toHtmlEscaped(), rowLabel(row).toHtmlEscaped())
                       .arg(row)
                       .arg(colTitle.toHtmlEscaped(), columnLabel(col).toHtmlEscaped())
                       .arg(col);
    text += tr("value: <b>%1</b>")
                .arg(withMinusSign(QString::number(static_cast<double>(value(row, col)), 'g', 8)));
    if (isMasked(row, col))
        text +=
            QStringLiteral("<br><i>") + tr("masked (%1)").arg(m_scene.maskedText) + QStringLiteral("</i>");
    for (const KeyShare& sink : m_scene.sinks)
        if (sink.column == col)
            text += QStringLiteral("<br>") +
                    tr("attention sink: this key takes %1 % of all the attention in the map")
                        .arg(static_cast<double>(sink.share) * 100.0, 0, 'f', 1);
    return text;
}

// --- painting --------------------------------------------------------------------------------

void HeatmapView::ensureImage() const {
    if (!m_imageStale) return;
    m_imageStale = false;
    const_cast<HeatmapScene&>(m_scene).updateImage(); // the scene's cache of its colours
}

void HeatmapView::paintEvent(QPaintEvent*) {
    ensureImage();
    QPainter p(viewport());
    const HeatmapLayout l = currentLayout();
    const HeatmapStyle s = style();
    paintHeatmap(p, m_scene, l, s);
    if (const QRect o = overviewRect(); !o.isEmpty()) paintHeatmapOverview(p, m_scene, l, o, s);
}

// --- events ----------------------------------------------------------------------------------

void HeatmapView::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
    if (m_find && m_find->isVisible()) m_find->place();
}

void HeatmapView::scrollContentsBy(int, int) {
    viewport()->update();
}

bool HeatmapView::viewportEvent(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const HeatmapCell cell = cellAt(help->pos());
        if (cell.isValid()) {
            QToolTip::showText(help->globalPos(), toolTipText(cell.row, cell.col), viewport(),
                               cellRect(cell.row, cell.col));
        } else if (const int r = rowLabelAt(help->pos()); r >= 0) {
            QToolTip::showText(help->globalPos(),
                               tr("%1 — click to select the row").arg(rowLabel(r).toHtmlEscaped()),
                               viewport());
        } else if (const int c = columnLabelAt(help->pos()); c >= 0) {
            QToolTip::showText(help->globalPos(),
                               tr("%1 — click to select the column").arg(columnLabel(c).toHtmlEscaped()),
                               viewport());
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    if (event->type() == QEvent::Leave) setHovered({});
    return QAbstractScrollArea::viewportEvent(event);
}

void HeatmapView::setHovered(HeatmapCell cell) {
    if (cell == m_scene.hovered) return;
    m_scene.hovered = cell;
    viewport()->update();
    emit cellHovered(cell.row, cell.col);
}

void HeatmapView::mouseMoveEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    if (m_drag == Drag::Overview) {
        panFromOverview(pos);
        return;
    }
    if (m_drag == Drag::Pending && (pos - m_pressPos).manhattanLength() > 4 && m_zoomMode == ZoomMode::Fixed)
        m_drag = Drag::Pan;
    if (m_drag == Drag::Pan) {
        horizontalScrollBar()->setValue(m_pressScroll.x() - (pos.x() - m_pressPos.x()));
        verticalScrollBar()->setValue(m_pressScroll.y() - (pos.y() - m_pressPos.y()));
        viewport()->setCursor(Qt::ClosedHandCursor);
        return;
    }
    setHovered(cellAt(pos));
    const bool overLabel = rowLabelAt(pos) >= 0 || columnLabelAt(pos) >= 0;
    viewport()->setCursor(overLabel || m_scene.hovered.isValid() ? Qt::PointingHandCursor : Qt::ArrowCursor);
    QAbstractScrollArea::mouseMoveEvent(event);
}

void HeatmapView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        QAbstractScrollArea::mousePressEvent(event);
        return;
    }
    const QPoint pos = event->position().toPoint();
    if (overviewRect().contains(pos)) {
        m_drag = Drag::Overview;
        panFromOverview(pos);
    } else if (const int r = rowLabelAt(pos); r >= 0) {
        selectRow(r);
        emit rowSelected(r);
    } else if (const int c = columnLabelAt(pos); c >= 0) {
        selectColumn(c);
        emit columnSelected(c);
    } else if (cellAt(pos).isValid()) {
        // A click on a cell acts on release, so that a drag can pan instead.
        m_drag = Drag::Pending;
        m_pressPos = pos;
        m_pressScroll = QPoint(horizontalScrollBar()->value(), verticalScrollBar()->value());
    }
    event->accept();
}

void HeatmapView::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        QAbstractScrollArea::mouseReleaseEvent(event);
        return;
    }
    const Drag drag = std::exchange(m_drag, Drag::None);
    if (drag == Drag::Pending)
        if (const HeatmapCell cell = cellAt(event->position().toPoint()); cell.isValid())
            emit cellClicked(cell.row, cell.col);
    if (drag == Drag::Pan) viewport()->setCursor(Qt::PointingHandCursor);
    event->accept();
}

void HeatmapView::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ControlModifier) {
        const int steps = event->angleDelta().y();
        if (steps != 0) zoomAround(steps > 0 ? -1 : -2, event->position().toPoint());
        event->accept();
        return;
    }
    // Without a scroll range the wheel belongs to whatever scrolls around this view.
    if (horizontalScrollBar()->maximum() == 0 && verticalScrollBar()->maximum() == 0) {
        event->ignore();
        return;
    }
    QAbstractScrollArea::wheelEvent(event);
}

void HeatmapView::keyPressEvent(QKeyEvent* event) {
    if (event->matches(QKeySequence::Find)) {
        findBar()->open();
        event->accept();
        return;
    }
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        break;
    case Qt::Key_Minus:
        zoomOut();
        break;
    case Qt::Key_0:
        fitToView();
        break;
    case Qt::Key_Escape:
        clearSelection();
        break;
    default:
        QAbstractScrollArea::keyPressEvent(event);
        return;
    }
    event->accept();
}

void HeatmapView::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    menu.addAction(tr("Zoom &in"), QKeySequence(Qt::Key_Plus), this, &HeatmapView::zoomIn);
    menu.addAction(tr("Zoom &out"), QKeySequence(Qt::Key_Minus), this, &HeatmapView::zoomOut);
    auto* fit = menu.addAction(tr("&Fit to view"), QKeySequence(Qt::Key_0), this, &HeatmapView::fitToView);
    fit->setCheckable(true);
    fit->setChecked(m_zoomMode == ZoomMode::Fit);
    menu.addAction(tr("Fin&d token…"), QKeySequence::Find, this, [this] { findBar()->open(); });
    menu.addSeparator();
    menu.addAction(tr("&Copy image"), this, [this] { QApplication::clipboard()->setImage(renderImage()); });
    menu.addAction(tr("Save as &PNG…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save heatmap"), QStringLiteral("heatmap.png"), tr("PNG images (*.png)"));
        if (!path.isEmpty()) savePng(path);
    });
    menu.addAction(tr("Save as &SVG…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save heatmap"), QStringLiteral("heatmap.svg"), tr("SVG drawings (*.svg)"));
        if (!path.isEmpty()) saveSvg(path);
    });
    if (m_menuHook) m_menuHook(menu, cellAt(event->pos()));
    menu.exec(event->globalPos());
}

void HeatmapView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::FontChange) {
        m_metrics.reset();
        updateGeometry();
    }
    QAbstractScrollArea::changeEvent(event);
}

// --- export ----------------------------------------------------------------------------------

HeatmapScene HeatmapView::exportScene() const {
    ensureImage();
    HeatmapScene scene = m_scene;
    scene.hovered = {};
    return scene;
}

QImage HeatmapView::renderImage(int cellSize) const {
    return renderHeatmap(exportScene(), style(), cellSize > 0 ? cellSize : this->cellSize());
}

bool HeatmapView::savePng(const QString& path, int cellSize) const {
    return renderImage(cellSize).save(path, "PNG");
}

bool HeatmapView::saveSvg(const QString& path, const QString& title) const {
    return saveHeatmapSvg(exportScene(), style(), path, std::max(cellSize(), 8), title);
}

} // namespace attnlens::ui
