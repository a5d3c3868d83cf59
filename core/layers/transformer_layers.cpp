#include "core/layers/transformer_layers.h"

namespace attnlens {

RowMatrix FeedForward::forward(const RowMatrix& x) const {
    RowMatrix h, out;
    linearInto(x, fc1, h); // [n, F] (through the packed weight where there is one)
    applyActivationInPlace(h, activation);
    linearInto(h, fc2, out); // [n, D]
    return out;
}

void EncoderLayer::forward(RowMatrix& x, const RowMatrix* mask, Tensor* probs,
                           std::span<const int> offHeads) const {
    x += selfAttention.forward(x, x, mask, probs, offHeads);
    layerNormInPlace(x, selfAttentionNorm.weight, selfAttentionNorm.bias, eps);
    x += ffn.forward(x);
    layerNormInPlace(x, finalNorm.weight, finalNorm.bias, eps);
}

void DecoderLayer::selfAttentionBlock(RowMatrix& x, KvCache& cache, Tensor* selfProbs,
                                      std::span<const int> offSelf) const {
    const int64_t n = x.rows();
    const int64_t offset = cache.length;
    RowMatrix q, k, v;
    selfAttention.projectQuery(x, q);
    selfAttention.projectKeyValue(x, k, v);
    cache.append(k, v);
    const int64_t keys = cache.length;
    RowMatrix mask;
    if (n > 1) mask = causalMask(n, offset); // [n, keys]
    x += selfAttention.attend(q, cache.keys.topRows(keys), cache.values.topRows(keys),
                              n > 1 ? &mask : nullptr, selfProbs, offSelf);
    layerNormInPlace(x, selfAttentionNorm.weight, selfAttentionNorm.bias, eps);
}

void DecoderLayer::forward(RowMatrix& x, KvCache& cache, const RowMatrix& crossKeys,
                           const RowMatrix& crossValues, const RowMatrix* crossMask, Tensor* selfProbs,
                           Tensor* crossProbs, std::span<const int> offSelf,
                           std::span<const int> offCross) const {
    selfAttentionBlock(x, cache, selfProbs, offSelf);
    RowMatrix q;
    crossAttention.projectQuery(x, q);
    x += crossAttention.attend(q, crossKeys, crossValues, crossMask, crossProbs, offCross);
    layerNormInPlace(x, crossAttentionNorm.weight, crossAttentionNorm.bias, eps);

    x += ffn.forward(x);
    layerNormInPlace(x, finalNorm.weight, finalNorm.bias, eps);
}

void DecoderLayer::forwardBatch(RowMatrix& x, const std::vector<KvCache*>& caches, const RowMatrix& crossKeys,
                                const RowMatrix& crossValues, const std::vector<Tensor*>& selfProbs,
                                const std::vector<Tensor*>& crossProbs, std::span<const int> offSelf,
                                std::span<const int> offCross) const {
    const Eigen::Index B = x.rows();
    RowMatrix q, k, v;
    RowMatrix context(B, x.cols());         // [B, D]
    selfAttention.projectQuery(x, q);       // [B, D]
    selfAttention.projectKeyValue(x, k, v); // [B, D]
    for (Eigen::Index b = 0; b < B; ++b) {
        KvCache& cache = *caches[b];
        cache.append(k.row(b), v.row(b));
        context.row(b) =
            selfAttention.attendHeads(q.row(b), cache.keys.topRows(cache.length),
                                      cache.values.topRows(cache.length), nullptr, selfProbs[b], offSelf);
    }
    x += selfAttention.outProject(context);
    layerNormInPlace(x, selfAttentionNorm.weight, selfAttentionNorm.bias, eps);

    crossAttention.projectQuery(x, q);
    for (Eigen::Index b = 0; b < B; ++b)
        context.row(b) =
            crossAttention.attendHeads(q.row(b), crossKeys, crossValues, nullptr, crossProbs[b], offCross);
    x += crossAttention.outProject(context);
    layerNormInPlace(x, crossAttentionNorm.weight, crossAttentionNorm.bias, eps);

    x += ffn.forward(x);
    layerNormInPlace(x, finalNorm.weight, finalNorm.bias, eps);
}

} // namespace attnlens
