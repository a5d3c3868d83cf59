#pragma once
// The GUI's command line: which page to open and, for README screenshots and the UI benchmark, what to
// set up on it. One grammar with attnlens-cli: layers, heads, steps and pixels count from 0; --head takes
// a number, mean or max; --query names what is looked at (Vision: cls, norms or ROW,COL[;ROW,COL…] patches;
// Diffusion: ROW,COL or ROW,COL:ROW,COL pixels).
//
//   attnlens [SESSION.attnlens] [--page N] [--size WxH] [--dark] [--model DIR] [--precision fp32|bf16]
//            [--screenshot OUT.png [--grab OBJECT-NAME] [--wait S]] [--bench-ui [--repeats N]]
//            Text:       [--input TEXT] [--view NAME] [--layer L] [--head H] [--find TEXT]
//                        [--value-weighted] [--kv-policy POLICY]
//                        (--bench-ui --page 4: the Text page timed)
//            Translate:  [--input TEXT] [--beam N] [--max-tokens N] [--steps K] [--view NAME] [--kind K]
//                        [--layer L] [--head H] [--token sN|tN] [--words] [--hide-special] [--beam-node N]
//            Vision:     [--image PATH] [--query cls|norms|ROW,COL[;…]] [--layer L] [--head H] [--key-side]
//            Diffusion:  [--class C] [--seed S] [--scheduler ddim|ddpm] [--steps N] [--step S]
//                        [--query ROW,COL[:ROW,COL]] [--layer L] [--head H] [--on x0|xt] [--key-side]
// --steps: Translate: reset, then step forward K times; Diffusion: the denoising steps.
// --layer/--head/--query/--key-side apply to the page opened (--page).

#include "diffusion_driver.h"
#include "t2i_driver.h"
#include "translate_driver.h"
#include "vision_driver.h"

#include <QSize>
#include <QString>
#include <QStringList>

class QApplication;

enum class GuiPage { Playground = 0, Translate = 1, Vision = 2, Diffusion = 3, Text = 4, TextToImage = 5 };
constexpr int kGuiPages = 6;

struct GuiOptions {
    GuiPage page = GuiPage::Playground;
    QSize size; // empty: the window's default
    bool dark = false;
    QString model;      // opened at start (File → Open model…)
    QString session;    // a .attnlens file opened at start (File → Open session…)
    QString precision;  // "fp32" / "bf16" (Compute menu); empty: the remembered choice
    QString screenshot; // write a PNG of the window (or of --grab) and exit
    QString grab;
    int waitSeconds = 60; // --screenshot: the longest wait for the page's run
    QString layer,
        head;          // --layer, --head as typed (the Text page reads them; the others' scripts parse them)
    QString find;      // Text: the matrix's find bar opened on this text, its first match shown
    int textView = -1; // Text: --view as the index of the page's tab (textViewNames), -1 keep
    bool valueWeighted = false; // the page's value-weighted maps (Text to image: the run keeps them)
    QString kvPolicy;           // Text: the KV cache tab's policy; empty: its default
    bool benchUi = false;
    int repeats = 10;
    TranslateScript translate;
    VisionScript vision;
    DiffusionScript diffusion;
    T2iScript t2i;
};

// Parses the application's arguments (--help and --version print and exit). Returns an error message
// ("--page 7: expected 0..3") or an empty string.
QString parseGuiOptions(const QApplication& app, GuiOptions& options);
// The Text page's tabs as --view names them, in the page's order.
const QStringList& textViewNames();
