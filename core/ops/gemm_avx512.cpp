// The AVX-512 GEMM kernel (see gemm.h). This file is compiled with -march=x86-64-v4 and must include
// nothing that instantiates templates shared with the rest of the program: Eigen's namespace is
// renamed so that every one of its symbols here is distinct; only plain pointers cross the boundary
// (gemm.h declares a plain struct and functions, nothing from Eigen or the standard library).

#define Eigen AttnlensEigenAvx512
#include <Eigen/Core>
#undef Eigen

#define ATTNLENS_GEMM_EIGEN_NS AttnlensEigenAvx512
#include "core/ops/gemm_product.inc"

namespace attnlens::avx512 {

void gemm(const GemmArgs& args) { gemmProduct<AttnlensEigenAvx512::Dynamic>(args); }

} // namespace attnlens::avx512
