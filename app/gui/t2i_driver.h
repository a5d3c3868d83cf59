#pragma once
// Scripted set-up of the Text to image page for `attnlens --screenshot … --page 5` (README images from the
// real app): the prompt, seed, steps and scheduler go into the controls before the page first shows (it
// then generates); the word, pixel, layer, head, step and strip apply once the run has finished — through
// the page's public document, as a user's clicks would.

#include "diffusion_driver.h"

#include <QString>

namespace attnlens::ui {
class TextToImagePage;
}

struct T2iScript {
    QString prompt;    // --input; empty: keep
    QString word;      // --word: a word of the prompt (its first chip) or a chip index from 0
    QString view;      // --view words | steps | u: the strip shown
    DiffusionScript d; // --seed, --steps, --scheduler (pndm|ddim|euler|dpm), --step, --query ROW,COL,
                       // --layer (cross-attention layer from 0), --head
};

// Fills the Generate controls. Returns an error message or an empty string.
QString applyT2iSettings(attnlens::ui::TextToImagePage* page, const T2iScript& script);
// Applies word, pixel, layer, head, step and strip to the finished run. Returns an error or empty.
QString applyT2iView(attnlens::ui::TextToImagePage* page, const T2iScript& script);
