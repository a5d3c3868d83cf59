"""Minimal safetensors reader/writer for the golden tools (torch tensors; F32, F16, BF16).

Format: 8-byte little-endian header length N, N bytes of JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.
"""
import json
import struct

import numpy as np
import torch

_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
_BY_NAME = {v: k for k, v in _DTYPES.items()}


def _raw_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: reinterpret the bits as int16
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def save_file(tensors, path, metadata=None):
    """tensors: dict name -> torch tensor (float32/float16/bfloat16). Sorted name order."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        data = _raw_bytes(t)
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    header["__metadata__"] = dict(metadata or {"format": "pt"})
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for b in blobs:
            f.write(b)


def load_file(path):
    """-> dict name -> float32 torch tensor (F16/BF16 widened exactly)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = data[b:e]
        dt = info["dtype"]
        if dt == "F32":
            t = torch.from_numpy(np.frombuffer(raw, dtype="<f4").copy())
        elif dt == "F16":
            t = torch.from_numpy(np.frombuffer(raw, dtype="<f2").astype(np.float32))
        elif dt == "BF16":
            t = torch.from_numpy(np.frombuffer(raw, dtype="<i2").copy()).view(torch.bfloat16).float()
        else:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {dt}")
        out[name] = t.reshape(info["shape"])
    return out
