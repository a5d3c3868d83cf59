#pragma once
// AttentionStore: one run's attention maps [L, H, n, m] (issue 40), held one of two ways the user never
// chooses between:
//   captured   every head in memory, as the models have always produced it (a Tensor [L, H, n, m]);
//   on demand  each layer keeps only what recomputing its heads needs (core/layers LayerRecall: its queries
//              and keys as it attended with them) and a (layer, head) map is made when asked for, by the
//              same kernels in the same order — so it equals the captured map bit for bit.
// Models capture while L · H · n · m floats fit in RunControls::captureBudget and keep the recall above it.
// Memory on demand: per layer n · D + m · kvD floats — Qwen2.5-0.5B at 4 096 tokens 24 · 4 096 · (896 + 128)
// · 4 B = 403 MB instead of 22.5 GB; making one map costs one head's Q·Kᵀ and softmax (n · m floats of
// scratch).
//
//   const AttentionStore& a = *forward.attentionStore();
//   RowMatrix map = a.head(3, 5);          // [n, m], rows are probabilities
//   if (!a.onDemand()) use(a.captured());  // [L, H, n, m]
//
// Thread-safety: immutable; head()/headInto() may run on any thread, concurrently.

#include "core/layers/multi_head_attention.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace attnlens {

// The default budget for captured attention: 1 GiB, sized for an 8 GB laptop (weights of a 0.5–1 B model in
// 16 bits beside it). Above it a run keeps its attention on demand.
inline constexpr int64_t kDefaultCaptureBudget = int64_t(1) << 30;

// Bytes of every head captured: L · H · n · m floats.
int64_t capturedAttentionBytes(int64_t layers, int64_t heads, int64_t rows, int64_t cols);

class AttentionStore {
public:
    AttentionStore() = default;
    explicit AttentionStore(Tensor captured); // [L, H, n, m] (attnlens::Error otherwise)
    // On demand: one recall per layer, each with `heads` heads over the same n queries and m keys. owner:
    // keeps the model whose attention layers the recalls point at alive (may be null when the caller does).
    AttentionStore(std::vector<LayerRecall> layers, int64_t heads, std::shared_ptr<const void> owner);

    bool empty() const { return layers() == 0; }
    bool onDemand() const { return !m_recall.empty(); }
    int64_t layers() const { return m_layers; }
    int64_t heads() const { return m_heads; }
    int64_t rows() const { return m_rows; }
    int64_t cols() const { return m_cols; }
    // The captured tensor [L, H, n, m]; attnlens::Error when on demand (use head()).
    const Tensor& captured() const;
    // Layer `layer`'s head `head` [rows, cols] into out (contiguous); attnlens::Error naming the pair when
    // outside the model.
    void headInto(int layer, int head, float* out) const;
    RowMatrix head(int layer, int head) const;
    // What this holds in memory.
    int64_t bytes() const;

private:
    void checkPair(int layer, int head) const;

    Tensor m_captured;
    std::vector<LayerRecall> m_recall;
    std::shared_ptr<const void> m_owner;
    int64_t m_layers = 0, m_heads = 0, m_rows = 0, m_cols = 0;
};

} // namespace attnlens
