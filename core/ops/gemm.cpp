#include "core/ops/gemm.h"

#include "core/tensor/tensor.h" // Eigen, before the product body
#include "core/ops/gemm_product.inc"
#include "core/util/error.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace attnlens {

namespace {

#if defined(__x86_64__) && defined(ATTNLENS_HAVE_AVX512_KERNEL)
constexpr bool kHaveAvx512Kernel = true;
#else
constexpr bool kHaveAvx512Kernel = false;
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
    return kHaveAvx512Kernel && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
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
#if defined(__x86_64__) && defined(ATTNLENS_HAVE_AVX512_KERNEL)
    if (activeGemmKernel() == GemmKernel::Avx512) {
        avx512::gemm(args);
        return;
    }
#endif
    gemmProduct<Eigen::Dynamic>(args);
}

} // namespace attnlens
