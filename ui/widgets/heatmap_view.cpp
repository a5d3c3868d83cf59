#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/heatmap_view_p.h"

#include "ui/render/heatmap_image.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>
#include <QSvgGenerator>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace attnlens::ui {

namespace {

constexpr int kPad = 4;
constexpr int kBarWidth = 12;
constexpr int kBarGap = 10;
constexpr int kMinCell = 1;
constexpr int kMaxZoomCell = 128;
// Zoom steps (cell edge in px) for zoomIn/zoomOut and Ctrl+wheel.
constexpr std::array<int, 20> kZoomSteps = {1,  2,  3,  4,  5,  6,  8,  10, 12, 14,
                                            16, 20, 24, 28, 32, 40, 48, 64, 96, 128};

QString withMinusSign(QString text) {
    text.replace(QLatin1Char('-'), QChar(0x2212));
    return text;
}


} // namespace


HeatmapView::HeatmapView(QWidget* parent)
    : QAbstractScrollArea(parent), m_maskedText(QStringLiteral("\u2212\u221e")) {
    setFrameShape(QFrame::NoFrame);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    updateAnnotationWidth();
}

HeatmapView::~HeatmapView() = default;

// --- data ------------------------------------------------------------------------------------

void HeatmapView::setMatrix(const RowMatrix& values) {
    const bool reshaped = values.rows() != m_values.rows() || values.cols() != m_values.cols();
    m_values = values;
    m_rowLabelWidth = m_colLabelWidth = -1;
    if (m_rowLabels.size() != rows()) m_rowLabels.clear();
    if (m_colLabels.size() != columns()) m_colLabels.clear();
    if (m_mask.size() > 0 && (m_mask.rows() != m_values.rows() || m_mask.cols() != m_values.cols()))
        m_mask.resize(0, 0);
    if (m_selectedRow >= rows()) m_selectedRow = -1;
    if (m_selectedCol >= columns()) m_selectedCol = -1;
    if (m_marked.row >= rows() || m_marked.col >= columns()) m_marked = {};
    if (m_hovered.row >= rows() || m_hovered.col >= columns()) m_hovered = {};
    updateRange();
    rebuildImage();
    updateAnnotationWidth();
    if (reshaped) {
        updateGeometry();
        updateScrollBars();
    }
    viewport()->update();
}

void HeatmapView::setMatrix(const RowMatrix& values, const QStringList& rowLabels,
                            const QStringList& columnLabels) {
    m_rowLabels = rowLabels;
    m_colLabels = columnLabels;
    setMatrix(values);
}

void HeatmapView::setRowLabels(const QStringList& labels) {
    m_rowLabels = labels.size() == rows() ? labels : QStringList();
    m_rowLabelWidth = -1;
    updateGeometry();
    viewport()->update();
}

void HeatmapView::setColumnLabels(const QStringList& labels) {
    m_colLabels = labels.size() == columns() ? labels : QStringList();
    m_colLabelWidth = -1;
    updateGeometry();
    viewport()->update();
}

QString HeatmapView::rowLabel(int row) const {
    return row < m_rowLabels.size() ? m_rowLabels[row] : QString::number(row);
}

QString HeatmapView::columnLabel(int col) const {
    return col < m_colLabels.size() ? m_colLabels[col] : QString::number(col);
}

void HeatmapView::setAxisTitles(const QString& rowTitle, const QString& columnTitle) {
    m_rowTitle = rowTitle;
    m_colTitle = columnTitle;
    updateGeometry();
    viewport()->update();
}

void HeatmapView::setMask(const RowMatrix& keep) {
    if (keep.rows() != m_values.rows() || keep.cols() != m_values.cols()) {
        clearMask();
        return;
    }
    m_mask = keep;
    updateRange();
    rebuildImage();
    updateAnnotationWidth();
    viewport()->update();
}

void HeatmapView::clearMask() {
    if (m_mask.size() == 0) return;
    m_mask.resize(0, 0);
    updateRange();
    rebuildImage();
    updateAnnotationWidth();
    viewport()->update();
}

void HeatmapView::setMaskedText(const QString& text) {
    m_maskedText = text;
    updateAnnotationWidth();
    viewport()->update();
}

QColor HeatmapView::maskedColor() {
    return QColor(214, 214, 214);
}

// --- colours ---------------------------------------------------------------------------------

void HeatmapView::setColorMap(ColorMap map) {
    if (map == m_colorMap) return;
    m_colorMap = map;
    rebuildImage();
    viewport()->update();
}

void HeatmapView::setRangeMode(RangeMode mode) {
    m_rangeMode = mode;
    updateRange();
    rebuildImage();
    updateAnnotationWidth();
    viewport()->update();
}

void HeatmapView::setFixedRange(float lo, float hi) {
    m_fixedLo = lo;
    m_fixedHi = hi > lo ? hi : lo + 1.0f;
    updateRange();
    rebuildImage();
    viewport()->update();
}

void HeatmapView::updateRange() {
    if (m_rangeMode == RangeMode::Fixed) {
        m_lo = m_fixedLo;
        m_hi = m_fixedHi;
        return;
    }
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (Eigen::Index r = 0; r < m_values.rows(); ++r)
        for (Eigen::Index c = 0; c < m_values.cols(); ++c) {
            const float v = m_values(r, c);
            if (!std::isfinite(v) || isMasked(static_cast<int>(r), static_cast<int>(c))) continue;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!std::isfinite(lo)) lo = 0.0f, hi = 1.0f;
    if (hi <= lo) hi = lo + 1.0f; // a constant matrix maps to the low end, as renderHeatmap does
    m_lo = lo;
    m_hi = hi;
}

void HeatmapView::rebuildImage() {
    if (m_values.size() == 0) {
        m_image = QImage();
        return;
    }
    m_image = heatmapImage(m_values, m_colorMap, m_lo, m_hi, 1);
    if (hasMask()) {
        const QRgb masked = maskedColor().rgb();
        for (int r = 0; r < rows(); ++r) {
            auto* line = reinterpret_cast<QRgb*>(m_image.scanLine(r));
            for (int c = 0; c < columns(); ++c)
                if (isMasked(r, c)) line[c] = masked;
        }
    }
}

// --- look ------------------------------------------------------------------------------------

void HeatmapView::setAnnotationsEnabled(bool enabled) {
    m_annotate = enabled;
    viewport()->update();
}

bool HeatmapView::annotationsVisible() const {
    if (!m_annotate || m_values.size() == 0) return false;
    const int cell = cellSize();
    const QFontMetrics fm(heatmapAnnotationFont(font(), cell));
    int width = 0;
    for (const QString& sample : m_annotationSamples)
        width = std::max(width, fm.horizontalAdvance(sample));
    return cell >= width + 6 && cell >= fm.height() + 2;
}

void HeatmapView::setValueDecimals(int decimals) {
    m_decimals = std::clamp(decimals, 0, 8);
    updateAnnotationWidth();
    viewport()->update();
}

QString HeatmapView::formatValue(int row, int col) const {
    if (isMasked(row, col)) return m_maskedText;
    const float v = m_values(row, col);
    if (std::isnan(v)) return QStringLiteral("NaN");
    if (std::abs(v) >= 1e4f) return withMinusSign(QString::number(v, 'g', 2));
    QString text = QString::number(v, 'f', m_decimals);
    // "-0.00" reads as a real negative number; show it as "0.00".
    if (text.startsWith(QLatin1Char('-')) && text.mid(1).toDouble() == 0.0) text = text.mid(1);
    return withMinusSign(text);
}

void HeatmapView::updateAnnotationWidth() {
    m_annotationSamples = {m_maskedText};
    // With fixed decimals the widest text comes from the most negative or the largest value.
    float lo = 0.0f, hi = 0.0f;
    for (Eigen::Index i = 0; i < m_values.size(); ++i) {
        const float v = m_values.data()[i];
        if (!std::isfinite(v) || std::abs(v) >= 1e4f) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    for (float v : {lo, hi})
        m_annotationSamples.append(withMinusSign(QString::number(v, 'f', m_decimals)));
}

void HeatmapView::setColorBarVisible(bool visible) {
    m_colorBar = visible;
    updateGeometry();
    updateScrollBars();
    viewport()->update();
}

void HeatmapView::setLabelsVisible(bool visible) {
    m_labels = visible;
    updateGeometry();
    updateScrollBars();
    viewport()->update();
}

void HeatmapView::setMaximumCellSize(int px) {
    m_maxCell = std::max(kMinCell, px);
    updateGeometry();
    viewport()->update();
}

void HeatmapView::setPreferredCellSize(int px) {
    m_preferredCell = std::max(kMinCell, px);
    updateGeometry();
}

void HeatmapView::setDimUnselected(bool dim) {
    m_dimUnselected = dim;
    viewport()->update();
}

QString HeatmapView::formatTick(float v) const {
    const float a = std::abs(v);
    if (a != 0.0f && (a >= 1e4f || a < 1e-2f)) return withMinusSign(QString::number(v, 'g', 3));
    return withMinusSign(QString::number(v, 'f', 2));
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
    m_fixedCell = std::clamp(px, kMinCell, kMaxZoomCell);
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
    const Layout before = currentLayout();
    if (newCell == -1) {
        const auto it = std::upper_bound(kZoomSteps.begin(), kZoomSteps.end(), before.cell);
        newCell = it == kZoomSteps.end() ? kZoomSteps.back() : *it;
    } else if (newCell == -2) {
        auto it = std::lower_bound(kZoomSteps.begin(), kZoomSteps.end(), before.cell);
        newCell = it == kZoomSteps.begin() ? kZoomSteps.front() : *std::prev(it);
    }
    if (newCell == before.cell && m_zoomMode == ZoomMode::Fixed) return;
    // Keep the matrix point under `anchor` in place.
    const double fx = (anchor.x() - before.origin.x()) / static_cast<double>(before.cell);
    const double fy = (anchor.y() - before.origin.y()) / static_cast<double>(before.cell);
    m_zoomMode = ZoomMode::Fixed;
    m_fixedCell = std::clamp(newCell, kMinCell, kMaxZoomCell);
    updateScrollBars();
    const Layout after = computeLayout(viewport()->size(), m_fixedCell, QPoint(), true);
    horizontalScrollBar()->setValue(
        static_cast<int>(std::lround(after.origin.x() + fx * m_fixedCell - anchor.x())));
    verticalScrollBar()->setValue(
        static_cast<int>(std::lround(after.origin.y() + fy * m_fixedCell - anchor.y())));
    viewport()->update();
    emit zoomChanged(m_fixedCell);
}

void HeatmapView::updateScrollBars() {
    if (m_zoomMode == ZoomMode::Fit || m_values.size() == 0) {
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        horizontalScrollBar()->setRange(0, 0);
        verticalScrollBar()->setRange(0, 0);
        return;
    }
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    const Layout l = computeLayout(viewport()->size(), m_fixedCell, QPoint(), true);
    const int contentW = columns() * l.cell, contentH = rows() * l.cell;
    horizontalScrollBar()->setRange(0, std::max(0, contentW - l.available.width()));
    verticalScrollBar()->setRange(0, std::max(0, contentH - l.available.height()));
    horizontalScrollBar()->setPageStep(std::max(1, l.available.width()));
    verticalScrollBar()->setPageStep(std::max(1, l.available.height()));
    horizontalScrollBar()->setSingleStep(std::max(1, l.cell));
    verticalScrollBar()->setSingleStep(std::max(1, l.cell));
}

// --- selection -------------------------------------------------------------------------------

void HeatmapView::selectRow(int row) {
    m_selectedRow = row >= 0 && row < rows() ? row : -1;
    m_selectedCol = -1;
    viewport()->update();
}

void HeatmapView::selectColumn(int col) {
    m_selectedCol = col >= 0 && col < columns() ? col : -1;
    m_selectedRow = -1;
    viewport()->update();
}

void HeatmapView::clearSelection() {
    m_selectedRow = m_selectedCol = -1;
    viewport()->update();
}

void HeatmapView::setMarkedCell(HeatmapCell cell) {
    m_marked =
        cell.row >= 0 && cell.row < rows() && cell.col >= 0 && cell.col < columns() ? cell : HeatmapCell{};
    viewport()->update();
}

// --- layout ----------------------------------------------------------------------------------

HeatmapView::Layout HeatmapView::currentLayout() const {
    return computeLayout(viewport()->size(), m_zoomMode == ZoomMode::Fixed ? m_fixedCell : 0,
                         QPoint(horizontalScrollBar()->value(), verticalScrollBar()->value()), true);
}

// area: the space to lay out in; fixedCell 0 = fit the cells to the area; scroll: offset of the grid
// when it is larger than the area; centre: centre the whole composition horizontally.
HeatmapView::Layout HeatmapView::computeLayout(QSize area, int fixedCell, QPoint scroll, bool centre) const {
    Layout l;
    const int nr = std::max(1, rows()), nc = std::max(1, columns());
    const QFontMetrics fm(font());
    const int lineH = fm.height();
    const bool labels = m_labels && m_values.size() > 0;

    const int rowTitleW = labels && !m_rowTitle.isEmpty() ? lineH + 2 : 0;
    const int colTitleH = labels && !m_colTitle.isEmpty() ? lineH + 2 : 0;
    int rowLabelW = 0, colLabelW = 0;
    if (labels) {
        if (m_rowLabelWidth < 0 || m_colLabelWidth < 0) { // cached: layouts run on every mouse move
            QFont bold = font();
            bold.setBold(true); // the selected label is drawn bold: reserve its width
            const QFontMetrics fmBold(bold);
            m_rowLabelWidth = m_colLabelWidth = 0;
            for (int r = 0; r < rows(); ++r)
                m_rowLabelWidth = std::max(m_rowLabelWidth, fmBold.horizontalAdvance(rowLabel(r)));
            for (int c = 0; c < columns(); ++c)
                m_colLabelWidth = std::max(m_colLabelWidth, fmBold.horizontalAdvance(columnLabel(c)));
        }
        rowLabelW = std::min(m_rowLabelWidth, kHeatmapMaxLabelWidth) + 10;
        colLabelW = std::min(m_colLabelWidth, kHeatmapMaxLabelWidth);
    }
    int barRight = 0, barBottom = 0; // room for a bar right of / below the grid
    if (m_colorBar && m_values.size() > 0) {
        int tickW = 0;
        for (float v : {m_lo, m_hi, 0.5f * (m_lo + m_hi)})
            tickW = std::max(tickW, fm.horizontalAdvance(formatTick(v)));
        barRight = kBarGap + kBarWidth + 4 + tickW + 2;
        barBottom = 8 + kBarWidth - 2 + 3 + lineH;
    }
    const int left = kPad + rowTitleW + rowLabelW;
    auto fitCell = [&](int top, int right, int below) {
        const int availW = area.width() - left - right - kPad;
        const int availH = area.height() - top - below - kPad;
        return std::clamp(std::min(availW / nc, availH / nr), kMinCell, m_maxCell);
    };
    // In fit mode the bar goes below the grid when that leaves bigger cells (narrow, tall panels).
    auto place = [&](int top) {
        if (fixedCell > 0) return fixedCell;
        const int besideCell = fitCell(top, barRight, 0);
        const int belowCell = fitCell(top, 0, barBottom);
        l.barBelow = barRight > 0 && belowCell > besideCell;
        return l.barBelow ? belowCell : besideCell;
    };
    int top = kPad + colTitleH + (labels ? lineH + 4 : 0);
    int cell = place(top);
    if (labels && colLabelW + 6 > cell) {
        l.rotated = true;
        top = kPad + colTitleH + colLabelW + 8;
        cell = place(top);
    }
    l.barSpace = l.barBelow ? 0 : barRight;
    l.barBelowSpace = l.barBelow ? barBottom : 0;
    l.cell = cell;
    if (labels) {
        l.rowStep = std::max(1, (lineH + cell - 1) / cell);
        l.colStep = l.rotated ? std::max(1, (lineH + cell - 1) / cell) : 1;
    }

    const int contentW = columns() * cell, contentH = rows() * cell;
    l.available = QSize(std::max(0, area.width() - left - l.barSpace - kPad),
                        std::max(0, area.height() - top - l.barBelowSpace - kPad));
    const int gridW = std::min(contentW, l.available.width());
    const int gridH = std::min(contentH, l.available.height());
    const int shift = centre ? std::max(0, (l.available.width() - gridW) / 2) : 0;
    l.gridArea = QRect(left + shift, top, gridW, gridH);
    l.origin = l.gridArea.topLeft();
    if (contentW > l.available.width())
        l.origin.rx() -= std::clamp(scroll.x(), 0, contentW - l.available.width());
    if (contentH > l.available.height())
        l.origin.ry() -= std::clamp(scroll.y(), 0, contentH - l.available.height());
    l.rowLabels = QRect(kPad + rowTitleW + shift, top, std::max(0, rowLabelW - 6), gridH);
    l.colLabels = QRect(l.gridArea.x(), kPad + colTitleH, gridW, std::max(0, top - kPad - colTitleH - 3));
    l.rowTitle = QRect(kPad + shift, top, rowTitleW, gridH);
    l.colTitle = QRect(l.gridArea.x(), kPad, gridW, colTitleH);
    if (l.barBelow) {
        l.bar = QRect(l.gridArea.x(), l.gridArea.bottom() + 1 + 8, std::max(gridW, 40), kBarWidth - 2);
    } else if (l.barSpace > 0) {
        const int barH = std::max(gridH, std::min(96, area.height() - top - kPad));
        l.bar = QRect(l.gridArea.right() + 1 + kBarGap, top, kBarWidth, std::max(1, barH));
    }
    const int bottom =
        std::max(l.gridArea.bottom() + 1,
                 l.bar.isNull() ? 0 : l.bar.bottom() + 1 + (l.barBelow ? 3 + lineH : lineH / 2));
    l.natural = QSize(left + gridW + l.barSpace + kPad, bottom + kPad);
    return l;
}

QSize HeatmapView::sizeHint() const {
    if (m_values.size() == 0) return {200, 160};
    const int longest = std::max(rows(), columns());
    const int cell = std::clamp(560 / std::max(1, longest), 4, m_preferredCell);
    const Layout l = computeLayout(QSize(100000, 100000), cell, QPoint(), false);
    return l.natural + QSize(2 * frameWidth(), 2 * frameWidth());
}

QSize HeatmapView::minimumSizeHint() const {
    return {80, 60};
}

HeatmapCell HeatmapView::cellAt(const QPoint& pos) const {
    if (m_values.size() == 0) return {};
    const Layout l = currentLayout();
    if (!l.gridArea.contains(pos)) return {};
    const int c = (pos.x() - l.origin.x()) / l.cell;
    const int r = (pos.y() - l.origin.y()) / l.cell;
    if (r < 0 || r >= rows() || c < 0 || c >= columns()) return {};
    return {r, c};
}

int HeatmapView::rowLabelAt(const QPoint& pos) const {
    if (!m_labels || m_values.size() == 0) return -1;
    const Layout l = currentLayout();
    if (pos.x() < l.rowLabels.left() || pos.x() > l.rowLabels.right() + 6) return -1;
    if (pos.y() < l.gridArea.top() || pos.y() > l.gridArea.bottom()) return -1;
    const int r = (pos.y() - l.origin.y()) / l.cell;
    return r >= 0 && r < rows() ? r : -1;
}

int HeatmapView::columnLabelAt(const QPoint& pos) const {
    if (!m_labels || m_values.size() == 0) return -1;
    const Layout l = currentLayout();
    if (pos.y() < l.colLabels.top() || pos.y() > l.colLabels.bottom() + 3) return -1;
    if (pos.x() < l.gridArea.left() || pos.x() > l.gridArea.right()) return -1;
    const int c = (pos.x() - l.origin.x()) / l.cell;
    return c >= 0 && c < columns() ? c : -1;
}

QRect HeatmapView::cellRect(int row, int col) const {
    const Layout l = currentLayout();
    return QRect(l.origin.x() + col * l.cell, l.origin.y() + row * l.cell, l.cell, l.cell);
}

QString HeatmapView::toolTipText(int row, int col) const {
    if (row < 0 || row >= rows() || col < 0 || col >= columns()) return {};
    const QString rowTitle = m_rowTitle.isEmpty() ? tr("row") : m_rowTitle;
    const QString colTitle = m_colTitle.isEmpty() ? tr("column") : m_colTitle;
    QString text = QStringLiteral("%1 <b>%2</b> (%3) \u2192 %4 <b>%5</b> (%6)<br>")
                       .arg(rowTitle.toHtmlEscaped(), rowLabel(row).toHtmlEscaped())
                       .arg(row)
                       .arg(colTitle.toHtmlEscaped(), columnLabel(col).toHtmlEscaped())
                       .arg(col);
    text += tr("value: <b>%1</b>")
                .arg(withMinusSign(QString::number(static_cast<double>(value(row, col)), 'g', 8)));
    if (isMasked(row, col))
        text += QStringLiteral("<br><i>") + tr("masked (%1)").arg(m_maskedText) + QStringLiteral("</i>");
    return text;
}

// --- painting --------------------------------------------------------------------------------

void HeatmapView::paintEvent(QPaintEvent*) {
    QPainter p(viewport());
    paintContent(p, currentLayout(), false);
}


// --- events ----------------------------------------------------------------------------------

void HeatmapView::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
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
    if (cell == m_hovered) return;
    m_hovered = cell;
    viewport()->update();
    emit cellHovered(cell.row, cell.col);
}

void HeatmapView::mouseMoveEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    setHovered(cellAt(pos));
    const bool overLabel = rowLabelAt(pos) >= 0 || columnLabelAt(pos) >= 0;
    viewport()->setCursor(overLabel || m_hovered.isValid() ? Qt::PointingHandCursor : Qt::ArrowCursor);
    QAbstractScrollArea::mouseMoveEvent(event);
}

void HeatmapView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        QAbstractScrollArea::mousePressEvent(event);
        return;
    }
    const QPoint pos = event->position().toPoint();
    if (const int r = rowLabelAt(pos); r >= 0) {
        selectRow(r);
        emit rowSelected(r);
    } else if (const int c = columnLabelAt(pos); c >= 0) {
        selectColumn(c);
        emit columnSelected(c);
    } else if (const HeatmapCell cell = cellAt(pos); cell.isValid()) {
        emit cellClicked(cell.row, cell.col);
    }
    event->accept();
}

void HeatmapView::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton)
        event->accept(); // the press acted already
    else
        QAbstractScrollArea::mouseReleaseEvent(event);
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
    menu.exec(event->globalPos());
}

void HeatmapView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::FontChange) {
        m_rowLabelWidth = m_colLabelWidth = -1;
        updateAnnotationWidth();
        updateGeometry();
    }
    QAbstractScrollArea::changeEvent(event);
}

// --- export ----------------------------------------------------------------------------------

QImage HeatmapView::renderImage(int cellSize) const {
    const int cell = cellSize > 0 ? cellSize : this->cellSize();
    const Layout probe = computeLayout(QSize(1 << 20, 1 << 20), cell, QPoint(), false);
    const Layout l = computeLayout(probe.natural, cell, QPoint(), false);
    QImage image(l.natural, QImage::Format_ARGB32_Premultiplied);
    image.fill(palette().color(QPalette::Base));
    QPainter p(&image);
    p.setFont(font());
    paintContent(p, l, false);
    return image;
}

bool HeatmapView::savePng(const QString& path, int cellSize) const {
    return renderImage(cellSize).save(path, "PNG");
}

bool HeatmapView::saveSvg(const QString& path, const QString& title) const {
    const int cell = std::max(cellSize(), 8);
    const Layout probe = computeLayout(QSize(1 << 20, 1 << 20), cell, QPoint(), false);
    const Layout l = computeLayout(probe.natural, cell, QPoint(), false);
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(l.natural);
    generator.setViewBox(QRect(QPoint(), l.natural));
    generator.setTitle(title.isEmpty() ? tr("Heatmap") : title);
    generator.setDescription(tr("Attention Lens heatmap, %1 × %2, colour map %3")
                                 .arg(rows())
                                 .arg(columns())
                                 .arg(colorMapDisplayName(m_colorMap)));
    QPainter p;
    if (!p.begin(&generator)) return false;
    p.setFont(font());
    paintContent(p, l, true);
    return p.end();
}

} // namespace attnlens::ui
