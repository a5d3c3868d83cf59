#include "core/diffusion/unet_maps.h"

#include "core/util/error.h"

#include <array>

namespace attnlens {

RowMatrix unetQueryMap(const UNetAttentionMap& layer, int row, int col, int imageHeight, int imageWidth,
                       const HeadSelection& heads) {
    if (row < 0 || col < 0 || row >= imageHeight || col >= imageWidth)
        throw Error("query " + std::to_string(row) + "," + std::to_string(col) + " lies outside the " +
                    std::to_string(imageHeight) + "x" + std::to_string(imageWidth) + " image");
    const int h = layer.info.height, w = layer.info.width;
    const int y = static_cast<int>(int64_t{row} * h / imageHeight), x = static_cast<int>(int64_t{col} * w / imageWidth);
    if (heads.head >= layer.info.heads)
        throw Error("head " + std::to_string(heads.head) + " is out of range (" + layer.info.name + " has " +
                    std::to_string(layer.info.heads) + " heads)");
    const RowMatrix attention = heads.head >= 0 ? RowMatrix(layer.weights.slice2d({heads.head}))
                                                : fuseHeads(layer.weights, heads.fusion); // [tokens, tokens]
    const std::array<int, 1> query{y * w + x};
    return tokensToGrid(queryMap(attention, query), h, w, 0);
}

ImageU8 enlargeNearest(const ImageU8& image, int factor) {
    if (factor < 1) throw Error("enlarge: the factor must be at least 1");
    ImageU8 out(image.width * factor, image.height * factor, image.channels);
    for (int y = 0; y < out.height; ++y)
        for (int x = 0; x < out.width; ++x)
            for (int c = 0; c < image.channels; ++c) out.at(x, y, c) = image.at(x / factor, y / factor, c);
    return out;
}

} // namespace attnlens
