"""Minimal safetensors reader/writer (numpy + json only; no `safetensors` package needed).

Format: 8-byte little-endian header length, JSON header
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the raw
little-endian, row-major, contiguous tensor bytes.
"""
import json
import struct

import numpy as np

_DT = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int64"): "I64",
       np.dtype("int32"): "I32"}
_ND = {v: k for k, v in _DT.items()}


def save_file(tensors, path, metadata=None):
    """tensors: dict name -> numpy array. Written in sorted name order, 8-byte aligned header."""
    header = {}
    offset = 0
    arrays = []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        nbytes = a.nbytes
        header[name] = {"dtype": _DT[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
        arrays.append(a)
    header["__metadata__"] = dict(metadata or {"format": "pt"})
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for a in arrays:
            f.write(a.tobytes(order="C"))


def load_file(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dt = np.dtype(_ND[info["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(data[base + b:base + e], dtype=dt).reshape(info["shape"]).copy()
    return out
