#pragma once
// Linear layers whose weight stays in 16 bits (HalfMatrix: bfloat16 or IEEE half, as a checkpoint stores it),
// computed in float32: every weight is widened exactly, products and sums are float32 — the same arithmetic
// as transformers running the model in float32 from the stored values, without a float32 copy of the weights.
//   ≤ 8 input rows (decoding steps): a streaming kernel reads each weight row once, widens it in registers
//     and feeds every input row (memory-bound: half the bytes of a float32 weight).
//   more rows (a prompt): blocks of weight rows are widened into a small float32 buffer (a few MB, reused)
//     and multiplied on the active float32 GEMM kernel (ops/gemm.h: linearGemm, oneDNN's sgemm where it is
//     the kernel); the widening is 1/rows of the work.

#include "core/tensor/half_matrix.h"

#include <cstdint>

namespace attnlens {

// out [n, o] (row stride ldo) = x [n, i] (row stride ldx) · Wᵀ for W [o, i]; out overwritten.
void halfLinear(const float* x, int64_t ldx, int64_t n, const HalfMatrix& w, float* out, int64_t ldo);

} // namespace attnlens
