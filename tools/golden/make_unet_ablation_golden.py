"""Golden for head ablation on the bare-head8 U-Net fixture, without regenerating the others: diffusers has no
head_mask, so the semantics are transformers' (each switched-off head's softmax probabilities × 0, its captured
attention all zeros). tests/data/unet/bare-head8/golden_ablate.safetensors holds head_mask [layers, heads]
(attention layers in execution order, 0 = off), the t=500 sample, noise_pred and "attn.{i}" [heads, N, N] of the
independent reference (unet_reference.py).

Run with Debian's interpreter after tools/golden/make_unet_fixtures.py:
    /usr/bin/python3 tools/golden/make_unet_ablation_golden.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from safetensors_io import load_torch, save_file  # noqa: E402
from unet_reference import load_folder  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "tests", "data", "unet", "bare-head8")

# The C++ test switches off the same heads: (attention layer, head) in execution order, numbered from 0.
ABLATED = [(0, 1), (1, 0), (1, 3), (3, 2)]
TIMESTEP = 500


def main():
    torch.set_num_threads(1)
    model, _ = load_folder(MODEL)
    mods = model.attention_modules()
    heads = max(m.heads for _, m in mods)
    mask = torch.ones(len(mods), heads)
    for layer, head in ABLATED:
        mask[layer, head] = 0
    for i, (_, m) in enumerate(mods):
        m.head_mask = mask[i, : m.heads].clone()
    sample = load_torch(os.path.join(MODEL, "golden.safetensors"))[f"t{TIMESTEP}.sample"]
    with torch.no_grad():
        out, caps = model.forward_captured(sample[None], TIMESTEP)
    tensors = {"head_mask": mask, "sample": sample, "noise_pred": out[0]}
    for i, (_, w) in enumerate(caps):
        tensors[f"attn.{i}"] = w[0]
    path = os.path.join(MODEL, "golden_ablate.safetensors")
    save_file({k: v.float().contiguous() for k, v in tensors.items()}, path, {"format": "pt"})
    print(f"wrote {path}: {len(mods)} attention layers, heads off {ABLATED}")


if __name__ == "__main__":
    main()
