#include "ui/widgets/color_bar.h"

#include "ui/render/heatmap_image.h"

#include <QPainter>

namespace attnlens::ui {

ColorBar::ColorBar(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);
    setFixedWidth(fontMetrics().horizontalAdvance(QStringLiteral("-8.88e-88")) + 8);
}

void ColorBar::setColorMap(ColorMap map) {
    m_map = map;
    update();
}

void ColorBar::setRange(float lo, float hi) {
    m_lo = lo;
    m_hi = hi;
    m_hasRange = true;
    update();
}

void ColorBar::clearRange() {
    m_hasRange = false;
    update();
}

void ColorBar::setSpan(int top, int height) {
    if (top == m_spanTop && height == m_spanHeight) return;
    m_spanTop = top;
    m_spanHeight = height;
    update();
}

QSize ColorBar::sizeHint() const {
    return {width(), 120};
}

void ColorBar::paintEvent(QPaintEvent*) {
    if (!m_hasRange) return;
    QPainter p(this);
    const int text = fontMetrics().height();
    const int top = m_spanHeight > 0 ? std::max(text + 2, m_spanTop) : text + 2;
    const int bottom =
        m_spanHeight > 0 ? std::min(height() - text - 2, m_spanTop + m_spanHeight) : height() - text - 2;
    const QRect bar((width() - 14) / 2, top, 14, std::max(8, bottom - top));
    p.drawImage(bar, colorBarImage(m_map, bar.height(), bar.width()));
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(bar.adjusted(0, 0, -1, -1));
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(0, bar.top() - text - 2, width(), text), Qt::AlignCenter, QString::number(m_hi, 'g', 3));
    p.drawText(QRect(0, bar.bottom() + 2, width(), text), Qt::AlignCenter, QString::number(m_lo, 'g', 3));
}

} // namespace attnlens::ui
