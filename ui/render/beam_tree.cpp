#include "ui/render/beam_tree.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <functional>

namespace attnlens::ui {

namespace {
constexpr double kBoxW = 104, kBoxH = 38, kColGap = 34, kRowGap = 8, kMargin = 14;
}

int BeamTreeLayout::nodeAt(QPointF point) const {
    for (size_t i = 0; i < boxes.size(); ++i)
        if (boxes[i].contains(point)) return static_cast<int>(i);
    return -1;
}

BeamTreeLayout layoutBeamTree(const std::vector<BeamTreeItem>& items) {
    BeamTreeLayout l;
    l.boxes.resize(items.size());
    if (items.empty()) return l;
    std::vector<std::vector<int>> children(items.size());
    std::vector<int> indexOf; // id → index
    for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].id >= static_cast<int>(indexOf.size()))
            indexOf.resize(static_cast<size_t>(items[i].id) + 1, -1);
        indexOf[static_cast<size_t>(items[i].id)] = static_cast<int>(i);
    }
    std::vector<int> roots;
    for (size_t i = 0; i < items.size(); ++i) {
        const int p = items[i].parent;
        const int pi = p >= 0 && p < static_cast<int>(indexOf.size()) ? indexOf[static_cast<size_t>(p)] : -1;
        if (pi >= 0)
            children[static_cast<size_t>(pi)].push_back(static_cast<int>(i));
        else
            roots.push_back(static_cast<int>(i));
    }
    // Leaves take successive rows (depth-first); a parent sits at the middle of its children.
    double nextRow = 0;
    int maxDepth = 0;
    std::function<double(int)> place = [&](int i) -> double {
        const auto& ch = children[static_cast<size_t>(i)];
        double row;
        if (ch.empty())
            row = nextRow++;
        else {
            double first = 0, last = 0;
            for (size_t c = 0; c < ch.size(); ++c) {
                const double r = place(ch[c]);
                if (c == 0) first = r;
                last = r;
            }
            row = (first + last) / 2;
        }
        const int d = items[static_cast<size_t>(i)].depth;
        maxDepth = std::max(maxDepth, d);
        l.boxes[static_cast<size_t>(i)] =
            QRectF(kMargin + d * (kBoxW + kColGap), kMargin + row * (kBoxH + kRowGap), kBoxW, kBoxH);
        return row;
    };
    for (int r : roots)
        place(r);
    l.size = QSize(static_cast<int>(2 * kMargin + (maxDepth + 1) * (kBoxW + kColGap)),
                   static_cast<int>(2 * kMargin + std::max(1.0, nextRow) * (kBoxH + kRowGap)));
    return l;
}

void paintBeamTree(QPainter& p, const std::vector<BeamTreeItem>& items, const BeamTreeLayout& layout,
                   int selected) {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    std::vector<int> indexOf;
    for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].id >= static_cast<int>(indexOf.size()))
            indexOf.resize(static_cast<size_t>(items[i].id) + 1, -1);
        indexOf[static_cast<size_t>(items[i].id)] = static_cast<int>(i);
    }
    // Edges first.
    for (size_t i = 0; i < items.size(); ++i) {
        const int p0 = items[i].parent;
        if (p0 < 0 || p0 >= static_cast<int>(indexOf.size()) || indexOf[static_cast<size_t>(p0)] < 0)
            continue;
        const QRectF& a = layout.boxes[static_cast<size_t>(indexOf[static_cast<size_t>(p0)])];
        const QRectF& b = layout.boxes[i];
        QPainterPath path(QPointF(a.right(), a.center().y()));
        const double mx = (a.right() + b.left()) / 2;
        path.cubicTo(QPointF(mx, a.center().y()), QPointF(mx, b.center().y()),
                     QPointF(b.left(), b.center().y()));
        const bool strong = items[i].best;
        p.setPen(QPen(strong ? QColor(26, 115, 232)
                             : (items[i].live ? QColor(120, 120, 120) : QColor(200, 200, 200)),
                      strong ? 2.4 : 1.2));
        p.setBrush(Qt::NoBrush);
        p.drawPath(path);
    }
    const QFontMetrics fm(p.font());
    QFont small = p.font();
    small.setPointSizeF(std::max(6.0, p.font().pointSizeF() * 0.85));
    const QFont base = p.font();
    for (size_t i = 0; i < items.size(); ++i) {
        const BeamTreeItem& it = items[i];
        const QRectF& r = layout.boxes[i];
        QColor fill =
            it.best ? QColor(232, 240, 254) : (it.live ? QColor(255, 255, 255) : QColor(245, 245, 245));
        QColor border =
            it.finished ? QColor(24, 128, 56) : (it.best ? QColor(26, 115, 232) : QColor(190, 190, 190));
        const bool sel = static_cast<int>(i) == selected;
        p.setBrush(fill);
        p.setPen(QPen(sel ? QColor(234, 67, 53) : border, sel ? 2.6 : (it.finished ? 1.8 : 1.0)));
        p.drawRoundedRect(r, 5, 5);
        p.setPen(it.live || it.best || it.finished ? QColor(32, 33, 36) : QColor(128, 128, 128));
        p.setFont(base);
        const QRectF top(r.left() + 6, r.top() + 2, r.width() - 12, r.height() / 2);
        p.drawText(top, Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(it.token, Qt::ElideRight, int(top.width())));
        p.setFont(small);
        p.setPen(QColor(95, 99, 104));
        const QRectF bottom(r.left() + 6, r.center().y(), r.width() - 12, r.height() / 2 - 2);
        const QString text =
            it.parent < 0 ? QCoreApplication::translate("BeamTree", "start")
                          : QStringLiteral("%1  (%2)").arg(it.score, 0, 'f', 2).arg(it.logprob, 0, 'f', 2);
        p.drawText(bottom, Qt::AlignLeft | Qt::AlignVCenter, text);
    }
    p.setFont(base);
    p.restore();
}

} // namespace attnlens::ui
