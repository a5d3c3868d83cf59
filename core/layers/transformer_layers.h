#pragma once
// Post-norm ("normalize_before = false") transformer layers as used by Marian/BART:
//   encoder:  x = LN1(x + SelfAttn(x));  x = LN2(x + FFN(x))
//   decoder:  x = LN1(x + CausalSelfAttn(x));  x = LN2(x + CrossAttn(x, enc));  x = LN3(x + FFN(x))
// FFN(x) = fc2(act(fc1(x))). All activations are [tokens, D].

#include "core/layers/multi_head_attention.h"
#include "core/ops/nn.h"

namespace attnlens {

struct FeedForward {
    LinearWeights fc1; // [F, D]
    LinearWeights fc2; // [D, F]
    Activation activation = Activation::Gelu;

    RowMatrix forward(const RowMatrix& x) const; // [n, D] -> [n, D]
};

struct EncoderLayer {
    MultiHeadAttention selfAttention;
    LayerNormWeights selfAttentionNorm;
    FeedForward ffn;
    LayerNormWeights finalNorm;
    float eps = 1e-5f;

    // x [S, D] in place; probs: nullptr or [heads, S, S] (MultiHeadAttention's capture rules); mask:
    // additive [S, S] or nullptr.
    // offHeads: ablated heads of this layer (MultiHeadAttention::attend).
    void forward(RowMatrix& x, const RowMatrix* mask, Tensor* probs,
                 std::span<const int> offHeads = {}) const;
};

struct DecoderLayer {
    MultiHeadAttention selfAttention;
    LayerNormWeights selfAttentionNorm;
    MultiHeadAttention crossAttention;
    LayerNormWeights crossAttentionNorm;
    FeedForward ffn;
    LayerNormWeights finalNorm;
    float eps = 1e-5f;

    // x [n, D]: n new tokens at positions [cache.length, cache.length + n), in place. Their keys and
    // values are appended to `cache`; a causal mask is applied when n > 1.
    //   crossKeys/crossValues [S, D]: encoder output projected by this layer's cross attention
    //   crossMask: additive [n, S] or nullptr (source padding)
    //   selfProbs: nullptr or [heads, n, cache.length + n]; crossProbs: nullptr or [heads, n, S]
    //   offSelf / offCross: ablated heads of the self- and cross-attention (MultiHeadAttention::attend)
    void forward(RowMatrix& x, KvCache& cache, const RowMatrix& crossKeys, const RowMatrix& crossValues,
                 const RowMatrix* crossMask, Tensor* selfProbs, Tensor* crossProbs,
                 std::span<const int> offSelf = {}, std::span<const int> offCross = {}) const;

    // forward()'s first sub-layer alone: x = LN1(x + CausalSelfAttn(x)), keys/values appended to `cache`. Its
    // output is what the cross-attention's queries are projected from.
    void selfAttentionBlock(RowMatrix& x, KvCache& cache, Tensor* selfProbs,
                            std::span<const int> offSelf = {}) const;

    // One new token for each of B hypotheses at the same position (beam search): x [B, D], row b
    // belongs to caches[b]. Projections, out_proj and the FFN run once on all B rows (the weights are
    // read once instead of B times); attention runs per hypothesis on its own cache.
    //   selfProbs[b]: nullptr or [heads, 1, cache.length + 1]; crossProbs[b]: nullptr or [heads, 1, S]
    void forwardBatch(RowMatrix& x, const std::vector<KvCache*>& caches, const RowMatrix& crossKeys,
                      const RowMatrix& crossValues, const std::vector<Tensor*>& selfProbs,
                      const std::vector<Tensor*>& crossProbs, std::span<const int> offSelf = {},
                      std::span<const int> offCross = {}) const;
};

} // namespace attnlens
