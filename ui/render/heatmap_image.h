#pragma once
// Matrix → QImage through the one colour function the CLI also uses (core/export/colormap.h), so a
// colour seen on screen is the colour exported. Free functions: tests and views call them directly.
//
// Basic usage:
//   QImage img = attnlens::ui::heatmapImage(weights, ColorMap::Viridis, 0.0f, 1.0f, 8); // 8 px per cell
//   QImage bar = attnlens::ui::colorBarImage(ColorMap::Viridis, 200, 12, Qt::Vertical);  // top = high

#include "core/export/colormap.h"
#include "core/tensor/tensor.h"

#include <QColor>
#include <QImage>
#include <QString>

namespace attnlens::ui {

// values [rows, cols] → image of cols·cell × rows·cell pixels (Format_RGB32), pixel-identical to
// attnlens::renderHeatmap: value v maps to colorAt(map, scalePosition(v, lo, hi, scale)); hi <= lo selects
// the matrix's own min and max. Throws attnlens::Error when cell < 1.
QImage heatmapImage(const Eigen::Ref<const RowMatrix>& values, ColorMap map, float lo = 0.0f, float hi = 1.0f,
                    int cell = 1, ColorScale scale = ColorScale::Linear);

// A colour bar of `length` × `thickness` pixels (Qt::Vertical: thickness wide, length high, the top row
// is t = 1; Qt::Horizontal: the left column is t = 0). Pixel i along the bar is t = i / (length - 1).
QImage colorBarImage(ColorMap map, int length, int thickness, Qt::Orientation orientation = Qt::Vertical);

QColor toQColor(Rgb rgb);
// colorAt as a QColor: t clamped to [0, 1], NaN → 0.
QColor colorFor(ColorMap map, float t);
// "Viridis", "Magma", … for menus (colorMapName() gives the lower-case CLI spelling).
QString colorMapDisplayName(ColorMap map);
// Black or white, whichever reads better on `background` (for value annotations on cells).
QColor contrastingTextColor(const QColor& background);

} // namespace attnlens::ui
