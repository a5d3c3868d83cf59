"""Random ViT checkpoints at real sizes, for timing the C++ engine (NOT committed; written to /tmp).

    /usr/bin/python3 tools/bench/make_vit_sized.py [OUT_DIR=/tmp/attnlens-vit-bench]

  vit-b16   ViT-B/16: 224×224, patch 16, hidden 768, 12 layers, 12 heads, MLP 3072, 1000 classes
  deit-s16  DeiT-S/16: 224×224, patch 16, hidden 384, 12 layers, 6 heads, MLP 1536, 1000 classes
Also writes bench.png (a 640×480 test picture) and list.tsv (that picture 20 times) in OUT_DIR; time with

    attnlens-cli vision-eval --model OUT_DIR/vit-b16 --list OUT_DIR/list.tsv --capture --threads 1

(--threads N: the engine's team; without it, the machine's physical cores).
"""
import json
import os
import sys

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from make_vit_fixtures import hf_config, photo_like, vit_processor  # noqa: E402
from safetensors_io import save_file  # noqa: E402


def weights(gen, c, labels):
    d, inter, p, ch = c["hidden_size"], c["intermediate_size"], c["patch_size"], c["num_channels"]
    n = (c["image_size"] // p) ** 2
    r = lambda *s: torch.randn(*s, generator=gen) * 0.02  # noqa: E731
    w = {"vit.embeddings.cls_token": r(1, 1, d), "vit.embeddings.position_embeddings": r(1, n + 1, d),
         "vit.embeddings.patch_embeddings.projection.weight": r(d, ch, p, p),
         "vit.embeddings.patch_embeddings.projection.bias": r(d)}
    for i in range(c["num_hidden_layers"]):
        l = f"vit.encoder.layer.{i}."
        for ln in ("layernorm_before", "layernorm_after"):
            w[l + ln + ".weight"] = torch.ones(d)
            w[l + ln + ".bias"] = torch.zeros(d)
        for name in ("query", "key", "value"):
            w[l + f"attention.attention.{name}.weight"] = r(d, d)
            w[l + f"attention.attention.{name}.bias"] = r(d)
        w[l + "attention.output.dense.weight"] = r(d, d)
        w[l + "attention.output.dense.bias"] = r(d)
        w[l + "intermediate.dense.weight"] = r(inter, d)
        w[l + "intermediate.dense.bias"] = r(inter)
        w[l + "output.dense.weight"] = r(d, inter)
        w[l + "output.dense.bias"] = r(d)
    w["vit.layernorm.weight"] = torch.ones(d)
    w["vit.layernorm.bias"] = torch.zeros(d)
    w["classifier.weight"] = r(labels, d)
    w["classifier.bias"] = r(labels)
    return w


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/attnlens-vit-bench"
    os.makedirs(out, exist_ok=True)
    gen = torch.Generator().manual_seed(7)
    labels = [f"class_{i}" for i in range(1000)]
    for name, d, heads, inter in (("vit-b16", 768, 12, 3072), ("deit-s16", 384, 6, 1536)):
        c = hf_config("ViTForImageClassification", d, 12, heads, inter, 224, 16, 3, labels)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(c, f, indent=1)
        with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
            json.dump(vit_processor(224, 224, [0.5] * 3, [0.5] * 3), f, indent=1)
        save_file(weights(gen, c, len(labels)), os.path.join(folder, "model.safetensors"))
        print("wrote", folder)
    Image.fromarray(photo_like(640, 480, 5)).save(os.path.join(out, "bench.png"))
    with open(os.path.join(out, "list.tsv"), "w") as f:
        f.write("bench.png\n" * 20)


if __name__ == "__main__":
    main()
