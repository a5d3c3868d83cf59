"""Golden for head ablation (transformers' head_mask) on the rgb ViT fixture, without regenerating the others:
tests/data/vit/rgb/golden_ablate_photo_97x61.safetensors holds head_mask [L, H] (0 = ablated), logits and
attentions [L, H, T, T] (the ablated heads' rows all zero) of the independent reference (vit_reference.py).

Run with Debian's interpreter after tools/golden/make_vit_fixtures.py: /usr/bin/python3 tools/golden/make_vit_ablation_golden.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from safetensors_io import save_file  # noqa: E402
from vit_reference import RefVit, load_processor, preprocess  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "tests", "data", "vit", "rgb")
IMAGE = os.path.join(ROOT, "tests", "data", "vit", "images", "photo_97x61.png")

# The C++ test ablates the same heads: layer 0 head 1, layer 1 heads 0 and 3.
ABLATED = [(0, 1), (1, 0), (1, 3)]


def main():
    torch.set_num_threads(1)
    ref = RefVit(MODEL)
    pixels, _ = preprocess(Image.open(IMAGE), load_processor(MODEL), ref.c["channels"])
    mask = torch.ones(ref.c["layers"], ref.c["heads"])
    for layer, head in ABLATED:
        mask[layer, head] = 0
    out = ref.forward(pixels, head_mask=mask)
    path = os.path.join(MODEL, "golden_ablate_photo_97x61.safetensors")
    save_file({"head_mask": mask.contiguous(), "logits": out["logits"].float().contiguous(),
               "attentions": out["attentions"].float().contiguous()}, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
