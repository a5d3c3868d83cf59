#pragma once
// An exported attention overlay that explains itself: the picture, then a strip under it with the colour
// bar (the map's range, ticks at both ends and the middle) and a caption ("layer 3 · mean of heads · CLS
// token → patches"). The Vision and Diffusion pages' "Overlay with colour bar" exports draw through it.
//
//   QImage out = captionedOverlay(overlay, ColorMap::Inferno, lo, hi, caption, defaultHeatmapStyle());

#include "core/export/colormap.h"
#include "ui/render/heatmap_scene.h"

#include <QImage>
#include <QString>

namespace attnlens::ui {

// The strip is at least 320 px wide (a narrow picture is centred above it); the caption wraps.
QImage captionedOverlay(const QImage& overlay, ColorMap map, float lo, float hi, const QString& caption,
                        const HeatmapStyle& style);

} // namespace attnlens::ui
