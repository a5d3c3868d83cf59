#pragma once
// The "head view" drawing (after BertViz): two token columns joined by one line per (query, key,
// head) whose opacity and width follow the attention weight, one colour per head. Free functions so
// the widget, exports and tests draw the same picture.
//
//   AttentionLineScene scene{left, right, perHead, colours, enabled};
//   AttentionLineGeometry g = layoutAttentionLines(scene, QSize(w, h), font);
//   paintAttentionLabels(p, scene, g, focus);
//   paintAttentionLines(p, scene, g);           // returns the number of lines drawn
//
// Smooth for long inputs: lines below `threshold` are skipped (most of a softmax row is near 0), and
// the widget caches the full picture, redrawing only the focused token's lines on hover.

#include "core/tensor/tensor.h"

#include <QColor>
#include <QFont>
#include <QRectF>
#include <QStringList>

#include <vector>

class QPainter;

namespace attnlens::ui {

// A qualitative palette (Tableau-like) for heads; wraps after 12.
QColor headColor(int head);

struct AttentionLineScene {
    QStringList left, right;      // query tokens, key tokens
    std::vector<RowMatrix> heads; // each [left, right]
    std::vector<bool> enabled;    // per head
    float threshold = 0.02f;      // weights below are not drawn
};

struct AttentionLineGeometry {
    double rowHeight = 22.0;
    double top = 30.0;              // y of the first row's top edge
    QRectF leftColumn, rightColumn; // label boxes (all rows)
    QSize size;                     // the whole picture
    double leftY(int i) const { return top + (i + 0.5) * rowHeight; }
    int rowAt(double y, int count) const; // -1 outside
};

AttentionLineGeometry layoutAttentionLines(const AttentionLineScene& scene, int width, const QFont& font);

// Focus: a left (query) index or a right (key) index, -1 for none; the focused token's label is
// emphasised and the other column shaded by `weights` (the summed attention to/from the focus).
struct AttentionLineFocus {
    int left = -1;
    int right = -1;
};
// `text`: the labels' colour — a view passes its palette's Text colour (it paints on Base), so that the
// labels read in the dark theme too; the default suits a white picture (exports).
void paintAttentionLabels(QPainter& p, const AttentionLineScene& scene, const AttentionLineGeometry& g,
                          AttentionLineFocus focus, const QColor& text = QColor(32, 33, 36));
// Draws the lines of every enabled head (only those touching the focus when one is set).
int paintAttentionLines(QPainter& p, const AttentionLineScene& scene, const AttentionLineGeometry& g,
                        AttentionLineFocus focus = {});

} // namespace attnlens::ui
