#pragma once
// The one renderer for "a map over an image": a [rows, cols] map (e.g. attention over the patch grid)
// is upsampled to the image's size, normalised, coloured with a colour map and alpha-blended over the
// image. The GUI (via ui/ → QImage) and `attnlens-cli vision --overlay` both call renderOverlay, so the
// exported PNG shows the same pixels as the screen.
//
// Pixel contract (pinned by tests/fast/test_overlay.cpp):
//   value    m(x, y) = bilinear sample of the map at ((x + 0.5)·cols/W − 0.5, (y + 0.5)·rows/H − 0.5),
//                      clamped at the borders (smooth), or the covering cell (nearest)
//   colour   c = colorAt(colorMap, (m − lo) / (hi − lo)),   lo/hi = the map's min/max unless given
//   output   round((1 − opacity) · image + opacity · c) per channel; grey images are shown as grey RGB.
// With a region (a centre-cropped model input, see PatchGrid::region) the map covers only that part
// of the image: m is sampled at ((x + 0.5 − rx)·cols/rw − 0.5, …) inside it, and pixels whose centre
// lies outside it — what the model never saw — are the image at 40 % brightness: round(0.4 · image).

#include "core/export/colormap.h"
#include "core/vision/image_io.h"
#include "core/vision/patch_grid.h"

#include <filesystem>

namespace attnlens {

struct OverlayOptions {
    ColorMap colorMap = ColorMap::Inferno;
    float opacity = 0.6f; // 0 = image only, 1 = map only
    bool smooth = true;   // bilinear upsampling; false = one flat colour per map cell
    float lo = 0.0f;      // value range mapped to the colour map; hi <= lo = the map's own min/max
    float hi = 0.0f;
    // Where the map lies, as fractions of the image's width and height ({x, y, width, height});
    // width or height 0 = the whole image.
    RectF region{};
};

// map [rows, cols] → [height, width] (see the contract above).
RowMatrix upsampleMap(const Eigen::Ref<const RowMatrix>& map, int width, int height, bool smooth);

// Throws attnlens::Error for an empty image or map or an opacity outside [0, 1].
RgbImage renderOverlay(const ImageU8& image, const Eigen::Ref<const RowMatrix>& map,
                       const OverlayOptions& options = {});

// Writes an RGB image as PNG (OpenCV imgcodecs). Throws attnlens::Error naming the path on failure.
void writePng(const std::filesystem::path& path, const RgbImage& image);
// The same for an 8-bit grey or RGB image (grey written as grey RGB).
void writePng(const std::filesystem::path& path, const ImageU8& image);

} // namespace attnlens
