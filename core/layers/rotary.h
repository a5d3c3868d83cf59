#pragma once
// Rotary position embedding as transformers' Llama family computes it (LlamaRotaryEmbedding, rotate_half):
// for each head, the first rotaryDim dimensions are split into halves x1 | x2 and rotated by position p:
//   x' = (x·cos(p·θ) + rotate_half(x)·sin(p·θ)) · s,  rotate_half(x) = (−x2 | x1),  θ_i = base^(−2i /
//   rotaryDim)
// with θ, p·θ, cos and sin in float32 as transformers computes them (so long positions round the same way).
// s = attentionScaling (1 unless YaRN scales cos and sin). Dimensions past rotaryDim (partial rotary) are
// left as they are. A scaled rope (rope_scaling: linear, llama3, yarn) brings its own θ table.
//
//   RotaryEmbedding rope{64, 64, 10000.0f};
//   rope.apply(q, heads, firstPosition);    // q [n, heads · 64], row i at position firstPosition + i

#include "core/tensor/tensor.h"

#include <vector>

namespace attnlens {

struct RotaryEmbedding {
    int headDim = 0;
    int rotaryDim = 0; // even, ≤ headDim
    float base = 10000.0f;
    std::vector<float> inverseFrequencies = {}; // θ_i, rotaryDim / 2 of them; empty: from base as above
    float attentionScaling = 1.0f;
    // Rotate adjacent pairs (2i, 2i + 1) instead of the halves (i, i + rotaryDim / 2): llama.cpp's rope on
    // the q/k rows its converter reordered (GGUF's llama architecture) — the same rotation of the same pairs.
    bool interleaved = false;

    // θ_i = 1 / base^(2i / rotaryDim) in float32, as torch.arange(0, d, 2).float() / d gives them.
    static std::vector<float> defaultInverseFrequencies(float base, int rotaryDim);

    // x [n, heads · headDim] in place; row i is at position firstPosition + i. Throws attnlens::Error when
    // the width is not heads · headDim or rotaryDim is odd or larger than headDim.
    void apply(RowMatrix& x, int heads, int64_t firstPosition) const;
};

} // namespace attnlens
