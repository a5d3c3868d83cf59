#include "core/ops/half_linear.h"

#include "core/ops/gemm.h"
#include "core/tensor/tensor.h"
#include "core/util/parallel.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <vector>

namespace attnlens {

namespace {

constexpr int64_t kGemvRows = 8; // up to this many rows the block-wise GEMV, not a GEMM
// 4 MB of widened rows per GEMM call (measured, Qwen2.5-0.5B's shapes, 128 rows, oneDNN's sgemm: 1 MB 536 ms
// a prompt, 4 MB 485, 16 MB 570 — the input is packed once per block, so fewer blocks pack it less often).
constexpr int64_t kBlockFloats = 1024 * 1024;
constexpr int64_t kPrefetchBytes = 4096;
// A decoder step's rows are shared out on the team in chunks of at least this many weights.
constexpr int64_t kParallelWeights = int64_t{1} << 16;

template <bool Bf16> inline __m256 widen8(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (Bf16)
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    else
        return _mm256_cvtph_ps(h);
}

template <bool Bf16> inline float widen1(uint16_t v) {
    if constexpr (Bf16) {
        return std::bit_cast<float>(static_cast<uint32_t>(v) << 16);
    } else {
        return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(v)));
    }
}

inline float horizontalSum(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// out[i · ldo + r] = x_i · w_r for N input rows and every weight row r; each weight row is read once.
// U vectors of 8 columns per step and input keep U · N independent accumulators (one row: 4 chains).
template <int N, bool Bf16>
void streamRows(const float* x, int64_t ldx, const HalfMatrix& w, float* out, int64_t ldo, int64_t r0,
                int64_t r1) {
    constexpr int U = N == 1 ? 4 : N == 2 ? 2 : 1;
    constexpr int64_t step = 8 * U;
    const int64_t k = w.cols();
    for (int64_t r = r0; r < r1; ++r) {
        const uint16_t* wr = w.row(r);
        __m256 acc[N][U];
        for (auto& a : acc)
            for (auto& v : a)
                v = _mm256_setzero_ps();
        int64_t j = 0;
        for (; j + step <= k; j += step) {
            // The weights are a file mapping (4 KB pages): the hardware prefetchers stop at each page's end,
            // so the stream is fetched a page ahead here. Measured on a Qwen2.5-0.5B-sized model (988 MB of
            // bf16 per token): 130 -> 91 ms per token, 10.9 GB/s against 12.4 for a plain read of the mapping
            // on this machine's one core; distances of 1-16 KB measured the same.
            _mm_prefetch(reinterpret_cast<const char*>(wr + j) + kPrefetchBytes, _MM_HINT_T0);
            for (int u = 0; u < U; ++u) {
                const __m256 wv = widen8<Bf16>(wr + j + 8 * u);
                for (int i = 0; i < N; ++i)
                    acc[i][u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + i * ldx + j + 8 * u), acc[i][u]);
            }
        }
        for (; j + 8 <= k; j += 8) {
            const __m256 wv = widen8<Bf16>(wr + j);
            for (int i = 0; i < N; ++i)
                acc[i][0] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + i * ldx + j), acc[i][0]);
        }
        for (int i = 0; i < N; ++i) {
            __m256 s = acc[i][0];
            for (int u = 1; u < U; ++u)
                s = _mm256_add_ps(s, acc[i][u]);
            float total = horizontalSum(s);
            for (int64_t t = j; t < k; ++t)
                total += widen1<Bf16>(wr[t]) * x[i * ldx + t];
            out[i * ldo + r] = total;
        }
    }
}

// Weight rows [r0, r1) only.
template <bool Bf16>
void streamFew(const float* x, int64_t ldx, int64_t n, const HalfMatrix& w, float* out, int64_t ldo,
               int64_t r0, int64_t r1) {
    for (int64_t i = 0; i < n; i += 4) { // groups of up to four input rows
        const float* xi = x + i * ldx;
        float* oi = out + i * ldo;
        switch (std::min<int64_t>(4, n - i)) {
        case 1:
            streamRows<1, Bf16>(xi, ldx, w, oi, ldo, r0, r1);
            break;
        case 2:
            streamRows<2, Bf16>(xi, ldx, w, oi, ldo, r0, r1);
            break;
        case 3:
            streamRows<3, Bf16>(xi, ldx, w, oi, ldo, r0, r1);
            break;
        default:
            streamRows<4, Bf16>(xi, ldx, w, oi, ldo, r0, r1);
            break;
        }
    }
}

// GGML blocks, few input rows: each weight row decoded once into a float buffer, then dotted with every
// input.
void streamBlocks(const float* x, int64_t ldx, int64_t n, const HalfMatrix& w, float* out, int64_t ldo,
                  int64_t r0, int64_t r1) {
    const int64_t k = w.cols();
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(k));
    const Eigen::Map<const Eigen::VectorXf> wr(row.data(), k);
    for (int64_t r = r0; r < r1; ++r) {
        w.rowsToFloat(r, 1, row.data());
        for (int64_t i = 0; i < n; ++i)
            out[i * ldo + r] = wr.dot(Eigen::Map<const Eigen::VectorXf>(x + i * ldx, k));
    }
}

} // namespace

void halfLinear(const float* x, int64_t ldx, int64_t n, const HalfMatrix& w, float* out, int64_t ldo) {
    if (n <= 0 || w.rows() == 0) return;
    const int64_t k = w.cols();
    if (n <= kGemvRows) { // weight rows shared out on the team, each streamed once
        parallelFor(w.rows(), std::max<int64_t>(16, kParallelWeights / std::max<int64_t>(k, 1)),
                    [&](int64_t r0, int64_t r1) {
                        if (w.format() == HalfMatrix::Format::Ggml)
                            streamBlocks(x, ldx, n, w, out, ldo, r0, r1);
                        else if (w.format() == HalfMatrix::Format::BF16)
                            streamFew<true>(x, ldx, n, w, out, ldo, r0, r1);
                        else
                            streamFew<false>(x, ldx, n, w, out, ldo, r0, r1);
                    });
        return;
    }
    // Blocks of widened rows, each a product; the blocks on the team (an equal share per thread), each
    // widened and multiplied on its thread.
    const int64_t threads = computeThreads();
    int64_t block = std::clamp<int64_t>(kBlockFloats / std::max<int64_t>(k, 1) / 16 * 16, 16, w.rows());
    if (threads > 1) block = std::min(block, ((w.rows() + threads - 1) / threads + 15) / 16 * 16);
    const int64_t blocks = (w.rows() + block - 1) / block;
    parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        thread_local std::vector<float> widened; // this thread's (named inside the region)
        widened.resize(static_cast<size_t>(block * k));
        for (int64_t r0 = b0 * block; r0 < std::min(w.rows(), b1 * block); r0 += block) {
            const int64_t rows = std::min(block, w.rows() - r0);
            w.rowsToFloat(r0, rows, widened.data());
            linearGemm(
                GemmArgs{x, ldx, widened.data(), k, out + r0, ldo, n, rows, k, /*transB=*/true, false});
        }
    });
}

} // namespace attnlens
