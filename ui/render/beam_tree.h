#pragma once
// Beam search tree drawing: one box per node (token and cumulative log-probability), columns by
// depth, edges from parent to child. Free functions shared by the Beam view and its exports.
//
//   BeamTreeLayout layout = layoutBeamTree(items);
//   paintBeamTree(p, items, layout, selectedNode);
//   int node = layout.nodeAt(point);

#include <QColor>
#include <QPointF>
#include <QRectF>
#include <QSize>
#include <QString>

#include <vector>

class QPainter;

namespace attnlens::ui {

struct BeamTreeItem {
    int id = 0;
    int parent = -1; // -1: the root
    int depth = 0;
    QString token;
    float score = 0.0f; // cumulative log-probability
    float logprob = 0.0f;
    bool finished = false; // a finished hypothesis (ends in </s>)
    bool live = false;     // on a running beam's path
    bool best = false;     // on the best hypothesis' path
};

struct BeamTreeLayout {
    std::vector<QRectF> boxes; // indexed like the items
    QSize size;
    int nodeAt(QPointF point) const; // item index, -1 outside every box
};

// Items must be in an order where a parent comes before its children (DecodeSession's node order).
BeamTreeLayout layoutBeamTree(const std::vector<BeamTreeItem>& items);
void paintBeamTree(QPainter& p, const std::vector<BeamTreeItem>& items, const BeamTreeLayout& layout,
                   int selectedIndex);

} // namespace attnlens::ui
