#pragma once
// A translation's attention matrix as a heatmap scene: the axis titles the Translate page's matrix view
// shows, and the whole scene `attnlens-cli translate --heatmap` draws (pieces as labels, fixed [0, 1]).
//
//   HeatmapScene s = traceHeatmapScene(*trace, AttentionKind::Cross, layer, heads, startPiece);
//   saveHeatmapPng(s, defaultHeatmapStyle(), "cross.png");

#include "core/analysis/attention_maps.h"
#include "core/decode/trace_attention.h"
#include "ui/render/heatmap_scene.h"

#include <QString>

namespace attnlens::ui {

// "source", "target" or, for decoder self-attention's keys, "decoder input".
QString traceAxisName(AttentionKind kind, bool rows);
// "target (query)", "source (key)", …
QString traceAxisTitle(AttentionKind kind, bool rows);

// The [Q, K] matrix of `layer` for `heads`, labelled with the trace's pieces. Throws attnlens::Error for
// a layer or head out of range or a trace without that attention.
HeatmapScene traceHeatmapScene(const TranslationTrace& trace, AttentionKind kind, int layer,
                               const HeadSelection& heads, const std::string& decoderStartPiece);

} // namespace attnlens::ui
