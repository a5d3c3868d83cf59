#pragma once
// Scripted set-up of the Vision page for `attnlens --screenshot … --page 2`: applied to its document once
// the first image is on screen, as a user's clicks would.

#include <QString>

namespace attnlens::ui {
class VisionDocument;
}

struct VisionScript {
    QString image; // opened once the model has loaded (default: the first sample)
    QString texts; // CLIP: "a dog | a cat", run with every picture (VisionDocument::setTexts)
    // cls | norms (the token-norm map) | text:K / relevance:K (CLIP) | ROW,COL[;ROW,COL…] (patches from 0);
    // empty: keep
    QString query;
    QString layer; // from 0; empty: keep
    QString head;  // a head from 0, mean or max; empty: keep
    bool keySide = false;
    bool any() const { return !query.isEmpty() || !layer.isEmpty() || !head.isEmpty() || keySide; }
};

// Returns an error message or an empty string.
QString applyVisionScript(attnlens::ui::VisionDocument* doc, const VisionScript& script);
