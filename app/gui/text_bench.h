#pragma once
// `attnlens --bench-ui --page 4 [--model DIR] [--input TEXT]`: the Text page driven like a user on a long
// text (issue 40: 4 096 tokens of a Qwen2.5-0.5B-shaped folder), timed — the run until its result, then until
// its matrix is on screen (made on the map lane when the attention is kept on demand), a second's look at it
// (as a user gives it; the map lane meanwhile reserves the heap of the next maps), then switching to other
// (layer, head) maps (each made on demand when the run keeps its attention that way), zoom and pan steps and
// hovering rows of the matrix, each followed by a synchronous repaint; a StallMeter reports the longest time
// the window stopped answering while the run was on the worker. Last, Cancel pressed 100 ms, 400 ms and 1.5 s
// into a new run (256 tokens to generate) until the page has no job left.

#include <QString>

#include <functional>

struct GuiPages;
namespace attnlens::ui {
class MainWindow;
}

void runTextUiBench(attnlens::ui::MainWindow& window, const GuiPages& pages, const QString& input,
                    std::function<void(int)> done);
