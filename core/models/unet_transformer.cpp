// The text-conditioned parts of UNet2DModel (diffusers' UNet2DConditionModel): Transformer2DModel with its
// BasicTransformerBlocks, and the encoder states they attend to.
#include "core/models/unet_model.h"
#include "core/ops/nn.h"
#include "core/util/error.h"

#include <cmath>

namespace attnlens {

namespace {

RowMatrix linearOf(const RowMatrix& x, const LinearWeights& w) {
    RowMatrix y;
    linearInto(x, w, y);
    return y;
}

RowMatrix layerNormed(const RowMatrix& x, const LayerNormWeights& n) {
    RowMatrix y = x;
    layerNormInPlace(y, n.weight, n.bias, 1e-5f); // BasicTransformerBlock's norm_eps
    return y;
}

} // namespace

RowMatrix UNet2DModel::textStates(const UNetConditioning& conditioning) const {
    const Tensor& e = conditioning.encoderHiddenStates;
    if (!m_config.textConditioned) {
        if (!e.empty())
            throw Error("this U-Net is not text-conditioned: no encoder hidden states can be given");
        return {};
    }
    if (e.empty())
        throw Error("this U-Net is text-conditioned: give the text encoder's hidden states [tokens, " +
                    std::to_string(m_config.crossAttentionDim) + "]");
    const Shape& s = e.shape();
    const bool batched = s.size() == 3 && s[0] == 1;
    if (!(s.size() == 2 || batched))
        throw Error("the encoder hidden states have shape " + shapeToString(s) + ", expected [tokens, " +
                    std::to_string(m_config.crossAttentionDim) + "]");
    const int64_t tokens = s[s.size() - 2], width = s.back();
    if (width != m_config.crossAttentionDim)
        throw Error("the encoder hidden states are " + std::to_string(width) +
                    " wide; this U-Net's cross_attention_dim is " +
                    std::to_string(m_config.crossAttentionDim));
    if (tokens < 1 || tokens > 4096)
        throw Error("the encoder hidden states have " + std::to_string(tokens) +
                    " tokens; 1 to 4096 are accepted");
    for (int64_t i = 0; i < e.numel(); ++i)
        if (!std::isfinite(e.data()[i])) throw Error("the encoder hidden states hold a non-finite value");
    return ConstMatrixMap(e.data(), tokens, width);
}

FeatureMap UNet2DModel::attendBlock(const Block& block, size_t j, FeatureMap h, const RowMatrix& text,
                                    AttentionRun& run) const {
    if (j < block.attentions.size()) return runAttention(block.attentions[j], h, run);
    if (j < block.transformers.size()) return runTransformer(block.transformers[j], h, text, run);
    return h;
}

// Transformer2DModel (v0.25): GroupNorm (eps 1e-6), proj_in, per BasicTransformerBlock
//   h += attn1(norm1(h));  h += attn2(norm2(h), text);  h += ff(norm3(h)),  ff = Linear(GEGLU(x))
// then proj_out and the residual. A 1×1 conv is the same product as the Linear on the pixels' rows.
FeatureMap UNet2DModel::runTransformer(const Transformer& t, const FeatureMap& x, const RowMatrix& text,
                                       AttentionRun& run) const {
    const RowMatrix normed =
        groupNorm(x, t.norm.groups, t.norm.weight, t.norm.bias, t.norm.eps).data.transpose();
    RowMatrix h = linearOf(normed, t.projIn); // [pixels, channels], pixel = y·w + x
    for (const TransformerLayer& l : t.layers) {
        RowMatrix n = layerNormed(h, l.norm1);
        h += runAttentionLayer(l.self, l.selfInfo, n, n, x.height, x.width, run);
        n = layerNormed(h, l.norm2);
        h += runAttentionLayer(l.cross, l.crossInfo, n, text, x.height, x.width, run);
        n = layerNormed(h, l.norm3);
        RowMatrix projected = linearOf(n, l.geglu); // [pixels, 2·inner]: hidden | gate
        const Eigen::Index inner = projected.cols() / 2;
        RowMatrix gate = projected.rightCols(inner);
        applyActivationInPlace(gate, Activation::Gelu);
        const RowMatrix gated = projected.leftCols(inner).cwiseProduct(gate);
        h += linearOf(gated, l.ffOut);
    }
    const RowMatrix out = linearOf(h, t.projOut);
    return {x.data + out.transpose(), x.height, x.width};
}

} // namespace attnlens
