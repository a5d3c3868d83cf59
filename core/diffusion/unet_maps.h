#pragma once
// Maps drawn from a U-Net's captured attention (the drawing the Diffusion page and `attnlens-cli
// diffuse --overlay` share).

#include "core/analysis/attention_maps.h"
#include "core/models/unet_model.h"
#include "core/vision/image_io.h"

namespace attnlens {

// Where a query pixel of the image looks in one attention layer: image position (row, col), from 0,
// scaled to the layer's resolution (token = y·w + x there), that token's row of the selected or fused
// heads, as the layer's [h, w] grid (sums to 1). Throws for a position outside the image.
RowMatrix unetQueryMap(const UNetAttentionMap& layer, int row, int col, int imageHeight, int imageWidth,
                       const HeadSelection& heads);

// The image enlarged by an integer factor with crisp pixels (each pixel a factor × factor block).
ImageU8 enlargeNearest(const ImageU8& image, int factor);

} // namespace attnlens
