#pragma once
// Scripted set-up of the Diffusion page for `attnlens --screenshot … --page 3` (README images from the
// real app): the generation settings go into the page's controls before it first shows (the page then
// generates), and the view options apply once that run has finished — through the page's public
// document, as a user's clicks would.

#include <QString>

namespace attnlens::ui {
class DiffusionPage;
}

struct DiffusionScript {
    QString className; // a class number or name; empty: keep
    QString seed;      // empty: keep
    QString scheduler; // ddim | ddpm; empty: keep
    QString steps;     // denoising steps; empty: keep
    QString step;      // timeline step from 0; empty: the last
    QString query;     // ROW,COL or ROW0,COL0:ROW1,COL1 (image pixels from 0)
    QString layer;     // attention layer index from 0 (execution order)
    QString head;      // a head from 0, mean or max
    QString on;        // x0 | xt
    bool keySide = false;
};

// Whether a script's value is a whole number (into `value`); shared with the Text to image script.
bool scriptInt(const QString& text, int& value);

// Fills the Generate controls. Returns an error message or an empty string.
QString applyDiffusionSettings(attnlens::ui::DiffusionPage* page, const DiffusionScript& script);
// Applies step, query, layer, head, image and key side to the finished run. Returns an error or empty.
QString applyDiffusionView(attnlens::ui::DiffusionPage* page, const DiffusionScript& script);
