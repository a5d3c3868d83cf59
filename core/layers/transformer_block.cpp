#include "core/layers/transformer_block.h"

#include "core/util/error.h"

#include <cmath>

namespace attnlens {

void Norm::apply(RowMatrix& x) const {
    if (kind == Kind::LayerNorm) return layerNormInPlace(x, weight, bias, eps);
    const auto d = x.cols();
    const ConstVectorMap g(weight.data(), d);
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        auto row = x.row(r);
        const float meanSquare = row.squaredNorm() / static_cast<float>(d);
        row *= 1.0f / std::sqrt(meanSquare + eps);
        if (unitOffset)
            row.array() *= g.transpose().array() + 1.0f;
        else
            row.array() *= g.transpose().array();
    }
}

RowMatrix Mlp::forward(const RowMatrix& x) const {
    RowMatrix h, result;
    linearInto(x, in, h);
    applyActivationInPlace(h, activation);
    if (kind == Kind::Gated) {
        RowMatrix u;
        linearInto(x, up, u);
        h.array() *= u.array();
    }
    linearInto(h, out, result);
    return result;
}

void Mlp::pack() {
    in.pack();
    if (kind == Kind::Gated) up.pack();
    out.pack();
}

void TransformerBlock::forward(RowMatrix& x, const BlockRun& run) const {
    const int64_t n = x.rows();
    const int64_t past = run.cache ? run.cache->length : 0;
    RowMatrix normed;
    const bool pre = placement == Placement::Pre;
    if (pre) {
        normed = x;
        attentionNorm.apply(normed);
    }
    const RowMatrix& input = pre ? normed : x; // what the projections read
    if (run.probe) *run.probe = {&attention, input, input, causal, rotary ? &*rotary : nullptr, past, past};
    RowMatrix q, k, v;
    attention.projectQuery(input, q);
    attention.projectKeyValue(input, k, v);
    if (rotary) {
        rotary->apply(q, attention.heads(), past);
        rotary->apply(k, attention.kvHeads(), past);
    }
    RowMatrix mask;
    const RowMatrix* maskPtr = nullptr;
    if (causal && n > 1) {
        if (!run.mask) mask = causalMask(n, past);
        maskPtr = run.mask ? run.mask : &mask;
    }
    if (run.cache) {
        run.cache->append(k, v);
        const int64_t m = run.cache->length;
        x += attention.attend(q, run.cache->keys.topRows(m), run.cache->values.topRows(m), maskPtr, run.probs,
                              run.offHeads);
    } else {
        x += attention.attend(q, k, v, maskPtr, run.probs, run.offHeads);
    }
    if (!pre) attentionNorm.apply(x);
    if (pre) {
        normed = x;
        mlpNorm.apply(normed);
        x += mlp.forward(normed);
    } else {
        x += mlp.forward(x);
        mlpNorm.apply(x);
    }
}

void runBlocks(std::span<const TransformerBlock> blocks, RowMatrix& x, std::span<KvCache> caches,
               Tensor& attentions, const std::vector<std::vector<int>>& off, AttentionInputs* probe,
               int probeLayer, const Callbacks* callbacks) {
    if (!caches.empty() && caches.size() != blocks.size())
        throw Error("transformer: " + std::to_string(caches.size()) + " caches for " +
                    std::to_string(blocks.size()) + " layers");
    const int64_t past = caches.empty() ? 0 : caches.front().length;
    RowMatrix mask; // one causal mask for every layer
    if (x.rows() > 1 && !blocks.empty() && blocks.front().causal) mask = causalMask(x.rows(), past);
    for (size_t l = 0; l < blocks.size(); ++l) {
        if (callbacks) callbacks->checkCancel();
        Tensor probs;
        if (!attentions.empty()) probs = attentions.sub({static_cast<int64_t>(l)});
        BlockRun run;
        run.cache = caches.empty() ? nullptr : &caches[l];
        run.probs = attentions.empty() ? nullptr : &probs;
        if (l < off.size()) run.offHeads = off[l];
        run.probe = probe && probeLayer == static_cast<int>(l) ? probe : nullptr;
        run.mask = mask.size() ? &mask : nullptr;
        blocks[l].forward(x, run);
    }
}

} // namespace attnlens
