"""GGUF fixtures for the C++ reader (core/io/gguf.h) and the GGML block decoders (core/ops/ggml_quants.h).

    /usr/bin/python3 tools/golden/make_gguf_fixtures.py      # rewrites tests/data/gguf/

quants.gguf: one tensor per type the reader converts — F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K,
Q4_K, Q5_K, Q6_K — each [3, 512] (two super-blocks per row) of seeded values with a different spread per row
(row 2 has one large outlier per block, as real weights do), plus a 1-D F32 tensor and a [2, 2, 64] Q8_0 one;
metadata of every value type: scalars, a string array, numeric arrays, an empty array and an array of arrays;
general.alignment 64 (not the default 32).
quants.golden.safetensors: for each tensor, "<name>.original" (what was quantised) and "<name>.decoded" (its
blocks decoded by gguf_format.dequantize, numpy, independently of the C++ decoder).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import gguf_format as G  # noqa: E402
from safetensors_io import save_file  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "gguf")
TYPES = [G.F32, G.F16, G.BF16, G.Q4_0, G.Q4_1, G.Q5_0, G.Q5_1, G.Q8_0, G.Q2_K, G.Q3_K, G.Q4_K, G.Q5_K, G.Q6_K]


def values(rng):
    x = rng.normal(size=(3, 512)).astype(np.float32)
    x[0] *= 0.02  # a weight-like spread
    x[1] = x[1] * 0.5 + 0.3  # an offset row: the minimum matters
    x[2, ::32] *= 12  # one outlier per 32
    return x


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261206)
    tensors, golden = [], {}
    for t in TYPES:
        name = "quant." + G.NAMES[t].lower()
        x = values(rng)
        tensors.append((name, t, x))
    tensors.append(("vector.f32", G.F32, rng.normal(size=(7,)).astype(np.float32)))
    tensors.append(("cube.q8_0", G.Q8_0, rng.normal(size=(2, 2, 64)).astype(np.float32)))
    for name, t, x in tensors:
        data = G.encode(t, x)
        golden[name + ".original"] = x
        golden[name + ".decoded"] = G.dequantize(t, data, x.shape[-1]).reshape(x.shape).astype(np.float32)
    metadata = [
        ("general.architecture", G.STRING, "llama"),
        ("general.name", G.STRING, "quants fixture ✓"),
        ("general.alignment", G.U32, 64),
        ("test.u8", G.U8, 200),
        ("test.i8", G.I8, -100),
        ("test.u16", G.U16, 60000),
        ("test.i16", G.I16, -30000),
        ("test.u32", G.U32, 4000000000),
        ("test.i32", G.I32, -2000000000),
        ("test.u64", G.U64, 2**40),
        ("test.i64", G.I64, -(2**40)),
        ("test.f32", G.F32V, 0.25),
        ("test.f64", G.F64V, 1e-300),
        ("test.bool", G.BOOL, True),
        ("test.strings", G.ARRAY, (G.STRING, ["a", "Ġb", "", "<|endoftext|>"])),
        ("test.floats", G.ARRAY, (G.F32V, [0.5, -1.0, 3.0])),
        ("test.ints", G.ARRAY, (G.I32, [1, -2, 3, 4])),
        ("test.empty", G.ARRAY, (G.U8, [])),
        ("test.nested", G.ARRAY, (G.ARRAY, [(G.U8, [1, 2]), (G.STRING, ["x"])])),
    ]
    G.write_gguf(os.path.join(OUT, "quants.gguf"), metadata, tensors, alignment=64)
    save_file(golden, os.path.join(OUT, "quants.golden.safetensors"))
    for name, t, x in tensors:
        err = np.abs(golden[name + ".decoded"] - x).max()
        print(f"{name:14s} {G.NAMES[t]:5s} max |decoded - original| {err:.4g}")


if __name__ == "__main__":
    main()
