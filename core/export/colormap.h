#pragma once
// Perceptual colour maps and the one function that turns a matrix of values into RGB pixels.
// Every heatmap in the GUI (via ui/render → QImage) and every PNG the CLI writes goes through here,
// so a colour seen on screen is the colour exported.

#include "core/tensor/tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// Diverging: blue (0) – white (0.5) – red (1), for signed values on a symmetric scale (difference maps); it
// is not among allColorMaps(), the sequential maps offered for attention weights.
enum class ColorMap { Viridis, Magma, Inferno, Plasma, Cividis, Grey, Diverging };

struct Rgb {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

// std::lround for x ≥ 0 (half away from zero), exactly, without a libm call: per-pixel loops use it.
inline int roundNonNegative(float x) {
    const float whole =
        static_cast<float>(static_cast<int>(x)); // x ≥ 0: truncation is floor; x − whole is exact
    return static_cast<int>(whole) + (x - whole >= 0.5f ? 1 : 0);
}

// t is clamped to [0, 1] and mapped to entry round(t · 255) of a 256-entry table; NaN maps to 0.
Rgb colorAt(ColorMap map, float t);
std::string_view colorMapName(ColorMap map);
std::optional<ColorMap> parseColorMap(std::string_view name);
std::vector<ColorMap> allColorMaps();

// An 8-bit RGB image, row-major, 3 bytes per pixel, no padding.
struct RgbImage {
    int width = 0;
    int height = 0;
    std::vector<uint8_t> pixels;
    Rgb pixel(int x, int y) const {
        const auto* p = &pixels[(static_cast<size_t>(y) * width + x) * 3];
        return {p[0], p[1], p[2]};
    }
};

// How a value finds its place on the colour bar: Linear (v − lo) / (hi − lo); Log (log v − log lo) /
// (log hi − log lo), for weights that span decades (an attention sink beside everything else): values at or
// below lo (and 0) take the low end, lo must be > 0 (a lo ≤ 0 is taken as hi · 1e-4).
enum class ColorScale { Linear, Log };
float scalePosition(float v, float lo, float hi, ColorScale scale);
// The low end of a log range over weights whose smallest positive one is `smallest` and largest `hi`: at most
// six decades below hi (underflowing softmax tails would stretch the bar to 1e-30).
inline float logRangeLow(float smallest, float hi) {
    return smallest > hi * 1e-6f ? smallest : hi * 1e-6f;
}
// The value at position t ∈ [0, 1] of the bar (the inverse: the bar's tick labels).
float scaleValueAt(float t, float lo, float hi, ColorScale scale);

// values [rows, cols] → image of cols·cell × rows·cell pixels; value v maps to scalePosition(v, lo, hi).
// hi <= lo means "use the matrix's own min and max" (a constant matrix maps to 0).
RgbImage renderHeatmap(const Eigen::Ref<const RowMatrix>& values, ColorMap map, float lo = 0.0f,
                       float hi = 1.0f, int cell = 1, ColorScale scale = ColorScale::Linear);
// The same colours, one pixel per cell, as 0xffRRGGBB words into `pixels` (rows `stride` words apart; what
// Qt calls Format_RGB32), for a view that colours a 4 096² map on every head switch. lo < hi.
void renderHeatmapArgb(const Eigen::Ref<const RowMatrix>& values, ColorMap map, float lo, float hi,
                       ColorScale scale, uint32_t* pixels, int64_t stride);

} // namespace attnlens
