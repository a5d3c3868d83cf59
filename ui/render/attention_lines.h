#pragma once
// The "head view" drawing (after BertViz): two token columns joined by one line per (query, key,
// head) whose opacity and width follow the attention weight, one colour per head. Free functions so
// the widget, exports and tests draw the same picture.
//
//   AttentionLineScene scene{left, right, {lineLinks(head0), lineLinks(head1)}, enabled};
//   AttentionLineGeometry g = layoutAttentionLines(scene, QSize(w, h), font);
//   paintAttentionLabels(p, scene, g, focus);
//   paintAttentionLines(p, scene, g);           // returns the number of lines drawn
//
// Long inputs (issue 40): a head is kept as its links, not its map — the weights of at least
// kLineThreshold (most of a softmax row is near 0; at most 50 per query), strongest first — and
// `linksPerQuery` draws only each query's strongest few. Given the visible part of the picture, the
// functions draw the labels there and the lines of the queries there and one screen above and below,
// so that a 4 096-token picture (90 000 px tall) paints what is on screen, not the whole.

#include "core/analysis/top_links.h"

#include <QColor>
#include <QFont>
#include <QRectF>
#include <QStringList>

#include <vector>

class QPainter;

namespace attnlens::ui {

// A qualitative palette (Tableau-like) for heads; wraps after 12.
QColor headColor(int head);

inline constexpr float kLineThreshold = 0.02f; // weights below are not drawn
// A head's lines: the weights of `weights` [left, right] of at least kLineThreshold, strongest first.
AttentionLinks lineLinks(const RowMatrix& weights);

struct AttentionLineScene {
    QStringList left, right;           // query tokens, key tokens
    std::vector<AttentionLinks> heads; // each over [left, right] (lineLinks)
    std::vector<bool> enabled;         // per head
    int linksPerQuery = 0;             // each query's strongest N lines per head; 0: all
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
// emphasised and the other column shaded by the drawn lines' weights to / from the focus.
struct AttentionLineFocus {
    int left = -1;
    int right = -1;
};
// `text`: the labels' colour — a view passes its palette's Text colour (it paints on Base), so that the
// labels read in the dark theme too; the default suits a white picture (exports).
// `visible`: the part of the picture on screen (null: all of it).
void paintAttentionLabels(QPainter& p, const AttentionLineScene& scene, const AttentionLineGeometry& g,
                          AttentionLineFocus focus, const QColor& text = QColor(32, 33, 36),
                          const QRectF& visible = {});
// Draws the lines of every enabled head (only those touching the focus when one is set); with `visible`,
// only the queries within a screen of it.
int paintAttentionLines(QPainter& p, const AttentionLineScene& scene, const AttentionLineGeometry& g,
                        AttentionLineFocus focus = {}, const QRectF& visible = {});

} // namespace attnlens::ui
