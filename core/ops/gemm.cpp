#include "core/ops/gemm.h"

#include "core/tensor/tensor.h" // Eigen, before the product body
#include "core/ops/gemm_product.inc"
#include "core/util/error.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace attnlens {

namespace {

// One kernel's entry points; the only place that knows whether the AVX-512 kernel was built.
struct KernelOps {
    void (*gemm)(const GemmArgs&);
    int64_t (*packedSize)(int64_t m, int64_t k);
    void (*pack)(const float* w, int64_t m, int64_t k, float* out);
    void (*packed)(const float* packed, int64_t m, int64_t k, const float* x, int64_t ldx, int64_t n, float* c, int64_t ldc);
};

const KernelOps kBaseline{
    [](const GemmArgs& args) { gemmProduct<Eigen::Dynamic>(args); }, [](int64_t m, int64_t k) { return packedWeightsSize(m, k); },
    [](const float* w, int64_t m, int64_t k, float* out) { packWeightsImpl(w, k, m, k, out); }, &gemmPackedImpl};
#if defined(__x86_64__) && defined(ATTNLENS_HAVE_AVX512_KERNEL)
const KernelOps kAvx512{&avx512::gemm, &avx512::packedWeightsSize, &avx512::packWeights, &avx512::gemmPacked};
const KernelOps& opsFor(GemmKernel k) { return k == GemmKernel::Avx512 ? kAvx512 : kBaseline; }
#else
const KernelOps& opsFor(GemmKernel) { return kBaseline; }
#endif

GemmKernel initialKernel() {
    const char* env = std::getenv("ATTNLENS_GEMM");
    if (env && std::strcmp(env, "avx2") == 0) return GemmKernel::Avx2;
    return cpuSupportsAvx512() ? GemmKernel::Avx512 : GemmKernel::Avx2;
}

std::atomic<GemmKernel>& kernel() {
    static std::atomic<GemmKernel> k{initialKernel()};
    return k;
}

} // namespace

bool cpuSupportsAvx512() {
#if defined(__x86_64__) && defined(ATTNLENS_HAVE_AVX512_KERNEL)
    // libgcc checks the CPUID bits and that the OS saves the AVX-512 state (XCR0).
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
#else
    return false;
#endif
}

GemmKernel activeGemmKernel() { return kernel().load(std::memory_order_relaxed); }

const char* gemmKernelName(GemmKernel k) { return k == GemmKernel::Avx512 ? "avx512" : "avx2"; }

void setGemmKernel(GemmKernel k) {
    if (k == GemmKernel::Avx512 && !cpuSupportsAvx512()) throw Error("this CPU (or build) has no AVX-512 GEMM kernel");
    kernel().store(k, std::memory_order_relaxed);
}

void gemm(const GemmArgs& args) {
    if (args.m == 0 || args.n == 0) return;
    opsFor(activeGemmKernel()).gemm(args);
}

void PackedWeights::Free::operator()(float* p) const { std::free(p); }

PackedWeights::PackedWeights(const float* w, int64_t m, int64_t k) : m_m(m), m_k(k), m_kernel(activeGemmKernel()) {
    const KernelOps& ops = opsFor(m_kernel);
    const size_t bytes = (sizeof(float) * static_cast<size_t>(ops.packedSize(m, k)) + 63) / 64 * 64;
    float* data = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (!data) throw Error("out of memory packing a " + std::to_string(m) + "x" + std::to_string(k) + " weight");
    m_data = std::shared_ptr<float>(data, Free{});
    ops.pack(w, m, k, data);
}

bool PackedWeights::valid() const { return m_data && m_kernel == activeGemmKernel(); }

void PackedWeights::multiply(const float* x, int64_t ldx, int64_t n, float* c, int64_t ldc) const {
    if (!valid()) throw Error("packed weights used with another GEMM kernel than they were packed for");
    if (n == 0 || m_m == 0) return;
    opsFor(m_kernel).packed(m_data.get(), m_m, m_k, x, ldx, n, c, ldc);
}

} // namespace attnlens
