#include "core/export/overlay.h"

#include "core/util/error.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlens {

RowMatrix upsampleMap(const Eigen::Ref<const RowMatrix>& map, int width, int height, bool smooth) {
    if (map.size() == 0 || width < 1 || height < 1) throw Error("overlay: empty map or image");
    const auto rows = static_cast<int>(map.rows()), cols = static_cast<int>(map.cols());
    RowMatrix out(height, width); // [height, width]
    if (!smooth) {
        for (int y = 0; y < height; ++y) {
            const int r = static_cast<int>(int64_t(y) * rows / height);
            for (int x = 0; x < width; ++x)
                out(y, x) = map(r, static_cast<int>(int64_t(x) * cols / width));
        }
        return out;
    }
    struct Tap {
        int i0, i1;
        float t;
    };
    auto taps = [](int n, int size) {
        std::vector<Tap> result(n);
        for (int i = 0; i < n; ++i) {
            const double u = std::clamp((i + 0.5) * size / n - 0.5, 0.0, double(size - 1));
            const int i0 = static_cast<int>(std::floor(u));
            result[i] = {i0, std::min(i0 + 1, size - 1), static_cast<float>(u - i0)};
        }
        return result;
    };
    const auto xs = taps(width, cols), ys = taps(height, rows);
    for (int y = 0; y < height; ++y) {
        const Tap ty = ys[y];
        for (int x = 0; x < width; ++x) {
            const Tap tx = xs[x];
            const float top = map(ty.i0, tx.i0) * (1 - tx.t) + map(ty.i0, tx.i1) * tx.t;
            const float bottom = map(ty.i1, tx.i0) * (1 - tx.t) + map(ty.i1, tx.i1) * tx.t;
            out(y, x) = top * (1 - ty.t) + bottom * ty.t;
        }
    }
    return out;
}

namespace {

// The map sampled at every image pixel when it covers only `region` (fractions of the image), NaN
// where the pixel centre lies outside (see the header's contract).
RowMatrix sampleRegion(const Eigen::Ref<const RowMatrix>& map, int width, int height, const RectF& region,
                       bool smooth) {
    const auto rows = static_cast<int>(map.rows()), cols = static_cast<int>(map.cols());
    const double rx = region.x * width, ry = region.y * height;
    const double rw = region.width * width, rh = region.height * height;
    RowMatrix out(height, width);
    for (int y = 0; y < height; ++y) {
        const double fy = (y + 0.5 - ry) / rh; // 0..1 inside the region
        for (int x = 0; x < width; ++x) {
            const double fx = (x + 0.5 - rx) / rw;
            if (fx < 0.0 || fx >= 1.0 || fy < 0.0 || fy >= 1.0) {
                out(y, x) = std::numeric_limits<float>::quiet_NaN();
            } else if (!smooth) {
                out(y, x) = map(std::min(rows - 1, static_cast<int>(fy * rows)),
                                std::min(cols - 1, static_cast<int>(fx * cols)));
            } else {
                const double u = std::clamp(fx * cols - 0.5, 0.0, double(cols - 1));
                const double v = std::clamp(fy * rows - 0.5, 0.0, double(rows - 1));
                const int c0 = static_cast<int>(std::floor(u)), r0 = static_cast<int>(std::floor(v));
                const int c1 = std::min(c0 + 1, cols - 1), r1 = std::min(r0 + 1, rows - 1);
                const float tx = static_cast<float>(u - c0), ty = static_cast<float>(v - r0);
                const float top = map(r0, c0) * (1 - tx) + map(r0, c1) * tx;
                const float bottom = map(r1, c0) * (1 - tx) + map(r1, c1) * tx;
                out(y, x) = top * (1 - ty) + bottom * ty;
            }
        }
    }
    return out;
}

} // namespace

RgbImage renderOverlay(const ImageU8& image, const Eigen::Ref<const RowMatrix>& map,
                       const OverlayOptions& options) {
    if (image.empty() || (image.channels != 1 && image.channels != 3))
        throw Error("overlay: the image is empty or has an unsupported channel count");
    if (map.size() == 0) throw Error("overlay: the map is empty");
    if (!(options.opacity >= 0.0f && options.opacity <= 1.0f))
        throw Error("overlay: opacity must be in [0, 1]");
    float lo = options.lo, hi = options.hi;
    if (hi <= lo) {
        lo = map.minCoeff();
        hi = map.maxCoeff();
    }
    const float range = hi > lo ? hi - lo : 1.0f;
    const bool region = options.region.width > 0 && options.region.height > 0;
    const RowMatrix values =
        region ? sampleRegion(map, image.width, image.height, options.region, options.smooth)
               : upsampleMap(map, image.width, image.height, options.smooth); // [H, W]
    RgbImage out;
    out.width = image.width;
    out.height = image.height;
    out.pixels.resize(static_cast<size_t>(out.width) * out.height * 3);
    // Per-pixel work is table lookups: the colour map's 256 entries fetched once, and both blend terms
    // precomputed for every 8-bit value (the Vision page renders this for each patch click, nine times:
    // the overlay and the heads / layers thumbnails).
    const float a = options.opacity;
    float baseTerm[256], colourTerm[256][3], dimmed[256];
    for (int v = 0; v < 256; ++v) {
        baseTerm[v] = (1.0f - a) * static_cast<float>(v);
        dimmed[v] = 0.4f * static_cast<float>(v);
        const Rgb c = colorAt(options.colorMap, static_cast<float>(v) / 255.0f);
        colourTerm[v][0] = a * c.r;
        colourTerm[v][1] = a * c.g;
        colourTerm[v][2] = a * c.b;
    }
    const int channelStep = image.channels == 1 ? 0 : 1;
    for (int y = 0; y < image.height; ++y) {
        const uint8_t* src = &image.pixels[static_cast<size_t>(y) * image.width * image.channels];
        uint8_t* dst = &out.pixels[static_cast<size_t>(y) * out.width * 3];
        for (int x = 0; x < image.width; ++x, src += image.channels, dst += 3) {
            const float value = values(y, x);
            if (std::isnan(value)) { // outside the model's view
                for (int ch = 0; ch < 3; ++ch)
                    dst[ch] = static_cast<uint8_t>(roundNonNegative(dimmed[src[ch * channelStep]]));
                continue;
            }
            const int index = roundNonNegative(std::clamp((value - lo) / range, 0.0f, 1.0f) * 255.0f);
            for (int ch = 0; ch < 3; ++ch)
                dst[ch] = static_cast<uint8_t>(
                    roundNonNegative(baseTerm[src[ch * channelStep]] + colourTerm[index][ch]));
        }
    }
    return out;
}

void writePng(const std::filesystem::path& path, const RgbImage& image) {
    if (image.width < 1 || image.height < 1)
        throw Error("'" + path.string() + "': cannot write an empty image");
    cv::Mat bgr(image.height, image.width, CV_8UC3);
    for (int y = 0; y < image.height; ++y) {
        auto* row = bgr.ptr<uint8_t>(y);
        for (int x = 0; x < image.width; ++x) {
            const Rgb p = image.pixel(x, y);
            row[x * 3 + 0] = p.b;
            row[x * 3 + 1] = p.g;
            row[x * 3 + 2] = p.r;
        }
    }
    bool ok = false;
    try {
        ok = cv::imwrite(path.string(), bgr);
    } catch (const cv::Exception& e) {
        throw Error("'" + path.string() + "': cannot write PNG (" + e.err + ")");
    }
    if (!ok)
        throw Error("'" + path.string() + "': cannot write PNG (check the folder exists and is writable)");
}

void writePng(const std::filesystem::path& path, const ImageU8& image) {
    const ImageU8 rgb = toRgb(image);
    writePng(path, RgbImage{rgb.width, rgb.height, rgb.pixels});
}

} // namespace attnlens
