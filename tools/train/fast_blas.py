"""Import before numpy / torch: lets OpenBLAS use the vector units this CPU has.

OpenBLAS picks its kernels from the CPU model it recognises. In the virtual machines we train on
the CPU reports itself as a generic "Intel Xeon Processor", which OpenBLAS 0.3.21 (Debian 12) takes
for a Prescott and serves with SSE3 kernels: measured there, single-thread float32 matrix
products ran at 26-30 GFLOP/s instead of 134 GFLOP/s with its SkylakeX (AVX-512) kernels, and a ViT
training step 2.6x slower. This module sets OPENBLAS_CORETYPE from the feature flags the kernel
reports, unless it is already set. It must run before libopenblas is loaded.
"""
import os


def _coretype():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return None
    have = set(flags)
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"} <= have:
        return "SkylakeX"
    if {"avx2", "fma"} <= have:
        return "Haswell"
    return None


if "OPENBLAS_CORETYPE" not in os.environ:
    _t = _coretype()
    if _t:
        os.environ["OPENBLAS_CORETYPE"] = _t
