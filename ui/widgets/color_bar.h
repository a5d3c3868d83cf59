#pragma once
// ColorBar: a vertical colour bar with its value range written above (high) and below (low), drawn by
// the same colour function as every map (colorBarImage). The bar fills the widget's height; give it
// the height of the picture it explains. Empty (nothing drawn) until setRange() is called.

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
    bool hasRange() const { return m_hasRange; }
    float low() const { return m_lo; }
    float high() const { return m_hi; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {40, 80}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    ColorMap m_map = ColorMap::Inferno;
    float m_lo = 0, m_hi = 1;
    bool m_hasRange = false;
};

} // namespace attnlens::ui
