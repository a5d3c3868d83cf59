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
#include <limits>
#include <utility>

namespace attnlens::ui {

namespace {

constexpr int kMaxZoomCell = 128, kMaxPer = 64;
// Zoom steps for zoomIn/zoomOut and Ctrl+wheel: a cell edge in px, or −n for n cells per pixel (below a
// pixel per cell, each pixel the largest value of its n × n block).
constexpr std::array<int, 31> kZoomSteps = {-64, -48, -32, -24, -16, -12, -8, -6, -4, -3, -2,
                                            1,   2,   3,   4,   5,   6,   8,  10, 12, 14, 16,
                                            20,  24,  28,  32,  40,  48,  64, 96, 128};
// The zoom step of a layout (see kZoomSteps).
int zoomKey(const HeatmapLayout& l) {
    return l.per > 1 ? -l.per : l.cell;
}

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

void HeatmapView::setCellTexts(QStringList texts) {
    m_scene.cellTexts = std::move(texts);
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
    if (mode == ZoomMode::Fixed) {
        const HeatmapLayout l = currentLayout();
        m_fixedCell = l.cell;
        m_fixedPer = l.per;
    }
    m_zoomMode = mode;
    updateScrollBars();
    viewport()->update();
    emit zoomChanged(cellSize());
}

void HeatmapView::setCellSize(int px) {
    m_fixedCell = std::clamp(px, kHeatmapMinCell, kMaxZoomCell);
    m_fixedPer = 1;
    m_zoomMode = ZoomMode::Fixed;
    updateScrollBars();
    viewport()->update();
    emit zoomChanged(m_fixedCell);
}

int HeatmapView::cellSize() const {
    return currentLayout().cell;
}

void HeatmapView::setCellsPerPixel(int per) {
    m_fixedCell = 1;
    m_fixedPer = std::clamp(per, 1, kMaxPer);
    m_zoomMode = ZoomMode::Fixed;
    updateScrollBars();
    viewport()->update();
    emit zoomChanged(1);
}

int HeatmapView::cellsPerPixel() const {
    return currentLayout().per;
}

void HeatmapView::zoomIn() {
    zoomAround(true, viewport()->rect().center());
}
void HeatmapView::zoomOut() {
    zoomAround(false, viewport()->rect().center());
}

void HeatmapView::fitToView() {
    setZoomMode(ZoomMode::Fit);
}

// in: whether to take the next zoom step in (larger cells) or out. Zooming out stops once the whole matrix
// is on screen below a pixel per cell (smaller would only shrink the picture).
void HeatmapView::zoomAround(bool in, QPoint anchor) {
    const HeatmapLayout before = currentLayout();
    const int key = zoomKey(before);
    int next = key;
    if (in) {
        const auto it = std::upper_bound(kZoomSteps.begin(), kZoomSteps.end(), key);
        next = it == kZoomSteps.end() ? kZoomSteps.back() : *it;
    } else {
        const auto it = std::lower_bound(kZoomSteps.begin(), kZoomSteps.end(), key);
        const QSize content = before.content(rows(), columns());
        const bool whole =
            content.width() <= before.available.width() && content.height() <= before.available.height();
        if (it != kZoomSteps.begin() && !(whole && *std::prev(it) < 1)) next = *std::prev(it);
    }
    if (next == key && m_zoomMode == ZoomMode::Fixed) return;
    // Keep the matrix point under `anchor` in place.
    const double fx = (anchor.x() - before.origin.x()) / before.pixelsPerColumn();
    const double fy = (anchor.y() - before.origin.y()) / before.pixelsPerRow();
    m_zoomMode = ZoomMode::Fixed;
    m_fixedCell = next < 1 ? 1 : std::min(next, kMaxZoomCell);
    m_fixedPer = next < 1 ? -next : 1;
    updateScrollBars();
    const HeatmapLayout after = layoutFor(viewport()->size(), m_fixedCell, m_fixedPer, QPoint());
    horizontalScrollBar()->setValue(
        static_cast<int>(std::lround(after.origin.x() + fx * after.pixelsPerColumn() - anchor.x())));
    verticalScrollBar()->setValue(
        static_cast<int>(std::lround(after.origin.y() + fy * after.pixelsPerRow() - anchor.y())));
    viewport()->update();
    emit zoomChanged(m_fixedCell);
}

void HeatmapView::updateScrollBars() {
    const HeatmapLayout l =
        layoutFor(viewport()->size(), m_zoomMode == ZoomMode::Fixed ? m_fixedCell : 0, m_fixedPer, QPoint());
    const QSize content = l.content(rows(), columns());
    const int contentW = content.width(), contentH = content.height();
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
    return layoutFor(viewport()->size(), m_zoomMode == ZoomMode::Fixed ? m_fixedCell : 0, m_fixedPer,
                     QPoint(horizontalScrollBar()->value(), verticalScrollBar()->value()));
}

HeatmapLayout HeatmapView::layoutFor(QSize area, int fixedCell, int fixedPer, QPoint scroll) const {
    return layoutHeatmap(m_scene, metrics(), font(),
                         {.area = area,
                          .fixedCell = fixedCell,
                          .fixedPer = fixedPer,
                          .maxCell = m_maxCell,
                          .scroll = scroll,
                          .centre = true,
                          .maxAspect = m_maxAspect,
                          .bar = m_barPlacement});
}

QSize HeatmapView::sizeHint() const {
    if (m_scene.empty()) return {200, 160};
    // About 560 px of cells; 4 px cells at least up to 140 a side, then down to blocks below a pixel (a
    // 4 096-token map asked for 16 000 px, which a page's heightForWidth layout passed on to the window).
    const int longest = std::max({1, rows(), columns()});
    const int cell =
        longest <= 140 ? std::clamp(560 / longest, 4, m_preferredCell) : std::max(1, 560 / longest);
    const int per = cell > 1 ? 1 : (longest + 559) / 560;
    const HeatmapLayout l =
        layoutWholeHeatmap(m_scene, metrics(), font(), cell, HeatmapFrame::Bar::Auto, per);
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
    const HeatmapLayout l = currentLayout();
    const HeatmapCell first = l.cellAt(pos, rows(), columns());
    if (l.per == 1 || !first.isValid()) return first;
    // A pixel of many cells: the one whose colour it shows (its largest unmasked value).
    HeatmapCell best = first;
    float most = -std::numeric_limits<float>::infinity();
    for (int r = first.row; r < std::min(rows(), first.row + l.per); ++r)
        for (int c = first.col; c < std::min(columns(), first.col + l.per); ++c)
            if (!isMasked(r, c) && value(r, c) > most) {
                most = value(r, c);
                best = {r, c};
            }
    return best;
}

int HeatmapView::rowLabelAt(const QPoint& pos) const {
    if (!m_scene.labels || m_scene.empty()) return -1;
    const HeatmapLayout l = currentLayout();
    if (pos.x() < l.rowLabels.left() || pos.x() > l.rowLabels.right() + 6) return -1;
    if (pos.y() < l.gridArea.top() || pos.y() > l.gridArea.bottom()) return -1;
    const int r = l.rowAt(pos.y());
    return r >= 0 && r < rows() ? r : -1;
}

int HeatmapView::columnLabelAt(const QPoint& pos) const {
    if (!m_scene.labels || m_scene.empty()) return -1;
    const HeatmapLayout l = currentLayout();
    if (pos.y() < l.colLabels.top() || pos.y() > l.colLabels.bottom() + 3) return -1;
    if (pos.x() < l.gridArea.left() || pos.x() > l.gridArea.right()) return -1;
    const int c = l.columnAt(pos.x());
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
    const QSize content = l.content(rows(), columns());
    if (content.width() <= l.gridArea.width() && content.height() <= l.gridArea.height()) return {};
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
    const QSize content = l.content(rows(), columns());
    const int contentW = content.width(), contentH = content.height();
    horizontalScrollBar()->setValue(static_cast<int>(std::lround(fx * contentW - l.gridArea.width() / 2.0)));
    verticalScrollBar()->setValue(static_cast<int>(std::lround(fy * contentH - l.gridArea.height() / 2.0)));
}

void HeatmapView::reveal(bool row, int index) {
    if (index < 0 || index >= (row ? rows() : columns())) return;
    if (const int legible = fontMetrics().height(); cellSize() < legible) setCellSize(legible);
    const HeatmapLayout l = currentLayout();
    const QSize content = l.content(rows(), columns());
    const double contentW = std::max(1, content.width()), contentH = std::max(1, content.height());
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
    return heatmapToolTip(m_scene, row, col, cellsPerPixel());
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
    if (l.per > 1) m_scene.updateBlocks(l.per); // made once per map and zoom
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
        if (steps != 0) zoomAround(steps > 0, event->position().toPoint());
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
    // Zoomed out below a pixel per cell: the export's own choice (block maxima for a long map).
    const int cell = cellSize > 0 ? cellSize : (cellsPerPixel() > 1 ? 0 : this->cellSize());
    return renderHeatmap(exportScene(), style(), cell);
}

bool HeatmapView::savePng(const QString& path, int cellSize) const {
    return renderImage(cellSize).save(path, "PNG");
}

bool HeatmapView::saveSvg(const QString& path, const QString& title) const {
    return saveHeatmapSvg(exportScene(), style(), path, std::max(cellSize(), 8), title);
}

} // namespace attnlens::ui
