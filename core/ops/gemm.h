#pragma once
// C = A · B for row-major float matrices (A [m, k], B [k, n], C [m, n], no aliasing) on the best
// kernel this CPU has, chosen at run time: Eigen's AVX-512 GEMM where the CPU (and OS) support
// AVX-512F/BW/DQ/VL, else Eigen's AVX2 + FMA GEMM (the build's baseline, x86-64-v3). Measured on the
// development VM (one thread, 256×256×256): 184 vs 100 GFLOP/s.
//
// The AVX-512 kernel lives in its own translation unit compiled with -march=x86-64-v4, with Eigen's
// namespace renamed there, so none of its template instantiations can be merged with the baseline
// ones (the double-free the project once saw came from such a merge; see docs/architecture.md).
//
// Linear layers with packed weights (PackedLinear) run on oneDNN's matmul where the build has it
// (GemmKernel::Onednn, the default there: oneDNN dispatches to the CPU's best ISA itself); the general
// product and PackedWeights then use the best Eigen kernel.
//
// ATTNLENS_GEMM=avx2 | avx512 | onednn (environment) picks a kernel; tests use setGemmKernel.

#include "core/tensor/half_matrix.h"

#include <cstdint>
#include <memory>
#include <string>

namespace attnlens {

enum class GemmKernel { Avx2, Avx512, Onednn };
struct OnednnLinear;  // a linear weight packed by oneDNN (gemm_onednn.cpp)
struct OnednnProduct; // a left operand W kept in bfloat16 for oneDNN (gemm_onednn.cpp)

GemmKernel activeGemmKernel();
const char* gemmKernelName(GemmKernel kernel); // "avx2", "avx512", "onednn"
bool cpuSupportsAvx512();                      // false where limitedToAvx2()
// ATTNLENS_CPU_ISA=avx2 (environment): run as on a CPU without AVX-512 — the Eigen kernels' AVX2 build, and
// oneDNN's kernels limited to AVX2 (dnnl::set_max_cpu_isa). How the tests check the AVX2-only dispatch on an
// AVX-512 machine (the *_avx2 suites, tests/CMakeLists.txt).
bool limitedToAvx2();
bool onednnBuilt();     // this build has oneDNN
bool onednnAvailable(); // built with oneDNN and its CPU engine starts
// The instruction set oneDNN's kernels run with ("avx2", "avx512_core", "avx512_core_bf16",
// "avx512_core_amx", …; "none" without oneDNN) — what `attnlens-cli bench` reports beside the kernel.
std::string onednnIsa();
// Selects a kernel (Avx512 only where cpuSupportsAvx512(), Onednn only where onednnAvailable();
// throws attnlens::Error otherwise).
void setGemmKernel(GemmKernel kernel);

// The number format linear layers are packed in (process-wide, read when a model packs its weights at
// load). Fp32 is the default and what every parity test runs. Bf16 (opt-in, "fast mode") packs the
// weights as bfloat16 and rounds each layer's input to bfloat16 (float32 accumulation and output); it
// needs the oneDNN kernel and a CPU with AVX-512 (native on AVX512_BF16, emulated otherwise).
enum class LinearPrecision { Fp32, Bf16 };
LinearPrecision linearPrecision();
const char* linearPrecisionName(LinearPrecision precision); // "fp32", "bf16"
bool bf16Available();
// Throws attnlens::Error naming what is missing when Bf16 is not available.
void setLinearPrecision(LinearPrecision precision);

// A general product on the active kernel. Row-major operands with leading dimensions (the distance
// between rows, ≥ the row length): A [m, k] (lda); B [k, n] (ldb), or B [n, k] used as Bᵀ when
// transB; C [m, n] (ldc), overwritten (beta = 0) or accumulated into (beta = 1).
struct GemmArgs {
    const float* a = nullptr;
    int64_t lda = 0;
    const float* b = nullptr;
    int64_t ldb = 0;
    float* c = nullptr;
    int64_t ldc = 0;
    int64_t m = 0, n = 0, k = 0;
    bool transB = false;
    bool accumulate = false;
};
void gemm(const GemmArgs& args);
// The same product where B is a block of a linear layer's weight met once (ops/half_linear: widened 16-bit
// rows): on oneDNN's sgemm when GemmKernel::Onednn is active, else as gemm().
void linearGemm(const GemmArgs& args);

// Contiguous C = A · B (A [m, k], B [k, n], C [m, n]).
inline void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
    gemm(GemmArgs{a, k, b, n, c, n, m, n, k, false, false});
}

// Weights packed once for C [m, n] = W [m, k] · X [k, n] (row-major, W fixed: a layer's weights).
// Packing is what the GEMM otherwise redoes on every call; the packed form belongs to the kernel that
// made it (valid() is false after setGemmKernel switched kernels: callers then use the plain path).
class PackedWeights {
public:
    PackedWeights() = default;
    // Packs for the active kernel (oneDNN: W copied, X used where it lies); in linearPrecision() Bf16, W as
    // bfloat16 on oneDNN (each X rounded to bfloat16 per call, float32 accumulation and output).
    PackedWeights(const float* w, int64_t m, int64_t k) : PackedWeights(w, m, k, linearPrecision()) {}
    PackedWeights(const float* w, int64_t m, int64_t k, LinearPrecision precision);
    bool empty() const { return !m_data && !m_onednn; }
    bool valid() const; // packed for the kernel active now (bf16: always)
    LinearPrecision precision() const { return m_precision; }
    int64_t rows() const { return m_m; }
    int64_t depth() const { return m_k; }
    // C = W · X; x [k, n] with row stride ldx, c [m, n] with row stride ldc. Requires valid().
    void multiply(const float* x, int64_t ldx, int64_t n, float* c, int64_t ldc) const;

private:
    std::shared_ptr<float> m_data;
    std::shared_ptr<const OnednnProduct> m_onednn; // GemmKernel::Onednn (or bf16)
    int64_t m_m = 0, m_k = 0;
    GemmKernel m_kernel = GemmKernel::Avx2;
    LinearPrecision m_precision = LinearPrecision::Fp32;
};

// A linear layer's weight packed once: out [n, o] = x [n, i] · Wᵀ for a fixed W [o, i] (row-major).
// Eigen's product re-packs W on every call (13 % of a ViT-B/16 forward); this packs it at load. Same
// kernel rule as PackedWeights: valid() is false after setGemmKernel switched kernels.
class PackedLinear {
public:
    PackedLinear() = default;
    // Packs for the active kernel, in linearPrecision().
    PackedLinear(const float* w, int64_t outFeatures, int64_t inFeatures);
    // A weight stored in bfloat16, computed in bf16 (LinearPrecision::Bf16's arithmetic) where it lies in
    // memory: no copy, no packing. Requires bf16Available() and w.format() == HalfMatrix::Format::BF16.
    explicit PackedLinear(const HalfMatrix& w);
    bool empty() const { return !m_data && !m_onednn; }
    bool valid() const;
    LinearPrecision precision() const { return m_precision; }
    int64_t outFeatures() const { return m_o; }
    int64_t inFeatures() const { return m_i; }
    // out [n, o] (row stride ldo) = x [n, i] (row stride ldx) · Wᵀ, overwritten. Requires valid().
    void multiply(const float* x, int64_t ldx, int64_t n, float* out, int64_t ldo) const;

private:
    std::shared_ptr<float> m_data;                // Eigen kernels
    std::shared_ptr<const OnednnLinear> m_onednn; // GemmKernel::Onednn
    int64_t m_o = 0, m_i = 0;
    GemmKernel m_kernel = GemmKernel::Avx2;
    LinearPrecision m_precision = LinearPrecision::Fp32;
};

namespace avx512 {
// Defined in gemm_avx512.cpp (x86-64-v4); call only where cpuSupportsAvx512().
void gemm(const GemmArgs& args);
int64_t packedWeightsSize(int64_t m, int64_t k);
void packWeights(const float* w, int64_t m, int64_t k, float* out);
void gemmPacked(const float* packed, int64_t m, int64_t k, const float* x, int64_t ldx, int64_t n, float* c,
                int64_t ldc);
int64_t packedLinearSize(int64_t o, int64_t in);
void packLinear(const float* w, int64_t o, int64_t in, float* out);
void linearPacked(const float* packed, int64_t o, int64_t in, const float* x, int64_t ldx, int64_t n,
                  float* out, int64_t ldo);
} // namespace avx512

namespace onednn {
// Defined in gemm_onednn.cpp (only where the build has oneDNN).
bool available();
std::string effectiveIsa();
bool bf16Available();
std::shared_ptr<const OnednnLinear> packLinear(const float* w, int64_t outFeatures, int64_t inFeatures,
                                               bool bf16);
// A bfloat16 weight W [out, in] used where it lies (no copy; `keep` holds its memory alive).
std::shared_ptr<const OnednnLinear> viewLinearBf16(const uint16_t* w, int64_t outFeatures, int64_t inFeatures,
                                                   std::shared_ptr<const void> keep);
void linear(const OnednnLinear& pack, const float* x, int64_t ldx, int64_t n, float* out, int64_t ldo);
std::shared_ptr<const OnednnProduct> packProduct(const float* w, int64_t m, int64_t k, bool bf16);
// c [m, n] (row stride ldc) = W · x [k, n] (row stride ldx), overwritten.
void product(const OnednnProduct& pack, const float* x, int64_t ldx, int64_t n, float* c, int64_t ldc);
void sgemm(const GemmArgs& args); // oneDNN's own sgemm (its JIT kernel for the CPU)
} // namespace onednn

} // namespace attnlens
