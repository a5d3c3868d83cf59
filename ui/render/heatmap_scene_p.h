#pragma once
// Helpers shared by heatmap_scene.cpp and heatmap_paint.cpp. Not for other code.

#include <QFont>
#include <QString>

namespace attnlens::ui {

// Annotation text grows with the cells (about 30 % of the edge, 9–16 px) so that large cells do
// not hold tiny numbers.
QFont heatmapAnnotationFont(const QFont& base, int cell);

} // namespace attnlens::ui
