#pragma once
// Scaled dot-product attention as the playground teaches it, with every stage recorded on request.
//
//   scores  = Q · Kᵀ                       [q, k]
//   scaled  = scores / √d_k                [q, k]
//   masked  = scaled, with -1e9 where mask == 0  (mask optional, [q, k], 1 = keep, 0 = masked)
//   weights = softmax over keys (rows)     [q, k]   rows sum to 1; masked entries are 0
//   output  = weights · V                  [q, d_v]
//
// Multi-head: Q and K (width d_model) are split into h heads of d_k = d_model / h, V (width d_v, which may
// differ) into h heads of d_v / h, column-wise (head i owns columns [i·d_k, (i+1)·d_k) of Q and K and
// [i·d_v/h, (i+1)·d_v/h) of V); each head attends on its own; outputs are concatenated to [q, d_v].
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
    Tensor output;  // [h, q, d_v / h]  per-head outputs
};

struct AttentionResult {
    Tensor output;  // [q, d_v]  heads concatenated
    Tensor weights; // [h, q, k]
    std::optional<AttentionStages> stages;
};

// query [q, d_model], key [k, d_model], value [k, d_v]; mask [q, k] or nullptr.
// heads must divide d_model and d_v (the message says which does not). Throws attnlens::Error on any shape
// mismatch, naming the shapes.
AttentionResult multiHeadAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const Tensor* mask, int heads, bool recordStages);

} // namespace attnlens
