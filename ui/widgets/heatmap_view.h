#pragma once
// HeatmapView: a reusable, labelled heatmap of one matrix (attention weights, scores, a mask, …).
//
// Basic usage:
//   auto* view = new HeatmapView;
//   view->setAxisTitles(tr("query"), tr("key"));
//   view->setMatrix(weights, queryTokens, keyTokens);     // RowMatrix [rows, cols], copied
//   view->setColorMap(ColorMap::Magma);
//   view->setRangeMode(HeatmapView::RangeMode::Fixed);    // [0, 1] (setFixedRange) or Auto
//   connect(view, &HeatmapView::rowSelected, ...);        // user clicked a row label
//
// Drawing goes through a cached QImage with one pixel per cell (ui/render/heatmap_image.h, the same
// colours the CLI exports), scaled without smoothing; only the visible cells get annotations and mask
// hatching, so a 200×200 matrix repaints in a few milliseconds. Row labels and column labels stay in
// place while the grid scrolls (they are drawn in the viewport, not scrolled with it).
//
// Interaction: hover shows a tooltip with the exact value; clicking a row/column label selects it
// (rowSelected / columnSelected); clicking a cell emits cellClicked. Ctrl+wheel, +/- zoom around the
// cursor; 0 (or fitToView) returns to the fit mode, where the cell size follows the widget size.
// The context menu exports PNG or SVG.
//
// Threading: GUI thread only. Coordinates of cellAt/cellRect/rowLabelAt are viewport coordinates.

#include "core/export/colormap.h"
#include "core/tensor/tensor.h"

#include <QAbstractScrollArea>
#include <QImage>
#include <QStringList>
#include <utility>

class QPainter;

namespace attnlens::ui {

struct HeatmapCell {
    int row = -1;
    int col = -1;
    bool isValid() const { return row >= 0 && col >= 0; }
    bool operator==(const HeatmapCell&) const = default;
};

class HeatmapView : public QAbstractScrollArea {
    Q_OBJECT
public:
    enum class RangeMode { Fixed, Auto };
    enum class ZoomMode { Fit, Fixed };

    explicit HeatmapView(QWidget* parent = nullptr);
    ~HeatmapView() override;

    // --- data -------------------------------------------------------------------------------
    // Copies values [rows, cols]. Labels whose count no longer matches are dropped (indices shown);
    // a mask whose shape no longer matches is cleared; a selection outside the new shape is cleared.
    void setMatrix(const RowMatrix& values);
    void setMatrix(const RowMatrix& values, const QStringList& rowLabels, const QStringList& columnLabels);
    const RowMatrix& matrix() const { return m_values; }
    int rows() const { return static_cast<int>(m_values.rows()); }
    int columns() const { return static_cast<int>(m_values.cols()); }
    float value(int row, int col) const { return m_values(row, col); }

    void setRowLabels(const QStringList& labels);
    void setColumnLabels(const QStringList& labels);
    // The label of a row/column, or its 0-based index when no labels are set.
    QString rowLabel(int row) const;
    QString columnLabel(int col) const;
    // Small titles drawn along the axes, e.g. "query ↓" and "key →". Empty = none.
    void setAxisTitles(const QString& rowTitle, const QString& columnTitle);

    // keep [rows, cols]: 0 = masked. Masked cells are drawn hatched in maskedColor(), annotated with
    // maskedText() and left out of the auto range.
    void setMask(const RowMatrix& keep);
    void clearMask();
    bool hasMask() const { return m_mask.size() > 0; }
    bool isMasked(int row, int col) const { return hasMask() && m_mask(row, col) == 0.0f; }
    void setMaskedText(const QString& text);
    QString maskedText() const { return m_maskedText; }
    static QColor maskedColor();

    // --- colours ----------------------------------------------------------------------------
    void setColorMap(ColorMap map);
    ColorMap colorMap() const { return m_colorMap; }
    // Fixed: [lo, hi] from setFixedRange (default [0, 1]). Auto: min and max of the unmasked cells.
    void setRangeMode(RangeMode mode);
    RangeMode rangeMode() const { return m_rangeMode; }
    void setFixedRange(float lo, float hi);
    // The [lo, hi] the colours currently use.
    std::pair<float, float> displayRange() const { return {m_lo, m_hi}; }

    // --- look -------------------------------------------------------------------------------
    // Value annotations are drawn when enabled and the cells are large enough for the text.
    void setAnnotationsEnabled(bool enabled);
    bool annotationsEnabled() const { return m_annotate; }
    bool annotationsVisible() const;
    void setValueDecimals(int decimals);
    int valueDecimals() const { return m_decimals; }
    // The text of a value as annotated: fixed decimals, a real minus sign, maskedText() if masked.
    QString formatValue(int row, int col) const;
    void setColorBarVisible(bool visible);
    bool colorBarVisible() const { return m_colorBar; }
    void setLabelsVisible(bool visible);
    bool labelsVisible() const { return m_labels; }
    // Largest cell edge in fit mode (px); keeps a 2×2 matrix from filling the whole screen.
    void setMaximumCellSize(int px);
    // Cell edge (px) the size hint asks for.
    void setPreferredCellSize(int px);

    // --- zoom -------------------------------------------------------------------------------
    void setZoomMode(ZoomMode mode);
    ZoomMode zoomMode() const { return m_zoomMode; }
    // Switches to ZoomMode::Fixed with the given cell edge (clamped to [1, 128]).
    void setCellSize(int px);
    // The cell edge currently drawn (px), in either mode.
    int cellSize() const;
    void zoomIn();
    void zoomOut();
    void fitToView();

    // --- selection --------------------------------------------------------------------------
    // Programmatic selection emits no signal; a row and a column cannot both be selected.
    void selectRow(int row);
    void selectColumn(int col);
    void clearSelection();
    int selectedRow() const { return m_selectedRow; }
    int selectedColumn() const { return m_selectedCol; }
    // A single outlined cell (e.g. "the cell explained below"); invalid = none.
    void setMarkedCell(HeatmapCell cell);
    HeatmapCell markedCell() const { return m_marked; }
    // Cells and labels dim except those of the selected row/column.
    void setDimUnselected(bool dim);

    // --- geometry (viewport coordinates) ----------------------------------------------------
    HeatmapCell cellAt(const QPoint& pos) const;
    int rowLabelAt(const QPoint& pos) const;
    int columnLabelAt(const QPoint& pos) const;
    QRect cellRect(int row, int col) const;
    QString toolTipText(int row, int col) const;

    // --- export -----------------------------------------------------------------------------
    // The cached image: one pixel per cell, masked cells in maskedColor().
    const QImage& image() const { return m_image; }
    // The whole heatmap with labels and colour bar, not just the visible part; cellSize 0 = current.
    QImage renderImage(int cellSize = 0) const;
    bool savePng(const QString& path, int cellSize = 0) const;
    bool saveSvg(const QString& path, const QString& title = {}) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void cellHovered(int row, int col); // (-1, -1) when the pointer leaves the grid
    void cellClicked(int row, int col);
    void rowSelected(int row);
    void columnSelected(int col);
    void zoomChanged(int cellSize);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    bool viewportEvent(QEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Layout;    // heatmap_view_p.h
    struct CellRange; // heatmap_view_p.h
    Layout computeLayout(QSize area, int fixedCell, QPoint scroll, bool centre) const;
    Layout currentLayout() const;
    void paintContent(QPainter& p, const Layout& l, bool vector) const; // heatmap_paint.cpp
    void paintCells(QPainter& p, const Layout& l, const CellRange& v, bool vector) const;
    void paintAnnotations(QPainter& p, const Layout& l, const CellRange& v) const;
    void paintOutlines(QPainter& p, const Layout& l, bool vector) const;
    void paintLabels(QPainter& p, const Layout& l, const CellRange& v) const;
    void paintColorBar(QPainter& p, const Layout& l) const;
    void rebuildImage();
    void updateRange();
    void updateScrollBars();
    void updateAnnotationWidth();
    void zoomAround(int newCell, QPoint anchor);
    void setHovered(HeatmapCell cell);
    QString formatTick(float v) const;

    RowMatrix m_values;
    RowMatrix m_mask; // empty = no mask
    QStringList m_rowLabels, m_colLabels;
    QString m_rowTitle, m_colTitle;
    QString m_maskedText;
    QImage m_image;
    ColorMap m_colorMap = ColorMap::Viridis;
    RangeMode m_rangeMode = RangeMode::Fixed;
    float m_fixedLo = 0.0f, m_fixedHi = 1.0f;
    float m_lo = 0.0f, m_hi = 1.0f;
    bool m_annotate = true;
    int m_decimals = 2;
    mutable int m_rowLabelWidth = -1, m_colLabelWidth = -1; // widest labels (px); -1 = to measure
    QStringList m_annotationSamples; // the widest texts an annotation can have (checked against the cell)
    bool m_colorBar = true;
    bool m_labels = true;
    bool m_dimUnselected = false;
    int m_maxCell = 64;
    int m_preferredCell = 36;
    ZoomMode m_zoomMode = ZoomMode::Fit;
    int m_fixedCell = 16;
    int m_selectedRow = -1, m_selectedCol = -1;
    HeatmapCell m_marked, m_hovered;
};

} // namespace attnlens::ui
