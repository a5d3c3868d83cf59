// The AVX-512 GEMM kernel (see gemm.h). This file is compiled with -march=x86-64-v4 and must include
// nothing that instantiates templates shared with the rest of the program: Eigen's namespace is
// renamed so that every one of its symbols here is distinct; only plain pointers cross the boundary
// (the functions gemm.h declares in attnlens::avx512 take plain pointers and integers; the
// PackedWeights class that owns the memory lives in gemm.cpp).

#define Eigen AttnlensEigenAvx512
#include <Eigen/Core>
#undef Eigen

#define ATTNLENS_GEMM_EIGEN_NS AttnlensEigenAvx512
#include "core/ops/gemm_product.inc"

namespace attnlens::avx512 {

void gemm(const GemmArgs& args) {
    gemmProduct<AttnlensEigenAvx512::Dynamic>(args);
}

int64_t packedWeightsSize(int64_t m, int64_t k) {
    return attnlens::packedWeightsSize(m, k);
}

void packWeights(const float* w, int64_t m, int64_t k, float* out) {
    packWeightsImpl(w, k, m, k, out);
}

void gemmPacked(const float* packed, int64_t m, int64_t k, const float* x, int64_t ldx, int64_t n, float* c,
                int64_t ldc) {
    gemmPackedImpl(packed, m, k, x, ldx, n, c, ldc);
}

int64_t packedLinearSize(int64_t o, int64_t in) {
    return attnlens::packedLinearSize(o, in);
}

void packLinear(const float* w, int64_t o, int64_t in, float* out) {
    packLinearImpl(w, o, in, out);
}

void linearPacked(const float* packed, int64_t o, int64_t in, const float* x, int64_t ldx, int64_t n,
                  float* out, int64_t ldo) {
    linearPackedImpl(packed, o, in, x, ldx, n, out, ldo);
}

} // namespace attnlens::avx512
