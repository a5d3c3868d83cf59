#pragma once
// Scripted runs of the Translate page for `attnlens --screenshot` (README images from the real app)
// and `attnlens --bench-ui` (time from Translate to the first rendered heatmap, and for head/layer
// switches). Both drive the page only through its public actions, like a user would.

#include <QString>

#include <functional>

class StallMeter;
namespace attnlens::ui {
class TranslatePage;
}

struct TranslateScript {
    QString input;     // empty: the page's default sentence
    int beam = 0;      // 0: keep the page's setting; 1 greedy; > 1 beam width
    int maxTokens = 0; // 0: keep the page's setting
    int steps = -1;    // after translating: reset, then this many steps forward (-1: stay at the end)
    QString view;      // matrix | model | lines | embeddings | beam (empty: keep)
    QString kind;      // encoder | decoder | cross (empty: keep)
    int layer = -1;    // from 0; -1 keep
    QString head;      // a head from 0, mean or max (parseHeadSelection); empty: keep
    QString token;     // "s3" / "t1": select source / target piece 3 / 1
    bool wordLevel = false;
    bool hideSpecial = false;
    int beamNode = -1; // select a beam tree node (-1: keep)
};

// Parses `kind`, `view`, `token`, `head`; returns an error message or an empty string.
QString validateScript(const TranslateScript& script);

// Waits for the model, translates, steps, applies the selection, then calls done(ok, message) once.
void runTranslateScript(attnlens::ui::TranslatePage* page, const TranslateScript& script,
                        std::function<void(bool, QString)> done);

// Prints timings (median and range over `repeats`) to stdout, then calls done(exit status). The meter (may be
// null) is paused during the synchronous head / layer switch loop, which blocks on purpose to time repaints.
void runTranslateBench(attnlens::ui::TranslatePage* page, const QString& input, int repeats,
                       StallMeter* meter, std::function<void(int)> done);
