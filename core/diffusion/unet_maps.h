#pragma once
// Maps drawn from a U-Net's captured attention — the drawing the Diffusion page and `attnlens-cli
// diffuse --overlay / --gif` share, so an export shows the pixels the screen shows.
//
//   PixelRegion q{.row0 = 10, .col0 = 12, .row1 = 13, .col1 = 15};              // image pixels, inclusive
//   RowMatrix m = unetRegionMap(out.attentions[3], q, 28, 28, {.head = -1}, false); // [h, w] of that layer
//   RgbImage px = renderUNetOverlay(sampleToImage(x0), m, options);             // enlarged, crisp cells
//
// A layer runs at its own resolution (h × w tokens, token = y·w + x); image pixel (row, col) falls in
// token (row·h / H, col·w / W). A region covers every token one of its pixels falls in.

#include "core/analysis/attention_maps.h"
#include "core/analysis/head_stats.h"
#include "core/diffusion/denoise_session.h"
#include "core/export/overlay.h"
#include "core/models/unet_model.h"
#include "core/vision/image_io.h"

namespace attnlens {

// A rectangle of image pixels, rows row0..row1 and columns col0..col1, both inclusive, from 0.
struct PixelRegion {
    int row0 = 0, col0 = 0, row1 = 0, col1 = 0;
    static PixelRegion pixel(int row, int col) { return {row, col, row, col}; }
    bool isPixel() const { return row0 == row1 && col0 == col1; }
    bool operator==(const PixelRegion&) const = default;
};

// "ROW,COL" (one pixel) or "ROW0,COL0:ROW1,COL1" (a region, inclusive), from 0 — the grammar of the CLI's
// and the GUI's --query on diffusion images. Throws attnlens::Error naming the text.
PixelRegion parsePixelRegion(std::string_view text);

// The layer's tokens covered by the region (sorted). Throws for a region outside the image or inverted.
std::vector<int> unetRegionTokens(const UNetAttentionInfo& layer, const PixelRegion& region, int imageHeight,
                                  int imageWidth);

// The map of one layer for a region of the image, as the layer's [h, w] grid:
//   query side (keySide false): the mean of the region tokens' rows — where the region looks (sums to 1);
//   key side (keySide true):    the sum of the region tokens' columns — how much each position draws
//                               on the region.
// The heads are one head or fused (mean / max / min). valueWeighted: each head's rows weighted by its keys'
// ‖v·W_O‖ (layer.valueNorms) and renormalised before the fusion (core/analysis/value_weighting.h). Throws for
// a bad region or head, or value weighting without norms.
RowMatrix unetRegionMap(const UNetAttentionMap& layer, const PixelRegion& region, int imageHeight,
                        int imageWidth, const HeadSelection& heads, bool keySide = false,
                        bool valueWeighted = false);

// Where a query pixel looks in one layer (unetRegionMap of that one pixel, query side).
RowMatrix unetQueryMap(const UNetAttentionMap& layer, int row, int col, int imageHeight, int imageWidth,
                       const HeadSelection& heads);

// The image enlarged by an integer factor with crisp pixels (each pixel a factor × factor block).
ImageU8 enlargeNearest(const ImageU8& image, int factor);

// The smallest integer factor that makes the image's longer side at least minSide pixels (1 if it already
// is).
int enlargeFactor(const ImageU8& image, int minSide);

// A layer's map over an image: the image enlarged to at least minSide px (crisp pixels), the map drawn
// with one flat colour per cell (options.smooth is ignored) and blended as renderOverlay does.
RgbImage renderUNetOverlay(const ImageU8& image, const Eigen::Ref<const RowMatrix>& map,
                           OverlayOptions options, int minSide = 256);

// What one view of a denoising step shows: a region's map in one layer over x_t or x̂0.
struct UNetView {
    PixelRegion query;
    HeadSelection heads;
    bool keySide = false;
    bool onNoisy = false;       // x_t instead of x̂0
    bool valueWeighted = false; // α·‖v·W_O‖ renormalised (unetRegionMap)
    OverlayOptions options;
    int minSide = 256; // the image is enlarged (integer factor, crisp) to at least this
};

// The image the view is drawn over (x_t or x̂0 of the step, as 8-bit pixels).
ImageU8 unetViewImage(const DenoiseStep& step, const UNetView& view);
// The view of one step: the layer's map over the step's image, or — without a layer (its attention
// not computed) — the enlarged image alone. The Diffusion page's large view, its GIF frames and
// `attnlens-cli diffuse --overlay / --gif` all draw through this.
RgbImage renderUNetView(const DenoiseStep& step, const UNetAttentionMap* layer, const UNetView& view);

} // namespace attnlens
