#pragma once
// out[i, r] = x_i · w_r for a few input rows (n ≤ kGemvMaxRows) against a row-major weight [rows, k]:
// the decoder's per-token projections and the output projection over the vocabulary, where the work
// is streaming the weight once from memory. Each weight row is read once for all n inputs (Eigen's GEMM
// would repack the whole weight per call; its GEMV reads it once per input row). AVX2 + FMA (the build's
// baseline, x86-64-v3).
//
//   x [n, k] (row stride ldx), w [rows, k] (contiguous), out [n, rows] (row stride ldo).

#include <cstdint>

namespace attnlens {

inline constexpr int64_t kGemvMaxRows = 8;

// Throws attnlens::Error when n is outside [1, kGemvMaxRows].
void gemvRows(const float* x, int64_t ldx, int64_t n, const float* w, int64_t rows, int64_t k, float* out,
              int64_t ldo);

} // namespace attnlens
