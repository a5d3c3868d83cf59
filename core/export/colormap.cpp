#include "core/export/colormap.h"

#include "core/util/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace attnlens {

namespace {
#include "core/export/colormap_tables.inc"

struct Entry {
    ColorMap map;
    std::string_view name;
    const unsigned char (*table)[3];
};
constexpr Entry kMaps[] = {
    {ColorMap::Viridis, "viridis", kViridisTable}, {ColorMap::Magma, "magma", kMagmaTable},
    {ColorMap::Inferno, "inferno", kInfernoTable}, {ColorMap::Plasma, "plasma", kPlasmaTable},
    {ColorMap::Cividis, "cividis", kCividisTable}, {ColorMap::Grey, "grey", nullptr},
    {ColorMap::Diverging, "diverging", nullptr},
};

// ColorBrewer RdBu's ends and middle (#2166ac, #f7f7f7, #b2182b), interpolated linearly in RGB.
Rgb diverging(int index) {
    const float t = static_cast<float>(index) / 255.0f;
    const float lo[3] = {33, 102, 172}, mid[3] = {247, 247, 247}, hi[3] = {178, 24, 43};
    const float* a = t < 0.5f ? lo : mid;
    const float* b = t < 0.5f ? mid : hi;
    const float u = t < 0.5f ? t * 2.0f : (t - 0.5f) * 2.0f;
    const auto mix = [&](int c) { return static_cast<uint8_t>(roundNonNegative(a[c] + (b[c] - a[c]) * u)); };
    return {mix(0), mix(1), mix(2)};
}

const Entry& entry(ColorMap map) {
    for (const auto& e : kMaps)
        if (e.map == map) return e;
    return kMaps[0];
}
} // namespace

Rgb colorAt(ColorMap map, float t) {
    if (std::isnan(t)) t = 0.0f;
    const int index = roundNonNegative(std::clamp(t, 0.0f, 1.0f) * 255.0f);
    const auto& e = entry(map);
    if (map == ColorMap::Diverging) return diverging(index);
    if (!e.table) {
        const auto v = static_cast<uint8_t>(index);
        return {v, v, v};
    }
    return {e.table[index][0], e.table[index][1], e.table[index][2]};
}

std::string_view colorMapName(ColorMap map) {
    return entry(map).name;
}

std::optional<ColorMap> parseColorMap(std::string_view name) {
    for (const auto& e : kMaps)
        if (e.name == name) return e.map;
    if (name == "gray") return ColorMap::Grey;
    return std::nullopt;
}

std::vector<ColorMap> allColorMaps() {
    std::vector<ColorMap> maps;
    for (const auto& e : kMaps)
        if (e.map != ColorMap::Diverging) maps.push_back(e.map);
    return maps;
}

namespace {

float logLow(float lo, float hi) {
    return lo > 0.0f ? lo : std::max(hi, 1e-30f) * 1e-4f;
}

} // namespace

float scalePosition(float v, float lo, float hi, ColorScale scale) {
    if (scale == ColorScale::Log) {
        lo = logLow(lo, hi);
        if (!(hi > lo)) return 0.0f;
        if (std::isnan(v)) return v;
        return v <= lo ? 0.0f : (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    }
    return (v - lo) / (hi > lo ? hi - lo : 1.0f);
}

float scaleValueAt(float t, float lo, float hi, ColorScale scale) {
    if (scale == ColorScale::Log) {
        lo = logLow(lo, hi);
        return hi > lo ? lo * std::pow(hi / lo, t) : lo;
    }
    return lo + t * (hi - lo);
}

namespace {

// colorAt's 256 colours, looked up per cell (a 4 096² map: 16.7 M cells)
std::array<Rgb, 256> paletteOf(ColorMap map) {
    std::array<Rgb, 256> palette;
    for (int i = 0; i < 256; ++i)
        palette[size_t(i)] = colorAt(map, static_cast<float>(i) / 255.0f);
    return palette;
}

// Each value's palette index: colorAt's rounding of scalePosition clamped to [0, 1] (NaN: 0), with the log
// scale's logarithms of lo and hi taken once (the same arithmetic). The linear rule is a plain loop the
// compiler vectorises.
class PaletteIndex {
public:
    PaletteIndex(float lo, float hi, ColorScale scale)
        : m_lo(lo), m_hi(hi), m_log(scale == ColorScale::Log), m_span(hi > lo ? hi - lo : 1.0f) {
        m_logLo = m_log ? logLow(lo, hi) : lo;
        m_lnLo = std::log(m_logLo);
        m_lnSpan = std::log(hi) - m_lnLo;
    }
    void row(const float* v, int64_t n, int32_t* out) const {
        if (!m_log) {
            for (int64_t i = 0; i < n; ++i) {
                const float t = (v[i] - m_lo) / m_span;
                const float x = (t > 0.0f ? (t < 1.0f ? t : 1.0f) : 0.0f) * 255.0f; // NaN → 0
                const auto whole = static_cast<int32_t>(x);                         // roundNonNegative
                out[i] = whole + (x - static_cast<float>(whole) >= 0.5f ? 1 : 0);
            }
            return;
        }
        for (int64_t i = 0; i < n; ++i) {
            float t = !(m_hi > m_logLo) ? 0.0f
                      : v[i] <= m_logLo ? 0.0f
                                        : (std::log(v[i]) - m_lnLo) / m_lnSpan;
            if (std::isnan(t)) t = 0.0f;
            out[i] = roundNonNegative(std::clamp(t, 0.0f, 1.0f) * 255.0f);
        }
    }

private:
    float m_lo, m_hi;
    bool m_log;
    float m_span, m_logLo, m_lnLo, m_lnSpan;
};

} // namespace

void renderHeatmapArgb(const Eigen::Ref<const RowMatrix>& values, ColorMap map, float lo, float hi,
                       ColorScale scale, uint32_t* pixels, int64_t stride) {
    std::array<uint32_t, 256> argb;
    const std::array<Rgb, 256> palette = paletteOf(map);
    for (size_t i = 0; i < 256; ++i)
        argb[i] = 0xff000000u | uint32_t(palette[i].r) << 16 | uint32_t(palette[i].g) << 8 | palette[i].b;
    const PaletteIndex index(lo, hi, scale);
    std::vector<int32_t> indices(static_cast<size_t>(values.cols()));
    for (Eigen::Index r = 0; values.cols() > 0 && r < values.rows(); ++r) {
        index.row(values.data() + r * values.outerStride(), values.cols(), indices.data());
        uint32_t* line = pixels + r * stride;
        for (Eigen::Index c = 0; c < values.cols(); ++c)
            line[c] = argb[size_t(indices[size_t(c)])];
    }
}

RgbImage renderHeatmap(const Eigen::Ref<const RowMatrix>& values, ColorMap map, float lo, float hi, int cell,
                       ColorScale scale) {
    if (cell < 1) throw Error("renderHeatmap: cell size must be at least 1");
    if (hi <= lo && values.size() > 0) {
        lo = values.minCoeff();
        hi = values.maxCoeff();
    }
    RgbImage image;
    image.width = static_cast<int>(values.cols()) * cell;
    image.height = static_cast<int>(values.rows()) * cell;
    image.pixels.resize(static_cast<size_t>(image.width) * image.height * 3);
    const std::array<Rgb, 256> palette = paletteOf(map);
    const PaletteIndex index(lo, hi, scale);
    std::vector<int32_t> indices(static_cast<size_t>(values.cols()));
    for (Eigen::Index r = 0; values.cols() > 0 && r < values.rows(); ++r) {
        index.row(values.data() + r * values.outerStride(), values.cols(), indices.data());
        for (Eigen::Index c = 0; c < values.cols(); ++c) {
            const Rgb rgb = palette[size_t(indices[size_t(c)])];
            for (int dy = 0; dy < cell; ++dy) {
                auto* p = &image.pixels[((static_cast<size_t>(r) * cell + dy) * image.width + c * cell) * 3];
                for (int dx = 0; dx < cell; ++dx, p += 3) {
                    p[0] = rgb.r;
                    p[1] = rgb.g;
                    p[2] = rgb.b;
                }
            }
        }
    }
    return image;
}

} // namespace attnlens
