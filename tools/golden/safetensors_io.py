"""The project's one Python safetensors reader/writer (numpy + json; torch only when asked).

Used by the golden tools (tools/golden), the training scripts (tools/train) and the benchmark
fixture makers (tools/bench), so that every file the C++ tests read is written the same way.

Format: 8-byte little-endian header length N, N bytes of JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}} padded with
spaces to a multiple of 8, then the raw little-endian, row-major, contiguous tensor bytes.
"""
import json
import struct

import numpy as np

_NP_TO_NAME = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int64"): "I64",
               np.dtype("int32"): "I32"}
_NAME_TO_NP = {v: k for k, v in _NP_TO_NAME.items()}


def _encode(value):
    """numpy array or torch tensor -> (dtype name, shape, little-endian bytes)."""
    if not isinstance(value, np.ndarray):  # a torch tensor
        import torch
        t = value.detach().contiguous().cpu()
        if t.dtype == torch.bfloat16:  # numpy has no bfloat16: keep the 16 bits as int16
            return "BF16", list(t.shape), t.view(torch.int16).numpy().astype("<i2").tobytes()
        value = t.numpy()
    a = np.ascontiguousarray(value)
    name = _NP_TO_NAME.get(a.dtype.newbyteorder("="))
    if name is None:
        raise ValueError(f"unsupported dtype {a.dtype}")
    return name, list(a.shape), a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(order="C")


def save_file(tensors, path, metadata=None):
    """tensors: dict name -> numpy array or torch tensor (F32/F16/BF16/I64/I32), written in
    sorted name order."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, data = _encode(tensors[name])
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
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
    """-> dict name -> numpy array in the stored dtype (BF16 is widened exactly to float32)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dt = info["dtype"]
        if dt == "BF16":  # the high 16 bits of a float32
            bits = np.frombuffer(data[b:e], dtype="<u2").astype(np.uint32) << 16
            a = bits.view(np.float32)
        elif dt in _NAME_TO_NP:
            a = np.frombuffer(data[b:e], dtype=_NAME_TO_NP[dt].newbyteorder("<")).copy()
        else:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {dt}")
        out[name] = a.reshape(info["shape"])
    return out


def load_metadata(path):
    """-> the header's "__metadata__" dict (string -> string; empty when absent)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return dict(json.loads(f.read(n).decode("utf-8")).get("__metadata__", {}))


TRAINING_RECORD_KEY = "attnlens_training"  # the training scripts' record (a JSON string) in __metadata__


def training_record(folder, parse_card):
    """The training record of an exported model folder: the JSON stored in its model.safetensors
    metadata, or, for folders exported before the record was stored there, parse_card(text of
    the folder's README.md model card)."""
    import os
    md = load_metadata(os.path.join(folder, "model.safetensors"))
    if TRAINING_RECORD_KEY in md:
        return json.loads(md[TRAINING_RECORD_KEY])
    with open(os.path.join(folder, "README.md"), encoding="utf-8") as f:
        return parse_card(f.read())


def load_torch(path, stored_dtype=False):
    """-> dict name -> float32 torch tensor (F16/BF16 widened exactly), in file order; with stored_dtype, F16 and
    BF16 tensors keep their 16-bit type (BF16 narrowed back exactly)."""
    import torch
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
    order = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])
    arrays = load_file(path)
    out = {}
    for k in order:
        dtype = header[k]["dtype"]
        if stored_dtype and dtype == "F16":
            out[k] = torch.from_numpy(np.ascontiguousarray(arrays[k]))
        elif stored_dtype and dtype == "BF16":
            out[k] = torch.from_numpy(np.ascontiguousarray(arrays[k], dtype=np.float32)).to(torch.bfloat16)
        else:
            out[k] = torch.from_numpy(np.ascontiguousarray(arrays[k], dtype=np.float32))
    return out
