#pragma once
// The Diffusion page's saved session (ui/shell/session.h), read in one place: what checkSession() checks is
// what the restore applies. A run is deterministic for its model, class, seed, scheduler and step count, so
// the session keeps those and the run is made again on restore; then the step shown, the query and the map's
// settings come back. Keys: model_dir (absent: the built-in model), scheduler, steps, seed, class, generated,
// step, layer, head, fusion, query ([row0, col0, row1, col1]), key_side, on_noisy, opacity, color_map,
// ablated ([[layer, head], …]), pinned.

#include "core/analysis/attention_maps.h"
#include "core/contract/run_controls.h"
#include "core/diffusion/unet_maps.h"
#include "core/export/colormap.h"
#include "ui/diffusion/diffusion_document.h"
#include "ui/shell/session.h"

#include <QJsonObject>

#include <optional>

namespace attnlens::ui {

struct DiffusionSession {
    DiffusionSettings settings;
    bool generated = false;
    // The view (applyView) and the look (applyLook).
    int step = -1, layer = 0, head = -1;
    HeadFusion fusion = HeadFusion::Mean;
    std::optional<PixelRegion> query;
    bool keySide = false, onNoisy = false, valueWeighted = false;
    double opacity = 0.6;
    ColorMap colorMap = ColorMap::Viridis;
    HeadList ablated;
    std::optional<PinnedMap> pinned;

    // The first problem is kept in `reader` (defaults returned for the rest).
    static DiffusionSession parse(SessionReader& reader);
    // The document's view and look (the page adds the settings, heads off and the pin).
    static DiffusionSession capture(const DiffusionDocument& doc);
    void write(QJsonObject& state) const; // every key but model_dir
    void applyLook(DiffusionDocument& doc) const;
    void applyView(DiffusionDocument& doc) const; // once the run is made again
};

} // namespace attnlens::ui
