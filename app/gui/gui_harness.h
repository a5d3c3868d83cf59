#pragma once
// What the GUI does after parsing its options: the pages, then the window — shown for a user, or driven
// for a README screenshot (`--screenshot`: the page is set up, and grabbed once it says it is ready) or
// the UI benchmark (`--bench-ui`). Readiness comes from the pages' own signals (a finished translation,
// an image shown, a run finished and the worker idle), not from polling.

#include "gui_options.h"

namespace attnlens::ui {
class DiffusionPage;
class TextPage;
class TextToImagePage;
class MainWindow;
class PlaygroundPage;
class TranslatePage;
class VisionPage;
} // namespace attnlens::ui

struct GuiPages {
    attnlens::ui::PlaygroundPage* playground = nullptr;
    attnlens::ui::TranslatePage* translate = nullptr;
    attnlens::ui::VisionPage* vision = nullptr;
    attnlens::ui::DiffusionPage* diffusion = nullptr;
    attnlens::ui::TextPage* text = nullptr;
    attnlens::ui::TextToImagePage* t2i = nullptr;
};

// Adds the six pages in GuiPage order.
GuiPages addPages(attnlens::ui::MainWindow& window, const GuiOptions& options);
// Opens --model, shows the window and runs the event loop (with the screenshot or benchmark driver when
// asked). Returns the exit status: 0, or 2 for a bad start or a failed screenshot.
int runGui(attnlens::ui::MainWindow& window, const GuiPages& pages, const GuiOptions& options);
