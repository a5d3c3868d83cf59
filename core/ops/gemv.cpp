#include "core/ops/gemv.h"

#include "core/util/error.h"

#include <immintrin.h>

#include <string>

namespace attnlens {

namespace {

float horizontalSum(__m256 v) {
    const __m128 lo = _mm256_castps256_ps128(v);
    const __m128 hi = _mm256_extractf128_ps(v, 1);
    __m128 s = _mm_add_ps(lo, hi);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// R weight rows [r0, r0 + R) against N input rows: N·R accumulators, each weight vector loaded once.
template <int N, int R>
void block(const float* x, int64_t ldx, const float* w, int64_t r0, int64_t k, float* out, int64_t ldo) {
    __m256 acc[N][R];
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < R; ++j) acc[i][j] = _mm256_setzero_ps();
    const int64_t k8 = k & ~int64_t{7};
    for (int64_t c = 0; c < k8; c += 8) {
        __m256 wv[R];
        for (int j = 0; j < R; ++j) wv[j] = _mm256_loadu_ps(w + (r0 + j) * k + c);
        for (int i = 0; i < N; ++i) {
            const __m256 xv = _mm256_loadu_ps(x + i * ldx + c);
            for (int j = 0; j < R; ++j) acc[i][j] = _mm256_fmadd_ps(xv, wv[j], acc[i][j]);
        }
    }
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < R; ++j) {
            float s = horizontalSum(acc[i][j]);
            for (int64_t c = k8; c < k; ++c) s += x[i * ldx + c] * w[(r0 + j) * k + c];
            out[i * ldo + r0 + j] = s;
        }
}

// All rows for N inputs: blocks of R rows, then single rows for the tail.
template <int N, int R>
void run(const float* x, int64_t ldx, const float* w, int64_t rows, int64_t k, float* out, int64_t ldo) {
    int64_t r = 0;
    for (; r + R <= rows; r += R) block<N, R>(x, ldx, w, r, k, out, ldo);
    for (; r < rows; ++r) block<N, 1>(x, ldx, w, r, k, out, ldo);
}

} // namespace

void gemvRows(const float* x, int64_t ldx, int64_t n, const float* w, int64_t rows, int64_t k, float* out,
              int64_t ldo) {
    // About 8–12 accumulators: enough independent FMAs to hide their latency, few enough for 16 registers.
    switch (n) {
    case 1: return run<1, 4>(x, ldx, w, rows, k, out, ldo);
    case 2: return run<2, 4>(x, ldx, w, rows, k, out, ldo);
    case 3: return run<3, 3>(x, ldx, w, rows, k, out, ldo);
    case 4: return run<4, 2>(x, ldx, w, rows, k, out, ldo);
    case 5: return run<5, 2>(x, ldx, w, rows, k, out, ldo);
    case 6: return run<6, 1>(x, ldx, w, rows, k, out, ldo);
    case 7: return run<7, 1>(x, ldx, w, rows, k, out, ldo);
    case 8: return run<8, 1>(x, ldx, w, rows, k, out, ldo);
    default: break;
    }
    throw Error("gemvRows: " + std::to_string(n) + " input rows, expected 1.." + std::to_string(kGemvMaxRows));
}

} // namespace attnlens
