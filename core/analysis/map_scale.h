#pragma once
// Sink-aware ways of showing one attention map (issue 40). Modern LLMs park most of every row on the first
// token (the attention sink), so on a linear colour bar one column is bright and the rest is dark; people
// take logarithms or clip the bar by hand. These are the scales the Text page and the CLI offer:
//   Linear   colours over [0, 1], the weights as they are;
//   Log      colours by log weight between the smallest positive weight shown (at least max · 1e-6) and the
//            largest: decades apart become steps apart;
//   Clip     linear up to the given percentile of the positive weights shown; everything above it saturates.
// Independently, `ignoredKeys` leaves the first N key columns out (the sink) and renormalises each row over
// the keys that remain, so the map shows how the rest of the attention is shared; those columns are masked.
// The sinks themselves are named: `sinks` lists the key columns that take at least kSinkShare of all the
// map's attention (the column's sum over the rows' sum, on the weights before any renormalising), largest
// first, at most kMostSinks; the views mark them above the matrix.
//
//   ScaledMap m = scaleMap(weights, {MapScaleKind::Log, 99.0f, 1});
//   renderHeatmap(m.values, ColorMap::Viridis, m.lo, m.hi, 8, m.colorScale);   // mask: m.keep

#include "core/export/colormap.h"
#include "core/tensor/tensor.h"

#include <optional>
#include <string_view>
#include <vector>

namespace attnlens {

enum class MapScaleKind { Linear, Log, Clip };

struct MapScale {
    MapScaleKind kind = MapScaleKind::Linear;
    float percentile = 99.0f; // Clip: the colour bar ends at this percentile (0 < p ≤ 100)
    int ignoredKeys = 0;      // the first N key columns left out, rows renormalised over the rest
};

std::string_view mapScaleId(MapScaleKind kind); // "linear", "log", "clip"
std::optional<MapScaleKind> parseMapScale(std::string_view name);

struct KeyShare {
    int column = 0;
    float share = 0.0f; // of all the attention in the map, 0–1
};
inline constexpr float kSinkShare = 0.2f;
inline constexpr int kMostSinks = 4;

struct ScaledMap {
    RowMatrix values;           // [n, m]: the weights, renormalised when keys are ignored (ignored columns 0)
    RowMatrix keep;             // [n, m] 0 at the ignored columns; empty when none are
    float lo = 0.0f, hi = 1.0f; // the colour range
    ColorScale colorScale = ColorScale::Linear;
    std::vector<KeyShare> sinks; // columns with ≥ kSinkShare of the attention, largest first
};

// The key columns of `weights` [n, m] holding at least `minShare` of its total, largest first, at most
// `most`.
std::vector<KeyShare> sinkColumns(const RowMatrix& weights, float minShare = kSinkShare,
                                  int most = kMostSinks);

// weights [n, m], rows of probabilities. Throws attnlens::Error for a percentile outside (0, 100] or a
// negative ignoredKeys.
// Taken by value: a map moved in is scaled in place (a linear scale keeps it as it is).
ScaledMap scaleMap(RowMatrix weights, const MapScale& scale);

} // namespace attnlens
