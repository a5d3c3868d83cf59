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
// The widget holds a HeatmapScene (ui/render/heatmap_scene.h: the data, selection and colours) and only
// the interaction state; layout, painting and PNG/SVG export are the scene's free functions, which the
// CLI's `translate --heatmap` uses too. Cells go through a cached QImage with one pixel per cell (the
// same colours the CLI exports), scaled without smoothing; only the visible cells get annotations and
// mask hatching, so a 200×200 matrix repaints in a few milliseconds. Row labels and column labels stay in
// place while the grid scrolls (they are drawn in the viewport, not scrolled with it).
//
// Interaction: hover shows a tooltip naming the cell (row label, column label, value) and draws the
// hovered row's and column's labels even where only every n-th label fits; clicking a row/column label
// selects it (rowSelected / columnSelected); clicking a cell emits cellClicked. Ctrl+wheel, +/- zoom
// around the cursor; 0 (or fitToView) returns to the fit mode, where the cells follow the widget size.
// Below a pixel per cell (a long map fitted, or zoomed out) each pixel shows its block's largest value.
// While zoomed, dragging the grid pans, and an overview in the corner shows the whole matrix with the
// visible part outlined (click or drag in it to move there). The context menu exports PNG or SVG.
//
// Threading: GUI thread only. Coordinates of cellAt/cellRect/rowLabelAt are viewport coordinates.

#include "core/export/colormap.h"
#include "core/tensor/tensor.h"
#include "ui/render/heatmap_scene.h"

#include <QAbstractScrollArea>
#include <QImage>
#include <QStringList>

#include <functional>
#include <optional>
#include <utility>

class QMenu;

namespace attnlens::ui {
class HeatmapFind;
}

namespace attnlens::ui {

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
    void setMatrix(const RowMatrix& values) { setMatrix(RowMatrix(values)); }
    void setMatrix(RowMatrix&& values); // moved in: no copy (a 4 096² map is 64 MB)
    void setMatrix(RowMatrix values, const QStringList& rowLabels, const QStringList& columnLabels);
    // A matrix coloured elsewhere (a worker: a 4 096² map takes tens of ms to colour): `coloured`'s values,
    // labels, mask, fixed range [lo, hi], scale, sinks, image and overview (HeatmapScene::updateImage, done)
    // are taken as they are; the range mode becomes Fixed. Its image is recoloured here only if its colour
    // map is not this view's.
    void setColouredMatrix(HeatmapScene coloured);
    const RowMatrix& matrix() const { return m_scene.values; }
    int rows() const { return m_scene.rows(); }
    int columns() const { return m_scene.columns(); }
    float value(int row, int col) const { return m_scene.values(row, col); }
    // Everything drawn: data, labels, colours, selection (for the free functions of heatmap_scene.h).
    const HeatmapScene& scene() const {
        ensureImage();
        return m_scene;
    }
    // The widget's palette and font as the painting uses them.
    HeatmapStyle style() const;

    void setRowLabels(const QStringList& labels);
    void setColumnLabels(const QStringList& labels);
    // The label of a row/column, or its 0-based index when no labels are set.
    QString rowLabel(int row) const { return m_scene.rowLabel(row); }
    QString columnLabel(int col) const { return m_scene.columnLabel(col); }
    // Small titles drawn along the axes, e.g. "query ↓" and "key →". Empty = none.
    void setAxisTitles(const QString& rowTitle, const QString& columnTitle);

    // keep [rows, cols]: 0 = masked. Masked cells are drawn hatched in maskedColor(), annotated with
    // maskedText() and left out of the auto range.
    void setMask(const RowMatrix& keep);
    void clearMask();
    bool hasMask() const { return m_scene.hasMask(); }
    bool isMasked(int row, int col) const { return m_scene.isMasked(row, col); }
    void setMaskedText(const QString& text);
    QString maskedText() const { return m_scene.maskedText; }
    static QColor maskedColor() { return heatmapMaskedColor(); }

    // --- colours ----------------------------------------------------------------------------
    void setColorMap(ColorMap map);
    ColorMap colorMap() const { return m_scene.colorMap; }
    // Fixed: [lo, hi] from setFixedRange (default [0, 1]). Auto: min and max of the unmasked cells.
    void setRangeMode(RangeMode mode);
    RangeMode rangeMode() const { return m_rangeMode; }
    void setFixedRange(float lo, float hi);
    // Linear (default) or Log: colours and the bar's middle tick by log value (core/export/colormap.h); the
    // cells keep their values (annotations, hover, export).
    void setColorScale(ColorScale scale);
    ColorScale colorScale() const { return m_scene.scale; }
    // The [lo, hi] the colours currently use.
    std::pair<float, float> displayRange() const { return {m_scene.lo, m_scene.hi}; }

    // --- look -------------------------------------------------------------------------------
    // Value annotations are drawn when enabled and the cells are large enough for the text.
    void setAnnotationsEnabled(bool enabled);
    bool annotationsEnabled() const { return m_scene.annotate; }
    bool annotationsVisible() const;
    void setValueDecimals(int decimals);
    int valueDecimals() const { return m_scene.decimals; }
    // [rows · cols] row-major texts shown in the cells instead of their values (HeatmapScene::cellTexts);
    // set after setMatrix (a matrix of another shape drops them). Empty: the values.
    void setCellTexts(QStringList texts);
    // The text of a value as annotated: fixed decimals, a real minus sign, maskedText() if masked.
    QString formatValue(int row, int col) const { return m_scene.formatValue(row, col); }
    void setColorBarVisible(bool visible);
    bool colorBarVisible() const { return m_scene.colorBar; }
    bool colorBarBelow() const; // the bar is under the grid in the current layout (else beside it)
    void setLabelsVisible(bool visible);
    bool labelsVisible() const { return m_scene.labels; }
    // Largest cell edge in fit mode (px); keeps a 2×2 matrix from filling the whole screen.
    void setMaximumCellSize(int px);
    // Cell edge (px) the size hint asks for.
    void setPreferredCellSize(int px);
    // Fit mode: how much taller than wide (or wider than tall) a cell may get to fill the pane
    // (default 3; 1 = square cells). Zooming (Fixed mode) and exports use square cells.
    void setMaximumCellAspect(double ratio);
    // Colour bar beside (Right) or under (Below) the grid, or whichever leaves bigger cells (Auto, default).
    void setColorBarPlacement(HeatmapFrame::Bar placement);

    // --- zoom -------------------------------------------------------------------------------
    void setZoomMode(ZoomMode mode);
    ZoomMode zoomMode() const { return m_zoomMode; }
    // Switches to ZoomMode::Fixed with the given cell edge (clamped to [1, 128]).
    void setCellSize(int px);
    // The cell edge currently drawn (px), in either mode; 1 when zoomed out below a pixel per cell.
    int cellSize() const;
    // Zoomed out below a pixel per cell: `per` × `per` cells per pixel, each pixel the colour of its block's
    // largest value (a sink column or a diagonal stays visible); hover names that cell. Fit mode picks it for
    // a map that overflows the pane at 1 px per cell; zoomOut steps to it down to where the map fits.
    void setCellsPerPixel(int per);
    int cellsPerPixel() const; // 1 unless zoomed out below a pixel per cell
    void zoomIn();
    void zoomOut();
    void fitToView();

    // --- selection --------------------------------------------------------------------------
    // Programmatic selection emits no signal; a row and a column cannot both be selected.
    void selectRow(int row);
    void selectColumn(int col);
    void clearSelection();
    int selectedRow() const { return m_scene.selectedRow; }
    int selectedColumn() const { return m_scene.selectedColumn; }
    // A single outlined cell (e.g. "the cell explained below"); invalid = none.
    void setMarkedCell(HeatmapCell cell);
    // Key columns marked as attention sinks (a triangle above each, their share in the tooltip); {} = none.
    void setSinkColumns(std::vector<KeyShare> sinks);
    const std::vector<KeyShare>& sinkColumns() const { return m_scene.sinks; }
    HeatmapCell markedCell() const { return m_scene.marked; }
    // Cells and labels dim except those of the selected row/column.
    void setDimUnselected(bool dim);

    // --- geometry (viewport coordinates) ----------------------------------------------------
    HeatmapCell cellAt(const QPoint& pos) const;
    int rowLabelAt(const QPoint& pos) const;
    int columnLabelAt(const QPoint& pos) const;
    QRect cellRect(int row, int col) const;
    QString toolTipText(int row, int col) const;
    // Whether the label of a row / column is drawn now (heatmapRowLabelDrawn on the current layout).
    bool rowLabelDrawn(int row) const;
    bool columnLabelDrawn(int col) const;
    // Where the overview is drawn (viewport coordinates); empty when the whole matrix is visible.
    QRect overviewRect() const;
    // Scrolls so that the matrix point at (fx, fy) ∈ [0, 1]² is in the middle of the grid area.
    void centreOn(double fx, double fy);
    // Shows a row (or column) as a click on its label would: zoomed until labels are legible, centred (on the
    // diagonal of a square matrix), selected, rowSelected / columnSelected emitted.
    void reveal(bool row, int index);
    // The find bar (ui/widgets/heatmap_find.h), opened by Ctrl+F and the menu; made on first use.
    HeatmapFind* findBar();

    // Pages add their own entries to the right-click menu (e.g. "Inside this score…"): called with the menu
    // and the cell under the pointer (invalid when the pointer is not on a cell) before the menu opens.
    void setContextMenuHook(std::function<void(QMenu& menu, HeatmapCell cell)> hook) {
        m_menuHook = std::move(hook);
    }

    // --- export -----------------------------------------------------------------------------
    // The cached image: one pixel per cell, masked cells in maskedColor().
    const QImage& image() const {
        ensureImage();
        return m_scene.image;
    }
    // The whole heatmap with labels and colour bar, not just the visible part (renderHeatmap of the
    // scene without the hover outline); cellSize 0 = current.
    QImage renderImage(int cellSize = 0) const;
    bool savePng(const QString& path, int cellSize = 0) const;
    bool saveSvg(const QString& path, const QString& title = {}) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    // The whole heatmap at `cell` px per cell (labels, titles, bar): e.g. the minimum that keeps every label.
    QSize sizeForCell(int cell) const;
    // The smallest size that draws every row and column label (cells one text line high): pages that can
    // scroll set it as the minimum instead of letting labels thin out.
    QSize labelledMinimumSize() const;

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
    HeatmapLayout layoutFor(QSize area, int fixedCell, int fixedPer, QPoint scroll) const;
    HeatmapLayout currentLayout() const;
    const HeatmapMetrics& metrics() const;
    HeatmapScene exportScene() const;
    void dataChanged(bool reshaped);
    void labelsChanged();
    void updateRange();
    void updateScrollBars();
    void zoomAround(bool in, QPoint anchor);
    void setHovered(HeatmapCell cell);
    void panFromOverview(QPoint pos);

    // The scene's image is made once before it is painted or read, not by each setter (a 4 096² map costs
    // ~100 ms to colour: a page setting values, mask, scale and range must not pay it four times).
    void invalidateImage() { m_imageStale = true; }
    void ensureImage() const;

    HeatmapScene m_scene;
    mutable bool m_imageStale = false;
    mutable std::optional<HeatmapMetrics> m_metrics; // measured on demand: layouts run on every mouse move
    // The labels (and font) the label widths were measured for: a new matrix under the same labels (another
    // head of 4 096 tokens) measures its values only.
    struct MeasuredLabels {
        QStringList rows, columns;
        int rowCount = -1, columnCount = -1;
        QFont font;
        int rowWidth = 0, columnWidth = 0;
    };
    mutable MeasuredLabels m_measured;
    RangeMode m_rangeMode = RangeMode::Fixed;
    float m_fixedLo = 0.0f, m_fixedHi = 1.0f;
    int m_maxCell = 64;
    int m_preferredCell = 36;
    ZoomMode m_zoomMode = ZoomMode::Fit;
    int m_fixedCell = 16;
    int m_fixedPer = 1; // cells per pixel with m_fixedCell 1
    double m_maxAspect = 3.0;
    HeatmapFrame::Bar m_barPlacement = HeatmapFrame::Bar::Auto;
    enum class Drag { None, Pending, Pan, Overview };
    Drag m_drag = Drag::None;
    std::function<void(QMenu&, HeatmapCell)> m_menuHook;
    HeatmapFind* m_find = nullptr;
    QPoint m_pressPos, m_pressScroll;
};

} // namespace attnlens::ui
