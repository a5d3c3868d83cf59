#pragma once
// The difference picture (issue 22, M12): A, B and A − B side by side as labelled heatmaps — A and B on one
// shared scale (the sequential map), A − B on a symmetric diverging scale (blue: B larger, red: A larger) —
// with a title over each and the summary (max |Δ|, Jensen–Shannon divergence, what could not be matched)
// under them. A free function: `attnlens-cli diff --out` and the pages' difference views draw the same
// picture.

#include "core/analysis/attention_diff.h"
#include "ui/render/heatmap_scene.h"

#include <QImage>
#include <QString>

namespace attnlens::ui {

struct DifferenceText {
    QString a, b;                  // what A and B are ("Das Haus ist klein. · cross · layer 2 · mean")
    QString rowTitle, columnTitle; // axis titles
};

// Summary lines: "rows matched by token: 5 (only in B: very)", "max |Δ| = 0.41 · mean JS divergence 0.12
// bits".
QStringList differenceSummary(const AttentionDiff& d);
QImage renderDifference(const AttentionDiff& d, const DifferenceText& text, const HeatmapStyle& style,
                        ColorMap map = ColorMap::Viridis);

} // namespace attnlens::ui
