"""--avx2 on a peer bench: both sides as on a CPU without AVX-512 — ours through ATTNLENS_CPU_ISA=avx2
(core/ops/gemm.h), the peer with OpenBLAS's Haswell kernels, ATen's AVX2 kernels and torch's oneDNN limited to
AVX2. Import after the benches drop the shell's OPENBLAS_CORETYPE and before numpy / torch load. machine(): the
CPU and the vector extensions a bench reports."""
import os
import platform
import sys

AVX2 = "--avx2" in sys.argv
if AVX2:
    os.environ.update(OPENBLAS_CORETYPE="Haswell", ATTNLENS_CPU_ISA="avx2", ATEN_CPU_CAPABILITY="avx2",
                      DNNL_MAX_CPU_ISA="AVX2")


def machine():
    info = {"cpu": platform.processor() or "?", "cores": os.cpu_count(), "flags": []}
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name") and info["cpu"] in ("?", "", "x86_64"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    info["flags"] = [x for x in ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile")
                                     if x in have]
                    break
    except OSError:
        pass
    return info
