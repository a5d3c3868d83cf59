#include "core/analysis/map_scale.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnlens {

std::string_view mapScaleId(MapScaleKind kind) {
    switch (kind) {
    case MapScaleKind::Linear:
        return "linear";
    case MapScaleKind::Log:
        return "log";
    case MapScaleKind::Clip:
        return "clip";
    }
    return "linear";
}

std::optional<MapScaleKind> parseMapScale(std::string_view name) {
    for (MapScaleKind k : {MapScaleKind::Linear, MapScaleKind::Log, MapScaleKind::Clip})
        if (mapScaleId(k) == name) return k;
    return std::nullopt;
}

namespace {

// The positive values of the columns from `first` on.
std::vector<float> positiveValues(const RowMatrix& v, Eigen::Index first) {
    std::vector<float> out;
    for (Eigen::Index r = 0; r < v.rows(); ++r)
        for (Eigen::Index c = first; c < v.cols(); ++c)
            if (v(r, c) > 0.0f && std::isfinite(v(r, c))) out.push_back(v(r, c));
    return out;
}

// The p-th percentile (nearest rank) of `values` (not empty).
float percentileOf(std::vector<float> values, float p) {
    const size_t rank = static_cast<size_t>(std::ceil(p / 100.0f * static_cast<float>(values.size())));
    const size_t i = std::clamp<size_t>(rank, 1, values.size()) - 1;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values.end());
    return values[i];
}

} // namespace

std::vector<KeyShare> sinkColumns(const RowMatrix& weights, float minShare, int most) {
    std::vector<KeyShare> out;
    if (weights.size() == 0) return out;
    // float sums (a 4 096² map in a few ms); a NaN anywhere leaves no sinks rather than wrong ones.
    const Eigen::VectorXf columns = weights.colwise().sum().transpose();
    const double total = columns.cast<double>().sum();
    if (!(total > 0.0) || !std::isfinite(total)) return out;
    for (Eigen::Index c = 0; c < columns.size(); ++c)
        if (const double share = columns(c) / total; share >= minShare)
            out.push_back({static_cast<int>(c), static_cast<float>(share)});
    std::stable_sort(out.begin(), out.end(),
                     [](const KeyShare& a, const KeyShare& b) { return a.share > b.share; });
    if (most >= 0 && out.size() > static_cast<size_t>(most)) out.resize(static_cast<size_t>(most));
    return out;
}

ScaledMap scaleMap(RowMatrix weights, const MapScale& scale) {
    if (!(scale.percentile > 0.0f && scale.percentile <= 100.0f))
        throw Error("the clip percentile must be in (0, 100], got " + std::to_string(scale.percentile));
    if (scale.ignoredKeys < 0) throw Error("the number of ignored keys cannot be negative");
    ScaledMap out;
    out.sinks = sinkColumns(weights);
    out.values = std::move(weights);
    const Eigen::Index ignored = std::min<Eigen::Index>(scale.ignoredKeys, out.values.cols());
    if (ignored > 0) {
        out.keep = RowMatrix::Ones(out.values.rows(), out.values.cols());
        out.keep.leftCols(ignored).setZero();
        out.values.leftCols(ignored).setZero();
        for (Eigen::Index r = 0; r < out.values.rows(); ++r) {
            const double rest = out.values.row(r).cast<double>().sum();
            if (rest > 0.0) out.values.row(r) /= static_cast<float>(rest);
        }
    }
    if (scale.kind == MapScaleKind::Linear) return out;
    const std::vector<float> positive = positiveValues(out.values, ignored);
    if (positive.empty()) return out;
    if (scale.kind == MapScaleKind::Clip) {
        out.hi = percentileOf(positive, scale.percentile);
        return out;
    }
    out.hi = *std::max_element(positive.begin(), positive.end());
    out.lo = logRangeLow(*std::min_element(positive.begin(), positive.end()), out.hi);
    if (!(out.hi > out.lo)) out.lo = out.hi * 0.1f;
    out.colorScale = ColorScale::Log;
    return out;
}

} // namespace attnlens
