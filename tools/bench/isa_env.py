"""--avx2 on a peer bench: both sides as on a CPU without AVX-512 — ours through ATTNLENS_CPU_ISA=avx2
(core/ops/gemm.h), the peer with OpenBLAS's Haswell kernels, ATen's AVX2 kernels and torch's oneDNN limited to
AVX2. Import after the benches drop the shell's OPENBLAS_CORETYPE and before numpy / torch load."""
import os
import sys

AVX2 = "--avx2" in sys.argv
if AVX2:
    os.environ.update(OPENBLAS_CORETYPE="Haswell", ATTNLENS_CPU_ISA="avx2", ATEN_CPU_CAPABILITY="avx2",
                      DNNL_MAX_CPU_ISA="AVX2")
