#pragma once
// `attnlens-cli text --heatmap OUT.png|svg`: one labelled attention matrix of the text, drawn by the Text
// page's own heatmap code with the page's sink-aware scales (core/analysis/map_scale.h): --layer L,
// --head H|mean|max|min, --scale linear|log|clip (clip: at the 99th percentile), --ignore-first (the first
// token's column masked, rows renormalised over the rest), --colormap NAME, --cell PX (a long map is drawn as
// its blocks' maxima: ui/render/heatmap_scene.h blockMaximaScene). `--npy OUT.npy` writes
// the same layer / head selection's map [T, T] (float32, before any scale) — with --heatmap or alone. A long
// text's attention is kept on demand (core/contract/attention_store.h): only the heads drawn are made.

#include "cli_common.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/map_scale.h"
#include "core/export/colormap.h"
#include "core/models/text_folder.h"

#include <optional>
#include <string>
#include <vector>

namespace cli {

struct TextHeatmapRequest {
    std::string path; // --heatmap, or empty
    std::string npy;  // --npy, or empty
    int layer = 0;
    attnlens::HeadSelection heads;
    attnlens::MapScale scale;
    attnlens::ColorMap colorMap = attnlens::ColorMap::Viridis;
    int cell = 0;
};

// The options above, checked before the model runs; nullopt without --heatmap or --npy (their options alone
// are a UsageError).
std::optional<TextHeatmapRequest> parseTextHeatmap(const Args& args, const attnlens::TextFolder& folder);
// Draws layer / heads of the run's attention [L, H, T, T] over `ids` into request.path and/or writes the map
// to request.npy.
void writeTextHeatmap(const TextHeatmapRequest& request, const attnlens::TextFolder& folder,
                      const std::vector<int>& ids, const attnlens::AttentionStore& attention);

} // namespace cli
