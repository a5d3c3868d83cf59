#include "core/diffusion/unet_maps.h"

#include "core/analysis/value_weighting.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace attnlens {

PixelRegion parsePixelRegion(std::string_view text) {
    const std::string q(text);
    PixelRegion r;
    int used = -1;
    bool ok =
        std::sscanf(q.c_str(), "%d,%d%n", &r.row0, &r.col0, &used) == 2 && used == static_cast<int>(q.size());
    if (ok) {
        r.row1 = r.row0;
        r.col1 = r.col0;
    } else {
        used = -1;
        ok = std::sscanf(q.c_str(), "%d,%d:%d,%d%n", &r.row0, &r.col0, &r.row1, &r.col1, &used) == 4 &&
             used == static_cast<int>(q.size());
    }
    if (!ok || r.row0 < 0 || r.col0 < 0 || r.row1 < r.row0 || r.col1 < r.col0)
        throw Error("query: expected ROW,COL of an image pixel or a region ROW0,COL0:ROW1,COL1 (from 0, "
                    "inclusive), got '" +
                    q + "'");
    return r;
}

std::vector<int> unetRegionTokens(const UNetAttentionInfo& layer, const PixelRegion& r, int imageHeight,
                                  int imageWidth) {
    auto describe = [&] {
        return std::to_string(r.row0) + "," + std::to_string(r.col0) +
               (r.isPixel() ? std::string() : ":" + std::to_string(r.row1) + "," + std::to_string(r.col1));
    };
    if (imageHeight <= 0 || imageWidth <= 0) throw Error("the image is empty");
    if (r.row0 < 0 || r.col0 < 0 || r.row1 >= imageHeight || r.col1 >= imageWidth)
        throw Error("query " + describe() + " lies outside the " + std::to_string(imageHeight) + "x" +
                    std::to_string(imageWidth) + " image");
    if (r.row1 < r.row0 || r.col1 < r.col0) throw Error("query " + describe() + ": the region is inverted");
    const int h = layer.height, w = layer.width;
    auto toY = [&](int row) { return static_cast<int>(int64_t{row} * h / imageHeight); };
    auto toX = [&](int col) { return static_cast<int>(int64_t{col} * w / imageWidth); };
    std::vector<int> tokens;
    for (int y = toY(r.row0); y <= toY(r.row1); ++y)
        for (int x = toX(r.col0); x <= toX(r.col1); ++x)
            tokens.push_back(y * w + x);
    return tokens;
}

namespace {

// The selected heads of a layer value-weighted, fused as `heads` says: [tokens, keys]. Query side only the
// rows the region reads are weighted (others stay 0): a 64×64 level's full matrix is 4096² per head.
RowMatrix valueWeightedHeads(const UNetAttentionMap& layer, const HeadSelection& heads,
                             const std::vector<int>* rows) {
    const Tensor& w = layer.weights; // [heads, tokens, keys]
    if (layer.valueNorms.rank() != 2 || layer.valueNorms.dim(0) != w.dim(0) ||
        layer.valueNorms.dim(1) != w.dim(2))
        throw Error(layer.info.name +
                    ": value-weighted maps need the values' norms, not captured with this map");
    const int64_t tokens = w.dim(1), keys = w.dim(2);
    const int first = heads.head >= 0 ? heads.head : 0,
              last = heads.head >= 0 ? heads.head : int(w.dim(0)) - 1;
    RowMatrix fused = RowMatrix::Zero(tokens, keys);
    RowMatrix one(1, keys);
    const auto norms = layer.valueNorms.slice2d({});
    auto fuseRow = [&](int64_t r) {
        auto out = fused.row(r);
        for (int h = first; h <= last; ++h) {
            one = w.slice2d({h}).row(r);
            valueWeightRows(one, norms.row(h));
            if (h == first)
                out = one;
            else if (heads.fusion == HeadFusion::Max)
                out = out.cwiseMax(one);
            else if (heads.fusion == HeadFusion::Min)
                out = out.cwiseMin(one);
            else
                out += one;
        }
        if (heads.head < 0 && heads.fusion == HeadFusion::Mean) out /= float(last - first + 1);
    };
    if (rows)
        for (int r : *rows)
            fuseRow(r);
    else
        for (int64_t r = 0; r < tokens; ++r)
            fuseRow(r);
    return fused;
}

} // namespace

RowMatrix unetRegionMap(const UNetAttentionMap& layer, const PixelRegion& region, int imageHeight,
                        int imageWidth, const HeadSelection& heads, bool keySide, bool valueWeighted) {
    const std::vector<int> tokens = unetRegionTokens(layer.info, region, imageHeight, imageWidth);
    if (heads.head >= layer.info.heads)
        throw Error("head " + std::to_string(heads.head) + " is out of range (" + layer.info.name + " has " +
                    std::to_string(layer.info.heads) + " heads)");
    const RowMatrix attention = valueWeighted ? valueWeightedHeads(layer, heads, keySide ? nullptr : &tokens)
                                : heads.head >= 0 ? RowMatrix(layer.weights.slice2d({heads.head}))
                                                  : fuseHeads(layer.weights, heads.fusion); // [tokens, keys]
    const Eigen::VectorXf perToken = keySide ? keyMap(attention, tokens, TokenReduce::Sum)
                                             : queryMap(attention, tokens, TokenReduce::Mean);
    return tokensToGrid(perToken, layer.info.height, layer.info.width, 0);
}

RowMatrix unetQueryMap(const UNetAttentionMap& layer, int row, int col, int imageHeight, int imageWidth,
                       const HeadSelection& heads) {
    return unetRegionMap(layer, PixelRegion::pixel(row, col), imageHeight, imageWidth, heads, false);
}

ImageU8 enlargeNearest(const ImageU8& image, int factor) {
    if (factor < 1) throw Error("enlarge: the factor must be at least 1");
    ImageU8 out(image.width * factor, image.height * factor, image.channels);
    for (int y = 0; y < out.height; ++y)
        for (int x = 0; x < out.width; ++x)
            for (int c = 0; c < image.channels; ++c)
                out.at(x, y, c) = image.at(x / factor, y / factor, c);
    return out;
}

int enlargeFactor(const ImageU8& image, int minSide) {
    const int side = std::max(image.width, image.height);
    if (side <= 0) throw Error("enlarge: the image is empty");
    return std::max(1, (minSide + side - 1) / side);
}

RgbImage renderUNetOverlay(const ImageU8& image, const Eigen::Ref<const RowMatrix>& map,
                           OverlayOptions options, int minSide) {
    options.smooth = false; // each cell of the layer's grid stays one flat colour
    return renderOverlay(enlargeNearest(image, enlargeFactor(image, minSide)), map, options);
}

ImageU8 unetViewImage(const DenoiseStep& step, const UNetView& view) {
    return sampleToImage(view.onNoisy ? step.sample : step.predOriginal);
}

RgbImage renderUNetView(const DenoiseStep& step, const UNetAttentionMap* layer, const UNetView& view) {
    const ImageU8 image = unetViewImage(step, view);
    if (layer != nullptr)
        return renderUNetOverlay(image,
                                 unetRegionMap(*layer, view.query, image.height, image.width, view.heads,
                                               view.keySide, view.valueWeighted),
                                 view.options, view.minSide);
    ImageU8 big = toRgb(enlargeNearest(image, enlargeFactor(image, view.minSide))); // grey shown as grey RGB
    return RgbImage{big.width, big.height, std::move(big.pixels)};
}

} // namespace attnlens
