#include "core/ops/gemm.h"

#include "core/tensor/tensor.h" // Eigen, before the product body
#include "core/util/error.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/ops/gemm_product.inc"

namespace attnlens {

namespace {

// One kernel's entry points; the only place that knows whether the AVX-512 kernel was built.
struct KernelOps {
    void (*gemm)(const GemmArgs&);
    int64_t (*packedSize)(int64_t m, int64_t k);
    void (*pack)(const float* w, int64_t m, int64_t k, float* out);
    void (*packed)(const float* packed, int64_t m, int64_t k, const float* x, int64_t ldx, int64_t n,
                   float* c, int64_t ldc);
    int64_t (*linearSize)(int64_t o, int64_t in);
    void (*packLinear)(const float* w, int64_t o, int64_t in, float* out);
    void (*linear)(const float* packed, int64_t o, int64_t in, const float* x, int64_t ldx, int64_t n,
                   float* out, int64_t ldo);
};

const KernelOps kBaseline{
    [](const GemmArgs& args) { gemmProduct<Eigen::Dynamic>(args); },
    [](int64_t m, int64_t k) { return packedWeightsSize(m, k); },
    [](const float* w, int64_t m, int64_t k, float* out) { packWeightsImpl(w, k, m, k, out); },
    &gemmPackedImpl,
    [](int64_t o, int64_t in) { return packedLinearSize(o, in); },
    &packLinearImpl,
    &linearPackedImpl};
#if defined(__x86_64__) && defined(ATTNLENS_HAVE_AVX512_KERNEL)
const KernelOps kAvx512{&avx512::gemm,        &avx512::packedWeightsSize, &avx512::packWeights,
                        &avx512::gemmPacked,  &avx512::packedLinearSize,  &avx512::packLinear,
                        &avx512::linearPacked};
// GemmKernel::Onednn runs linear layers only; everything else on the best Eigen kernel.
const KernelOps& opsFor(GemmKernel k) {
    if (k == GemmKernel::Onednn) return cpuSupportsAvx512() ? kAvx512 : kBaseline;
    return k == GemmKernel::Avx512 ? kAvx512 : kBaseline;
}
#else
const KernelOps& opsFor(GemmKernel) {
    return kBaseline;
}
#endif

GemmKernel initialKernel() {
    const char* env = std::getenv("ATTNLENS_GEMM");
    if (env && std::strcmp(env, "avx2") == 0) return GemmKernel::Avx2;
    if (env && std::strcmp(env, "avx512") == 0 && cpuSupportsAvx512()) return GemmKernel::Avx512;
    if (onednnAvailable()) return GemmKernel::Onednn;
    return cpuSupportsAvx512() ? GemmKernel::Avx512 : GemmKernel::Avx2;
}

std::atomic<GemmKernel>& kernel() {
    static std::atomic<GemmKernel> k{initialKernel()};
    return k;
}

} // namespace

bool limitedToAvx2() {
    static const bool limited = [] {
        const char* env = std::getenv("ATTNLENS_CPU_ISA");
        return env && std::strcmp(env, "avx2") == 0;
    }();
    return limited;
}

bool cpuSupportsAvx512() {
#if defined(__x86_64__) && defined(ATTNLENS_HAVE_AVX512_KERNEL)
    if (limitedToAvx2()) return false;
    // libgcc checks the CPUID bits and that the OS saves the AVX-512 state (XCR0).
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512cd");
#else
    return false;
#endif
}

bool onednnBuilt() {
#ifdef ATTNLENS_HAVE_ONEDNN
    return true;
#else
    return false;
#endif
}

bool onednnAvailable() {
#ifdef ATTNLENS_HAVE_ONEDNN
    static const bool ok = onednn::available();
    return ok;
#else
    return false;
#endif
}

std::string onednnIsa() {
#ifdef ATTNLENS_HAVE_ONEDNN
    if (onednnAvailable()) return onednn::effectiveIsa();
#endif
    return "none";
}

GemmKernel activeGemmKernel() {
    return kernel().load(std::memory_order_relaxed);
}

namespace {
std::atomic<LinearPrecision>& precisionSetting() {
    static std::atomic<LinearPrecision> p{LinearPrecision::Fp32};
    return p;
}
} // namespace

LinearPrecision linearPrecision() {
    return precisionSetting().load(std::memory_order_relaxed);
}

const char* linearPrecisionName(LinearPrecision p) {
    return p == LinearPrecision::Bf16 ? "bf16" : "fp32";
}

bool bf16Available() {
#ifdef ATTNLENS_HAVE_ONEDNN
    static const bool ok = onednnAvailable() && onednn::bf16Available();
    return ok;
#else
    return false;
#endif
}

void setLinearPrecision(LinearPrecision p) {
    if (p == LinearPrecision::Bf16 && !bf16Available())
        throw Error(onednnAvailable()
                        ? "bf16 needs a CPU with AVX-512 (oneDNN has no bf16 kernel for this one)"
                        : "bf16 needs the oneDNN kernel, and this build has none");
    precisionSetting().store(p, std::memory_order_relaxed);
}

const char* gemmKernelName(GemmKernel k) {
    switch (k) {
    case GemmKernel::Avx512:
        return "avx512";
    case GemmKernel::Onednn:
        return "onednn";
    case GemmKernel::Avx2:
        break;
    }
    return "avx2";
}

void setGemmKernel(GemmKernel k) {
    if (k == GemmKernel::Avx512 && !cpuSupportsAvx512())
        throw Error("this CPU (or build) has no AVX-512 GEMM kernel");
    if (k == GemmKernel::Onednn && !onednnAvailable()) throw Error("this build has no oneDNN GEMM kernel");
    kernel().store(k, std::memory_order_relaxed);
}

namespace {

// Below this much work a chunk of a product stays on one thread (less is not worth starting a team). Work is
// counted in multiply-adds plus kReadCost per operand value read: with one or a few rows (a decoder step's
// matrix-vector products) the time is reading the weight, ~16 multiply-adds' worth per value on this core.
constexpr int64_t kParallelMacs = int64_t(1) << 21;
constexpr int64_t kReadCost = 16;

enum class Split { Longer, Rows, Columns };

// Runs a product C [m, n] on the team: one side (the longer, or the one a packed operand allows) split
// into contiguous blocks (multiples of 16 columns or 4 rows), part(i0, rows, j0, cols) computing each
// block of C; serial when small.
template <class Part> void splitProduct(int64_t m, int64_t n, int64_t k, Split split, Part&& part) {
    if (computeThreads() < 2 || (m * n + kReadCost * (m + n)) * k < 2 * kParallelMacs)
        return part(0, m, 0, n);
    const bool byColumns = split == Split::Columns || (split == Split::Longer && n >= m);
    const int64_t align = byColumns ? 16 : 4, length = byColumns ? n : m, other = byColumns ? m : n;
    const int64_t units = (length + align - 1) / align;
    const int64_t unitWork = align * k * (other + kReadCost); // its products and its operand's reads
    const int64_t grain = std::max<int64_t>(1, kParallelMacs / std::max<int64_t>(1, unitWork));
    parallelFor(units, grain, [&](int64_t u0, int64_t u1) {
        const int64_t a = u0 * align, b = std::min(length, u1 * align);
        if (byColumns)
            part(0, m, a, b - a);
        else
            part(a, b - a, 0, n);
    });
}

} // namespace

void gemm(const GemmArgs& args) {
    if (args.m == 0 || args.n == 0) return;
    const KernelOps& ops = opsFor(activeGemmKernel());
    splitProduct(args.m, args.n, args.k, Split::Longer,
                 [&](int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
                     GemmArgs block = args;
                     block.a = args.a + i0 * args.lda;
                     block.b = args.b + (args.transB ? j0 * args.ldb : j0);
                     block.c = args.c + i0 * args.ldc + j0;
                     block.m = rows;
                     block.n = cols;
                     ops.gemm(block);
                 });
}

void linearGemm(const GemmArgs& args) {
    if (args.m == 0 || args.n == 0) return;
#ifdef ATTNLENS_HAVE_ONEDNN
    if (activeGemmKernel() == GemmKernel::Onednn) return onednn::sgemm(args);
#endif
    gemm(args);
}

namespace {

// 64-byte aligned memory for `floats` floats, freed with std::free.
std::shared_ptr<float> packedBuffer(int64_t floats, int64_t m, int64_t k) {
    const size_t bytes = (sizeof(float) * static_cast<size_t>(floats) + 63) / 64 * 64;
    float* data = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (!data)
        throw Error("out of memory packing a " + std::to_string(m) + "x" + std::to_string(k) + " weight");
    return std::shared_ptr<float>(data, [](float* p) { std::free(p); });
}

} // namespace

PackedWeights::PackedWeights(const float* w, int64_t m, int64_t k, LinearPrecision precision)
    : m_m(m), m_k(k), m_kernel(activeGemmKernel()) {
    if (precision == LinearPrecision::Bf16 && !bf16Available())
        throw Error("bf16 needs the oneDNN kernel and a CPU with AVX-512");
#ifdef ATTNLENS_HAVE_ONEDNN
    // bf16 (setLinearPrecision made sure oneDNN can), or float32 where oneDNN is the kernel: its matmul on
    // the plain W and X where it lies measured 6 % faster than Eigen's packed product on one thread and 12 %
    // on two (a ddpm-cifar10-32 U-Net step: 54.7 vs 58.3 ms, 30.3 vs 34.4 ms)
    if (precision == LinearPrecision::Bf16 || m_kernel == GemmKernel::Onednn) {
        m_precision = precision;
        m_kernel = GemmKernel::Onednn;
        m_onednn = onednn::packProduct(w, m, k, m_precision == LinearPrecision::Bf16);
        return;
    }
#endif
    const KernelOps& ops = opsFor(m_kernel);
    m_data = packedBuffer(ops.packedSize(m, k), m, k);
    ops.pack(w, m, k, m_data.get());
}

PackedLinear::PackedLinear(const float* w, int64_t outFeatures, int64_t inFeatures)
    : m_o(outFeatures), m_i(inFeatures), m_kernel(activeGemmKernel()) {
#ifdef ATTNLENS_HAVE_ONEDNN
    // bf16 always goes through oneDNN (setLinearPrecision made sure it can)
    if (linearPrecision() == LinearPrecision::Bf16) m_kernel = GemmKernel::Onednn;
    if (m_kernel == GemmKernel::Onednn) {
        m_precision = linearPrecision();
        m_onednn = onednn::packLinear(w, m_o, m_i, m_precision == LinearPrecision::Bf16);
        return;
    }
#endif
    const KernelOps& ops = opsFor(m_kernel);
    m_data = packedBuffer(ops.linearSize(m_o, m_i), m_o, m_i);
    ops.packLinear(w, m_o, m_i, m_data.get());
}

PackedLinear::PackedLinear(const HalfMatrix& w)
    : m_o(w.rows()), m_i(w.cols()), m_kernel(GemmKernel::Onednn), m_precision(LinearPrecision::Bf16) {
    if (w.format() != HalfMatrix::Format::BF16) throw Error("only a bfloat16 weight is used as it lies");
    if (!bf16Available()) throw Error("bf16 needs the oneDNN kernel and a CPU with AVX-512");
#ifdef ATTNLENS_HAVE_ONEDNN
    m_onednn = onednn::viewLinearBf16(w.row(0), m_o, m_i, std::make_shared<HalfMatrix>(w));
#endif
}

bool PackedLinear::valid() const {
    return !empty() && (m_kernel == activeGemmKernel() || m_precision == LinearPrecision::Bf16);
}

void PackedLinear::multiply(const float* x, int64_t ldx, int64_t n, float* out, int64_t ldo) const {
    if (!valid())
        throw Error("packed linear weights used with another GEMM kernel than they were packed for");
    if (n == 0 || m_o == 0) return;
#ifdef ATTNLENS_HAVE_ONEDNN
    if (m_onednn) {
        onednn::linear(*m_onednn, x, ldx, n, out, ldo);
        return;
    }
#endif
    const KernelOps& ops = opsFor(m_kernel);
    // out [n, o] = x [n, i] · Wᵀ: blocks of x's rows, the packed W shared
    splitProduct(n, m_o, m_i, Split::Rows, [&](int64_t i0, int64_t rows, int64_t, int64_t) {
        ops.linear(m_data.get(), m_o, m_i, x + i0 * ldx, ldx, rows, out + i0 * ldo, ldo);
    });
}

bool PackedWeights::valid() const {
    return !empty() && (m_kernel == activeGemmKernel() || m_precision == LinearPrecision::Bf16);
}

void PackedWeights::multiply(const float* x, int64_t ldx, int64_t n, float* c, int64_t ldc) const {
    if (!valid()) throw Error("packed weights used with another GEMM kernel than they were packed for");
    if (n == 0 || m_m == 0) return;
#ifdef ATTNLENS_HAVE_ONEDNN
    if (m_onednn) return onednn::product(*m_onednn, x, ldx, n, c, ldc);
#endif
    const KernelOps& ops = opsFor(m_kernel);
    // C [m, n] = W · X: blocks of X's (and C's) columns, the packed W shared
    splitProduct(m_m, n, m_k, Split::Columns, [&](int64_t, int64_t, int64_t j0, int64_t cols) {
        ops.packed(m_data.get(), m_m, m_k, x + j0, ldx, cols, c + j0, ldc);
    });
}

} // namespace attnlens
