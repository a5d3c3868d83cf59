#pragma once
// HeatmapView's internals shared by its two translation units (heatmap_view.cpp: data, layout,
// interaction; heatmap_paint.cpp: drawing). Not for other code.

#include "ui/widgets/heatmap_view.h"

#include <QFont>
#include <QRect>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

inline constexpr int kHeatmapMaxLabelWidth = 120; // px; longer labels are elided

// Annotation text grows with the cells (about 30 % of the edge, 9–16 px) so that large cells do
// not hold tiny numbers.
inline QFont heatmapAnnotationFont(const QFont& base, int cell) {
    QFont f = base;
    f.setPixelSize(std::clamp(static_cast<int>(std::lround(cell * 0.3)), 9, 16));
    return f;
}

struct HeatmapView::Layout {
    int cell = 1;
    QRect gridArea;  // the visible part of the grid (clip rect for cells)
    QSize available; // room for the grid before clamping to the content (scroll ranges)
    QPoint origin;   // top-left corner of cell (0, 0); outside gridArea when scrolled
    QRect rowLabels; // x range of the row labels (y follows the rows)
    QRect colLabels; // y range of the column labels (x follows the columns)
    QRect rowTitle, colTitle;
    QRect bar; // colour bar image
    bool rotated = false;
    int rowStep = 1, colStep = 1; // draw every n-th label when cells are smaller than the text
    int barSpace = 0;             // width right of the grid taken by the bar and its ticks
    int barBelowSpace = 0;        // height below the grid taken by the bar when it sits there
    bool barBelow = false;        // the bar sits under the grid (chosen when that gives larger cells)
    QSize natural;                // size needed to show everything at this cell size
};

// The cells of the grid that intersect the visible area.
struct HeatmapView::CellRange {
    int r0 = 0, r1 = -1, c0 = 0, c1 = -1;
    QRect rectOf(const Layout& l, int r, int c) const {
        return QRect(l.origin.x() + c * l.cell, l.origin.y() + r * l.cell, l.cell, l.cell);
    }
};

} // namespace attnlens::ui
