#pragma once
// ColorBar: a vertical colour bar with its value range written above (high) and below (low), drawn by
// the same colour function as every map (colorBarImage). The bar spans the widget's height, or the span
// given with setSpan() (the picture it explains, in this widget's coordinates) — the widget never
// resizes itself for it. Empty (nothing drawn) until setRange() is called.

#include "core/export/colormap.h"

#include <QWidget>

namespace attnlens::ui {

class ColorBar : public QWidget {
    Q_OBJECT
public:
    explicit ColorBar(QWidget* parent = nullptr);

    void setColorMap(ColorMap map);
    void setRange(float lo, float hi);
    void clearRange();
    // The bar's top and height in widget coordinates (height <= 0: the whole widget).
    void setSpan(int top, int height);
    bool hasRange() const { return m_hasRange; }
    float low() const { return m_lo; }
    float high() const { return m_hi; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {width(), 60}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    ColorMap m_map = ColorMap::Inferno;
    float m_lo = 0, m_hi = 1;
    bool m_hasRange = false;
    int m_spanTop = 0, m_spanHeight = 0;
};

} // namespace attnlens::ui
