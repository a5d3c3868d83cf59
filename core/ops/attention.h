#pragma once
// Scaled dot-product attention as the playground teaches it, with every stage recorded on request.
//
//   scores  = Q · Kᵀ                       [q, k]
//   scaled  = scores / √d_k                [q, k]
//   masked  = scaled, with -1e9 where mask == 0  (mask optional, [q, k], 1 = keep, 0 = masked)
//   weights = softmax over keys (rows)     [q, k]   rows sum to 1; masked entries are 0
//   output  = weights · V                  [q, d_v]
//
// Multi-head: d_model is split into h heads of d_k = d_model / h (Q, K and V are split column-wise,
// head i owns columns [i·d_k, (i+1)·d_k)); each head attends on its own; outputs are concatenated.
// (The model engines use layers/ MultiHeadAttention with projections and additive float masks.)

#include "core/ops/nn.h"
#include "core/tensor/tensor.h"

#include <optional>

namespace attnlens {

// Value written into masked positions before the softmax (as in "Attention Is All You Need" code).
inline constexpr float kPlaygroundMaskValue = -1e9f;

struct AttentionStages {
    Tensor scores;  // [h, q, k]
    Tensor scaled;  // [h, q, k]
    Tensor masked;  // [h, q, k]  equal to scaled where nothing is masked
    Tensor weights; // [h, q, k]
    Tensor output;  // [h, q, d_k]  per-head outputs
};

struct AttentionResult {
    Tensor output;  // [q, d_model]  heads concatenated
    Tensor weights; // [h, q, k]
    std::optional<AttentionStages> stages;
};

// query [q, d_model], key [k, d_model], value [k, d_model]; mask [q, k] or nullptr.
// heads must divide d_model. Throws attnlens::Error on any shape mismatch, naming the shapes.
AttentionResult multiHeadAttention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor* mask,
                                   int heads, bool recordStages);

} // namespace attnlens
