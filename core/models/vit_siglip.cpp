// VitModel's SigLIP vision tower (model_type "siglip" / "siglip_vision_model"), as transformers v4.50.3's
// SiglipVisionTransformer: a patch convolution with bias, one learned position per patch (no CLS token),
// CLIP-style pre-LN encoder layers, post_layernorm on every token, and SiglipMultiheadAttentionPoolingHead —
// a learned probe that attends over the patches (nn.MultiheadAttention), then x + mlp(layernorm(x)).
#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
#include "core/models/clip_text_model.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"

#include <cmath>

namespace attnlens {

void VitModel::bindSiglip(WeightBinder& w, const TensorFile& file, const Callbacks& callbacks) {
    const VitConfig& c = m_config;
    const int64_t d = c.hiddenSize, p = c.patchSize, n = int64_t(c.gridSize()) * c.gridSize();
    const int64_t inner = c.intermediateSize;
    const std::string v = "vision_model.", e = v + "embeddings.", h = v + "head.";
    if (!file.contains(e + "patch_embedding.weight") || file.contains(e + "class_embedding"))
        throw Error("'" + file.path().string() + "': not a SigLIP checkpoint (no '" + e +
                    "patch_embedding.weight', or a class embedding)");
    m_patchW = w.require(e + "patch_embedding.weight", {d, c.numChannels, p, p});
    if (!m_patchW.empty()) m_patchW = m_patchW.reshaped({d, c.numChannels * p * p});
    m_patchB = w.require(e + "patch_embedding.bias", {d});
    m_positions = w.require(e + "position_embedding.weight", {n, d});
    for (int i = 0; i < c.numLayers; ++i) {
        callbacks.report(0.05 + 0.9 * i / c.numLayers,
                         "weights, " + std::to_string(i) + " of " + std::to_string(c.numLayers) + " layers");
        m_layers.push_back(bindClipLayer(w, {d, inner, c.numHeads, c.layerNormEps, c.activation},
                                         v + "encoder.layers." + std::to_string(i) + "."));
    }
    if (file.contains(v + "encoder.layers." + std::to_string(c.numLayers) + ".layer_norm1.weight"))
        w.problem("checkpoint has more than num_hidden_layers = " + std::to_string(c.numLayers) + " layers");
    m_finalLnW = w.require(v + "post_layernorm.weight", {d});
    m_finalLnB = w.require(v + "post_layernorm.bias", {d});
    if (!file.contains(h + "probe"))
        throw Error("'" + file.path().string() +
                    "': this SigLIP vision tower has no attention-pooling head ('" + h +
                    "probe'; vision_use_head false), which the Vision page's maps and scores need");
    PoolingHead& head = m_head;
    head.probe = w.require(h + "probe", {1, 1, d});
    if (!head.probe.empty()) head.probe = head.probe.reshaped({d});
    head.inW = w.require(h + "attention.in_proj_weight", {3 * d, d});
    head.inB = w.require(h + "attention.in_proj_bias", {3 * d});
    head.outW = w.require(h + "attention.out_proj.weight", {d, d});
    head.outB = w.require(h + "attention.out_proj.bias", {d});
    head.lnW = w.require(h + "layernorm.weight", {d});
    head.lnB = w.require(h + "layernorm.bias", {d});
    head.fc1W = w.require(h + "mlp.fc1.weight", {inner, d});
    head.fc1B = w.require(h + "mlp.fc1.bias", {inner});
    head.fc2W = w.require(h + "mlp.fc2.weight", {d, inner});
    head.fc2B = w.require(h + "mlp.fc2.bias", {d});
}

namespace {

// Rows [first, first + count) of a [rows, cols] / [rows] tensor as a new tensor (in_proj's thirds).
Tensor rowsOf(const Tensor& t, int64_t first, int64_t count) {
    const int64_t cols = t.rank() == 2 ? t.dim(1) : 1;
    Tensor out = t.rank() == 2 ? Tensor({count, cols}) : Tensor({count});
    std::copy_n(t.data() + first * cols, count * cols, out.data());
    return out;
}

} // namespace

// x [N, D], the encoder's output: post_layernorm'd in place (last_hidden_state), then the pooling head.
void VitModel::siglipOutputs(RowMatrix& x, VitOutput& out) const {
    const VitConfig& c = m_config;
    const int64_t d = c.hiddenSize, n = x.rows(), hd = c.headDim();
    const int heads = c.numHeads;
    layerNormInPlace(x, m_finalLnW, m_finalLnB, c.layerNormEps);
    out.lastHidden = Tensor::fromMatrix(x);
    const PoolingHead& h = m_head;
    const RowMatrix probe = ConstVectorMap(h.probe.data(), d).transpose();
    const RowMatrix q = linear(probe, rowsOf(h.inW, 0, d), rowsOf(h.inB, 0, d));     // [1, D]
    const RowMatrix k = linear(x, rowsOf(h.inW, d, d), rowsOf(h.inB, d, d));         // [N, D]
    const RowMatrix v = linear(x, rowsOf(h.inW, 2 * d, d), rowsOf(h.inB, 2 * d, d)); // [N, D]
    out.probeAttention = Tensor({heads, n});
    RowMatrix mixed(1, d);
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    for (int head = 0; head < heads; ++head) {
        RowMatrix scores = (q.middleCols(head * hd, hd) * scale) * k.middleCols(head * hd, hd).transpose();
        softmaxRowsInPlace(scores); // [1, N]
        std::copy_n(scores.data(), n, out.probeAttention.data() + head * n);
        mixed.middleCols(head * hd, hd) = scores * v.middleCols(head * hd, hd);
    }
    // x + mlp(layernorm(x)) for the pooled row and, as the patch features, for every patch's value alone.
    auto finish = [&](const RowMatrix& attended) {
        RowMatrix y = linear(attended, h.outW, h.outB);
        RowMatrix z = y;
        layerNormInPlace(z, h.lnW, h.lnB, c.layerNormEps);
        RowMatrix a = linear(z, h.fc1W, h.fc1B);
        applyActivationInPlace(a, c.activation);
        y += linear(a, h.fc2W, h.fc2B);
        return y;
    };
    out.pooled = Tensor::fromMatrix(finish(mixed)).reshaped({d});
    out.imageEmbeds = out.pooled;
    out.patchEmbeds = Tensor::fromMatrix(finish(v)); // [N, D]
}

} // namespace attnlens
