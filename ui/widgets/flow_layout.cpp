#include "ui/widgets/flow_layout.h"

#include <QSpacerItem>
#include <QWidget>

#include <algorithm>

namespace attnlens::ui {

namespace {
// An item's size on its row: its hint, never under its minimum (which the item would enforce anyway).
QSize rowSize(const QLayoutItem* item) {
    return item->sizeHint().expandedTo(item->minimumSize());
}
} // namespace

FlowLayout::FlowLayout(QWidget* parent) : QLayout(parent) {}

FlowLayout::~FlowLayout() {
    while (QLayoutItem* item = takeAt(0))
        delete item;
}

void FlowLayout::addWidget(QWidget* widget, int stretch) {
    addChildWidget(widget);
    m_items.push_back({new QWidgetItem(widget), stretch});
    invalidate();
}

void FlowLayout::addSpacing(int width) {
    addItem(new QSpacerItem(width, 0, QSizePolicy::Fixed, QSizePolicy::Minimum));
}

void FlowLayout::addItem(QLayoutItem* item) {
    m_items.push_back({item, 0});
    invalidate();
}

QLayoutItem* FlowLayout::itemAt(int index) const {
    return index >= 0 && index < count() ? m_items[index].item : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index) {
    if (index < 0 || index >= count()) return nullptr;
    QLayoutItem* item = m_items.takeAt(index).item;
    invalidate();
    return item;
}

int FlowLayout::heightForWidth(int width) const {
    return arrange(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const {
    // As narrow as the widest item (one item a row), as tall as the rows need at that width.
    QSize size;
    for (const Entry& e : m_items)
        if (!e.item->isEmpty()) size = size.expandedTo(e.item->minimumSize());
    const QMargins m = contentsMargins();
    size += QSize(m.left() + m.right(), m.top() + m.bottom());
    return size;
}

QSize FlowLayout::sizeHint() const {
    // Everything on one row.
    int width = 0, height = 0, shown = 0;
    for (const Entry& e : m_items) {
        if (e.item->isEmpty()) continue;
        width += e.item->sizeHint().width();
        height = std::max(height, e.item->sizeHint().height());
        ++shown;
    }
    const QMargins m = contentsMargins();
    return {width + std::max(0, shown - 1) * spacing() + m.left() + m.right(), height + m.top() + m.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::arrange(const QRect& rect, bool apply) const {
    const QRect area = rect.marginsRemoved(contentsMargins());
    const int gap = std::max(0, spacing());
    int y = area.y();
    int i = 0;
    const int n = count();
    while (i < n) {
        // One row: as many items as fit (at least one).
        int used = 0, height = 0, stretch = 0, end = i;
        for (; end < n; ++end) {
            const Entry& e = m_items[end];
            if (e.item->isEmpty()) continue;
            const int w = rowSize(e.item).width();
            if (used > 0 && used + gap + w > area.width()) break;
            used += (used > 0 ? gap : 0) + w;
            height = std::max(height, rowSize(e.item).height());
            stretch += e.stretch;
        }
        if (apply) {
            const int spare = std::max(0, area.width() - used);
            int x = area.x(), given = 0;
            bool first = true;
            for (int k = i; k < end; ++k) {
                const Entry& e = m_items[k];
                if (e.item->isEmpty()) continue;
                int w = rowSize(e.item).width();
                if (stretch > 0 && e.stretch > 0) {
                    given += e.stretch;
                    w += spare * given / stretch - spare * (given - e.stretch) / stretch;
                }
                w = std::min(w, area.right() + 1 - x - (first ? 0 : gap)); // an item wider than the row
                if (!first) x += gap;
                const int h = std::min(height, rowSize(e.item).height());
                e.item->setGeometry(QRect(x, y + (height - h) / 2, std::max(0, w), h));
                x += w;
                first = false;
            }
        }
        y += height + (end < n ? gap : 0);
        i = end;
    }
    return y - area.y() + contentsMargins().top() + contentsMargins().bottom();
}

} // namespace attnlens::ui
