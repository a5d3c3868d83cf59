#pragma once
// `attnlens --bench-ui`: the real window driven like a user, timed. Translate (first heatmap, whole
// translation, head / layer switches; translate_driver), then the Diffusion page's first run (model loading
// and 50 DDIM steps shown as they come) and the Vision page analysing a sample — with a StallMeter ticking on
// the GUI thread throughout, so the report ends with the longest time the window stopped answering in each
// phase (the timed synchronous switch loop left out).

#include <QString>

#include <functional>

struct GuiPages;
namespace attnlens::ui {
class MainWindow;
}

void runUiBench(attnlens::ui::MainWindow& window, const GuiPages& pages, const QString& input, int repeats,
                std::function<void(int)> done);
