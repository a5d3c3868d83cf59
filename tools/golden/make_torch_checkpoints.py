"""PyTorch checkpoints (torch.save) for the C++ reader of pytorch_model.bin (core/io/torch_checkpoint).

    /usr/bin/python3 tools/golden/make_torch_checkpoints.py   # writes tests/data/torch/

Written by Debian's real torch.save (1.13), in both formats: the zip format of PyTorch >= 1.6 ("*.zip.bin")
and the legacy format (_use_new_zipfile_serialization=False, "*.legacy.bin"). The storage keys of legacy files
are memory addresses, so rerunning changes their bytes, not their content.

Layouts (layouts.{zip,legacy}.bin; layouts.json holds every tensor's dtype, shape and values, row-major):
  w [2,3] F32; tied: the same tensor object as w; t = w.t() (strides [1,3]); row = w[1] (storage offset 3);
  cols = m[:, 1:4] of a [3,5] tensor (offset 1, strides [5,1]); h F16, b BF16; l int64 (listed, not loadable);
  the state dict's _metadata attribute, as nn.Module.state_dict() sets it.
wrapped.zip.bin: {"state_dict": {...layouts...}, "epoch": 3} as training scripts save it.
hostile.{zip,legacy}.bin: a dict whose second value unpickles by calling os.system — must be refused, and
  nothing run (the command would create /tmp/attnlens-pickle-ran).

Models: the state dicts of the safetensors fixtures, as transformers / diffusers would torch.save them:
  marian-tiny-f32.{zip,legacy}.bin   tests/data/marian/tiny-f32, with model.encoder.embed_tokens.weight,
                                     model.decoder.embed_tokens.weight and lm_head.weight tied to
                                     model.shared.weight (one storage), as MarianMTModel.state_dict() has them
  vit-rgb-bf16.zip.bin               tests/data/vit/rgb-bf16 (BF16 storages)
  vit-rgb.legacy.bin                 tests/data/vit/rgb
  unet-bare-head8-f16.zip.bin        tests/data/unet/bare-head8-f16 (F16 storages)
  unet-bare-head8.legacy.bin         tests/data/unet/bare-head8
The C++ tests put each beside its folder's other files and check that every output equals the safetensors
folder's exactly (and so the goldens of tools/golden's references).
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
import fast_blas  # noqa: F401,E402  (before numpy / torch)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import load_torch  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "data", "torch")


def save_both(sd, stem, formats=("zip", "legacy")):
    for fmt in formats:
        path = os.path.join(OUT, f"{stem}.{fmt}.bin")
        torch.save(sd, path, _use_new_zipfile_serialization=(fmt == "zip"))
        print("wrote", os.path.relpath(path, ROOT), os.path.getsize(path), "bytes")


def with_metadata(sd):
    sd = collections.OrderedDict(sd)
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    return sd


def layouts():
    w = torch.tensor([[0.5, -1.25, 2.0], [3.0, 4.5, -6.0]], dtype=torch.float32)
    m = torch.arange(15, dtype=torch.float32).reshape(3, 5) / 4
    sd = with_metadata([
        ("w", w), ("tied", w), ("t", w.t()), ("row", w[1]), ("cols", m[:, 1:4]),
        ("h", torch.tensor([1.0, -0.333, 65504.0, 6e-8], dtype=torch.float16)),
        ("b", torch.tensor([[1.0, -2.5], [3.140625, 1e-3]], dtype=torch.bfloat16)),
        ("l", torch.arange(4, dtype=torch.int64)),
    ])
    expected = {}
    for name, t in sd.items():
        dtype = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}[t.dtype]
        expected[name] = {"dtype": dtype, "shape": list(t.shape), "values": t.float().flatten().tolist(),
                          "contiguous": t.is_contiguous()}
    save_both(sd, "layouts")
    torch.save({"state_dict": sd, "epoch": 3}, os.path.join(OUT, "wrapped.zip.bin"))
    with open(os.path.join(OUT, "layouts.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


class RunsACommand:
    """Unpickling this calls os.system — what a malicious checkpoint does."""

    def __reduce__(self):
        return (os.system, ("touch /tmp/attnlens-pickle-ran",))


def hostile():
    save_both(collections.OrderedDict([("w", torch.ones(2)), ("payload", RunsACommand())]), "hostile")


def model(src, stem, formats, tie=()):
    sd = collections.OrderedDict(load_torch(src, stored_dtype=True))
    if tie:
        shared = sd[tie[0]]
        for name in tie[1:]:
            sd[name] = shared  # one storage, as tied nn.Parameters are saved
    save_both(with_metadata(sd), stem, formats)


def main():
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    layouts()
    hostile()
    data = os.path.join(ROOT, "tests", "data")
    model(os.path.join(data, "marian", "tiny-f32", "model.safetensors"), "marian-tiny-f32", ("zip", "legacy"),
          tie=("model.shared.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight",
               "lm_head.weight"))
    model(os.path.join(data, "vit", "rgb-bf16", "model.safetensors"), "vit-rgb-bf16", ("zip",))
    model(os.path.join(data, "vit", "rgb", "model.safetensors"), "vit-rgb", ("legacy",))
    model(os.path.join(data, "unet", "bare-head8-f16", "diffusion_pytorch_model.safetensors"), "unet-bare-head8-f16", ("zip",))
    model(os.path.join(data, "unet", "bare-head8", "diffusion_pytorch_model.safetensors"), "unet-bare-head8", ("legacy",))


if __name__ == "__main__":
    main()
