#pragma once
// Labelled heatmaps from the CLI, drawn by the GUI's own functions (ui/render/heatmap_scene.h). Qt's
// painting needs a QGuiApplication for fonts: one is made on first use, on the offscreen platform
// unless QT_QPA_PLATFORM says otherwise, so the CLI still runs without a display.

#include "ui/render/heatmap_scene.h"

#include <string>

namespace cli {

// Writes the scene as PNG or SVG (by the extension of `path`); throws cli::UsageError for another
// extension and attnlens::Error when the file cannot be written. cell 0 = chosen from the shape.
void writeHeatmap(const std::string& path, const attnlens::ui::HeatmapScene& scene, int cell = 0);

// Makes the QGuiApplication Qt's painting needs (offscreen unless QT_QPA_PLATFORM says otherwise), once.
void ensureGuiApplication();

// Throws cli::UsageError unless `path` ends in .png or .svg (check before long work).
void checkHeatmapPath(const std::string& flag, const std::string& path);

} // namespace cli
