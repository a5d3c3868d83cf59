#!/usr/bin/env python3
"""Small safetensors files in F32, F16 and BF16 written by an independent writer (numpy/torch + json),
with the float32 values a reader must produce (tests/fast/test_safetensors.cpp).
Run: /usr/bin/python3 tools/golden/safetensors_fixtures.py tests/data/safetensors
"""
import json
import struct
import sys
from pathlib import Path

import numpy as np
import torch


def write(path, tensors, metadata, align=8):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, arr) in tensors.items():
        raw = arr.tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    if align:
        text += b" " * (-(8 + len(text)) % align)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(7)
    base = {
        "weight": torch.randn(3, 5, generator=gen) * 3,
        "bias": torch.tensor([0.0, -0.0, 1.0, -2.5, 65504.0, 6.1035156e-05, 5.9604645e-08, 1e-3]),
        "scalar": torch.tensor(0.125),
        "empty": torch.zeros(0, 4),
        "cube": torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 7,
    }
    expected = {}
    for dtype, tdtype in (("F32", torch.float32), ("F16", torch.float16), ("BF16", torch.bfloat16)):
        tensors, values = {}, {}
        for name, t in base.items():
            conv = t.to(tdtype)
            if tdtype == torch.bfloat16:
                arr = conv.view(torch.int16).numpy().view(np.uint16)
            else:
                arr = conv.numpy()
            tensors[name] = (dtype, arr.copy(order="C"))  # keeps rank 0 (ascontiguousarray would not)
            values[name] = {"shape": list(t.shape), "values": conv.float().reshape(-1).tolist()}
        # F32 file without 8-byte alignment of the data section to exercise the unaligned path.
        write(out / f"{dtype.lower()}.safetensors", tensors, {"format": "pt", "dtype": dtype},
              align=0 if dtype == "F32" else 8)
        expected[dtype] = values
    (out / "expected.json").write_text(json.dumps(expected, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/safetensors")
