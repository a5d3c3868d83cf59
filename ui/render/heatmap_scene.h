#pragma once
// The labelled heatmap as data plus free functions, as attention_lines.h does for the head view: the
// HeatmapView widget, PNG/SVG export and `attnlens-cli translate --heatmap` all draw through these.
//
//   HeatmapScene scene;                         // values, labels, titles, colours, selection
//   scene.values = weights; scene.rowLabels = …; scene.updateImage();
//   HeatmapStyle style = heatmapStyle(palette, font);
//   HeatmapMetrics metrics = measureHeatmap(scene, style.font);   // cache it: labels are measured
//   HeatmapLayout l = layoutHeatmap(scene, metrics, style.font, {.area = size});
//   paintHeatmap(p, scene, l, style);          // cells, annotations, outlines, labels, colour bar
//   saveHeatmapPng(scene, style, "out.png");   // the whole picture, no widget needed
//
// Needs a QGuiApplication (fonts); no widgets. Coordinates are in the painter's pixels.

#include "core/analysis/map_scale.h"
#include "core/export/colormap.h"
#include "core/tensor/tensor.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QRect>
#include <QStringList>

class QPainter;
class QPalette;

namespace attnlens::ui {

struct HeatmapCell {
    int row = -1;
    int col = -1;
    bool isValid() const { return row >= 0 && col >= 0; }
    bool operator==(const HeatmapCell&) const = default;
};

struct HeatmapScene {
    RowMatrix values;                    // [rows, cols]
    RowMatrix mask;                      // [rows, cols] 0 = masked (hatched, out of the range); empty = none
    QStringList rowLabels, columnLabels; // empty = 0-based indices
    QString rowTitle, columnTitle;       // axis titles; empty = none
    QString maskedText = QStringLiteral("\u2212\u221e");
    ColorMap colorMap = ColorMap::Viridis;
    float lo = 0.0f, hi = 1.0f;            // the colour range
    ColorScale scale = ColorScale::Linear; // how values find their colour between lo and hi
    int decimals = 2;                      // of value annotations
    // [rows · cols] row-major: the text a cell shows instead of its value (the logit lens's tokens); empty:
    // the values. The tooltip gives both.
    QStringList cellTexts;
    bool annotate = true; // annotations where the cells are large enough
    bool colorBar = true;
    bool labels = true;
    bool dimUnselected = false; // veil over the cells outside the selected row/column
    int selectedRow = -1, selectedColumn = -1;
    HeatmapCell marked;  // outlined cell
    HeatmapCell hovered; // thin outline, screen only
    QImage image;        // one pixel per cell, masked cells in heatmapMaskedColor(); see updateImage()
    // Above 512 cells a side: the whole matrix at most 256 px a side, each pixel the colour of the largest
    // unmasked value of its block (a sink column or a diagonal stays visible); else null (use `image`).
    QImage overview;
    // Zoomed out below a pixel per cell (HeatmapLayout::per > 1): one pixel per block of blocksPer ×
    // blocksPer cells, the colour of its largest unmasked value, made by updateBlocks(); cleared by
    // updateImage(). paintHeatmap samples `image` instead where blocksPer is not the layout's.
    QImage blocks;
    int blocksPer = 0;
    // Key columns marked as attention sinks (ScaledMap::sinks), a triangle above each; empty = none.
    std::vector<KeyShare> sinks;

    int rows() const { return static_cast<int>(values.rows()); }
    int columns() const { return static_cast<int>(values.cols()); }
    bool empty() const { return values.size() == 0; }
    bool hasMask() const { return mask.size() > 0; }
    bool isMasked(int row, int col) const { return hasMask() && mask(row, col) == 0.0f; }
    bool selecting() const { return selectedRow >= 0 || selectedColumn >= 0; }
    QString rowLabel(int row) const; // the label, or the index when there are no labels
    QString columnLabel(int col) const;
    // Fixed decimals, a real minus sign, "-0.00" as "0.00", maskedText for masked cells; the cell's text
    // where cellTexts has one.
    QString formatValue(int row, int col) const;
    // Recomputes `image` (in place when the shape is unchanged) and `overview` from values, mask, colour map
    // and range.
    void updateImage();
    // Recomputes `blocks` for blocks of `per` × `per` cells (nothing when they are already for `per`).
    void updateBlocks(int per);
    // [lo, hi] of the finite unmasked cells; a constant matrix gets hi = lo + 1, an empty one [0, 1]. Log
    // scale: lo is the smallest positive cell (at least hi · 1e-6: zeros and underflow stay at the low end).
    std::pair<float, float> autoRange() const;
    // The value in the middle of the colour bar (the geometric mean of lo and hi on a log scale).
    float middleValue() const { return scaleValueAt(0.5f, lo, hi, scale); }
};

QColor heatmapMaskedColor();
// The hover text of a cell (HTML): row and column with their titles and labels, the value, masked, the block
// it stands for when `per` cells a side share a pixel, its sink share.
QString heatmapToolTip(const HeatmapScene& scene, int row, int col, int per = 1);
// '-' → U+2212, the minus sign typography uses.
QString withMinusSign(QString text);
QString formatHeatmapTick(float v);

// Colours and font the painting uses; heatmapStyle() takes them from a palette.
struct HeatmapStyle {
    QFont font;
    QColor text, dimText, accent, accentText, background, frame;
    bool vector = false; // SVG: cells as rectangles, no hover outline
};
HeatmapStyle heatmapStyle(const QPalette& palette, const QFont& font);
HeatmapStyle defaultHeatmapStyle(); // the application's palette and font

// Measurements that depend on every label (slow for long inputs): cache them per scene and font.
struct HeatmapMetrics {
    int rowLabelWidth = 0, columnLabelWidth = 0; // widest label in bold (px)
    QStringList annotationSamples;               // the widest texts an annotation can have
};
HeatmapMetrics measureHeatmap(const HeatmapScene& scene, const QFont& font);
// measureHeatmap's annotation samples alone (a view whose labels did not change keeps their widths).
QStringList heatmapAnnotationSamples(const HeatmapScene& scene);

struct HeatmapFrame {
    QSize area;          // the space to lay out in
    int fixedCell = 0;   // 0 = fit the cells to the area
    int fixedPer = 1;    // with fixedCell 1: cells per pixel (zoomed out below a pixel per cell)
    int maxCell = 64;    // largest cell edge when fitting
    QPoint scroll;       // offset of the grid when it is larger than the area
    bool centre = false; // centre the composition horizontally
    // Fit mode only: cells may be up to this many times taller than wide (or wider than tall) so that
    // a 16 × 58 matrix fills its pane instead of a strip; 1 = square cells. Exports keep square cells.
    double maxAspect = 1.0;
    // Where the colour bar goes: Auto picks below the grid when that leaves bigger cells (fit mode only);
    // Right or Below keep every heatmap of a page alike.
    enum class Bar { Auto, Right, Below };
    Bar bar = Bar::Auto;
};

struct HeatmapLayout {
    int cell = 1;       // the smaller cell edge (annotation size, thresholds)
    int cw = 1, ch = 1; // cell width and height; equal unless the fit stretched them (maxAspect)
    int lineH = 0;      // height of a label's text line
    QRect gridArea;     // the visible part of the grid (clip rect for cells)
    QSize available;    // room for the grid before clamping to the content (scroll ranges)
    QPoint origin;      // top-left corner of cell (0, 0); outside gridArea when scrolled
    QRect rowLabels;    // x range of the row labels (y follows the rows)
    QRect colLabels;    // y range of the column labels (x follows the columns)
    QRect rowTitle, colTitle;
    QRect bar; // colour bar image
    bool rotated = false;
    bool annotate = false;        // value annotations fit the cells
    int rowStep = 1, colStep = 1; // every n-th label when cells are smaller than the text (see *LabelDrawn)
    int barSpace = 0;             // width right of the grid taken by the bar and its ticks
    int barBelowSpace = 0;        // height below the grid taken by the bar when it sits there
    bool barBelow = false;        // the bar sits under the grid (chosen when that gives larger cells)
    QSize natural;                // size needed to show everything at this cell size
    // Cells per pixel along each axis when the grid is zoomed out below a pixel per cell (cw = ch = 1, each
    // pixel a block of per × per cells drawn as its largest value; the fit mode picks it for long maps).
    int per = 1;
    int columnX(int col) const { return origin.x() + (per > 1 ? col / per : col * cw); }
    int rowY(int row) const { return origin.y() + (per > 1 ? row / per : row * ch); }
    // Pixels per cell (a fraction when per > 1).
    double pixelsPerColumn() const { return per > 1 ? 1.0 / per : cw; }
    double pixelsPerRow() const { return per > 1 ? 1.0 / per : ch; }
    // The size of the whole grid of rows × cols cells.
    QSize content(int rows, int cols) const {
        return per > 1 ? QSize((cols + per - 1) / per, (rows + per - 1) / per) : QSize(cols * cw, rows * ch);
    }
    // The cell drawn at a pixel (per > 1: its block's first cell), unclamped, for any x / y.
    int columnAt(int x) const;
    int rowAt(int y) const;
    QRect cellRect(int row, int col) const { return QRect(columnX(col), rowY(row), cw, ch); }
    HeatmapCell cellAt(QPoint pos, int rows, int cols) const;
};

inline constexpr int kHeatmapMinCell = 1;
inline constexpr int kHeatmapMaxLabelWidth = 120; // px; longer labels are elided

HeatmapLayout layoutHeatmap(const HeatmapScene& scene, const HeatmapMetrics& metrics, const QFont& font,
                            const HeatmapFrame& frame);
// The whole picture at `cell` px per cell (with cell 1: `per` cells per pixel), unscrolled, at its natural
// size (bar beside unless told).
HeatmapLayout layoutWholeHeatmap(const HeatmapScene& scene, const HeatmapMetrics& metrics, const QFont& font,
                                 int cell, HeatmapFrame::Bar bar = HeatmapFrame::Bar::Auto, int per = 1);

void paintHeatmap(QPainter& p, const HeatmapScene& scene, const HeatmapLayout& l, const HeatmapStyle& style);

// Which labels paintHeatmap draws: every rowStep-th (colStep-th) one, the selected and the hovered row
// (column) always, and no regular one that would overlap those. A label not drawn is still named by the
// hover tooltip, drawn when its row is hovered, and drawn at a zoom where the cells are a text line tall.
bool heatmapRowLabelDrawn(const HeatmapScene& scene, const HeatmapLayout& l, int row);
bool heatmapColumnLabelDrawn(const HeatmapScene& scene, const HeatmapLayout& l, int col);

// The whole matrix in at most `most` cells a side: each cell the largest unmasked value of a square block
// (masked where the whole block is), labelled by the block's first row / column, the row title saying the
// block size, sinks moved to their block. What exports draw of a long map.
HeatmapScene blockMaximaScene(const HeatmapScene& scene, int most);

// A small picture of the whole matrix with the visible part outlined (the view's overview while zoomed).
void paintHeatmapOverview(QPainter& p, const HeatmapScene& scene, const HeatmapLayout& l, const QRect& where,
                          const HeatmapStyle& style);

// Exports of the whole heatmap (labels and colour bar included); cell 0 = a size chosen from the shape.
// Long maps are drawn as blockMaximaScene: above kExportEveryCell cells a side with cell 0, when the
// picture would pass kExportLargestSide px, and in SVG above 512 × 512 cells (one rectangle per cell).
inline constexpr int kExportEveryCell = 1024, kExportBlocks = 512, kExportLargestSide = 8192;
int defaultExportCell(const HeatmapScene& scene);
QImage renderHeatmap(const HeatmapScene& scene, const HeatmapStyle& style, int cell = 0);
bool saveHeatmapPng(const HeatmapScene& scene, const HeatmapStyle& style, const QString& path, int cell = 0);
bool saveHeatmapSvg(const HeatmapScene& scene, const HeatmapStyle& style, const QString& path, int cell = 0,
                    const QString& title = {});

} // namespace attnlens::ui
