#!/usr/bin/env python3
"""Parity goldens for the C++ engines, produced by the training code's OWN inference on the
SHIPPED model folders (re-loaded from model.safetensors; F16 Marian weights are widened to F32).

Writes tests/data/builtin/:
  vit_<sample>.json    (3 files) — see SCHEMA in tools/train/README.md
  marian_<n>.json      (3 files)
  gpt2_<n>.json        (3 files) — the Text page's GPT-2: tokens and ids, every head's attention [L][H][T][T], the
                       last position's logits [V] and the greedy continuation of 8 tokens, from the independent
                       reference tools/golden/text_reference.py on the shipped weights
  unet_t<T>.json       (2 files) — the diffusion model: one forward (noise + every attention layer) at
                       timestep T on seeded noise, and a 10-step DDIM trajectory from that noise
Floats are rounded to 7 significant digits.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before numpy and torch load OpenBLAS)
import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

import marian_io  # noqa: E402
import marian_torch  # noqa: E402
import train_vit  # noqa: E402

REPO = train_vit.REPO
OUT = os.path.join(REPO, "tests/data/builtin")
VIT_DIR = "resources/models/vit-fashion-mnist"
MARIAN_DIR = "resources/models/marian-de-en-tiny"
UNET_DIR = "resources/models/ddpm-fashion-tiny"
UNET_CASES = [(400, 2)]  # (timestep, class); one case: each golden is ~3 MB of JSON
VIT_SAMPLES = ["ankle_boot_1.png", "shirt_1.png", "trouser_2.png"]
MAX_LOGIT_ROWS = 12
MARIAN_SENTENCES = ["Wie geht es dir?", "Ich habe Hunger.", "Das Buch ist sehr interessant."]
GPT2_DIR = "resources/models/gpt2-en-tiny"
GPT2_PROMPTS = ["The weather is nice today and", "I would like to", "Don't worry, we'll see."]


def r7(x):
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        return float(f"{float(a):.7g}")
    return [r7(v) for v in a]


def dump(name, obj):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {os.path.getsize(path) / 1e6:.2f} MB")


@torch.no_grad()
def vit_goldens():
    model, hc = train_vit.load_exported(os.path.join(REPO, VIT_DIR))
    with open(os.path.join(REPO, VIT_DIR, "preprocessor_config.json")) as f:
        pc = json.load(f)
    for fn in VIT_SAMPLES:
        rel = f"resources/samples/fashion-mnist/{fn}"
        im = Image.open(os.path.join(REPO, rel)).convert("L")
        im = im.resize((pc["size"]["width"], pc["size"]["height"]), Image.BILINEAR)
        u8 = np.array(im, dtype=np.uint8)[None]
        px = train_vit.preprocess_uint8(u8, pc["image_mean"][0], pc["image_std"][0])
        logits, atts = model(torch.from_numpy(px), output_attentions=True)
        probs = torch.softmax(logits[0], -1)
        dump("vit_" + fn.replace(".png", ".json"), {
            "model": VIT_DIR, "image": rel,
            "pixel_values_shape": list(px.shape), "pixel_values": r7(px[0, 0]),
            "logits": r7(logits[0].numpy()), "predicted": int(logits[0].argmax()),
            "predicted_label": hc["id2label"][str(int(logits[0].argmax()))],
            "probs": r7(probs.numpy()),
            "attentions": r7(torch.stack([a[0] for a in atts]).numpy()),
        })


@torch.no_grad()
def marian_goldens():
    folder = os.path.join(REPO, MARIAN_DIR)
    model, hc = marian_io.load_exported(folder)
    tok = marian_torch.Tokenizer(folder)
    for n, s in enumerate(MARIAN_SENTENCES, 1):
        src = tok.encode(s)
        gen = marian_torch.greedy(model, torch.tensor([src]), max_new_tokens=32)[0]
        target_ids = gen[1:]
        dec_in = gen[:-1]
        enc, mask, enc_att = model.encode(torch.tensor([src]))
        logits, dec_att, cross_att = model.decode(torch.tensor([dec_in]), enc, mask)
        dump(f"marian_{n}.json", {
            "model": MARIAN_DIR, "source": s,
            "source_tokens": tok.pieces(src), "source_ids": src,
            "max_new_tokens": 32, "num_beams": 1,
            "generated_ids": gen,
            "target_ids": target_ids, "target_tokens": tok.pieces(target_ids),
            "decoder_input_ids": dec_in,
            "translation": tok.decode(target_ids),
            # [T][V] rows of the teacher-forced pass; at most MAX_LOGIT_ROWS rows (file size)
            "logits_rows": min(len(dec_in), MAX_LOGIT_ROWS),
            "logits": r7(logits[0, :MAX_LOGIT_ROWS].numpy()),
            "attentions": {
                "encoder": r7(torch.stack([a[0] for a in enc_att]).numpy()),
                "decoder": r7(torch.stack([a[0] for a in dec_att]).numpy()),
                "cross": r7(torch.stack([a[0] for a in cross_att]).numpy()),
            },
        })


@torch.no_grad()
def gpt2_goldens():
    sys.path.insert(0, os.path.join(REPO, "tools", "golden"))
    import text_reference as ref
    from safetensors_io import load_torch
    folder = os.path.join(REPO, GPT2_DIR)
    w = load_torch(os.path.join(folder, "model.safetensors"))
    config = ref.load_config(folder)
    tok = ref.ByteBpe(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))
    for n, text in enumerate(GPT2_PROMPTS, 1):
        tokens, ids = tok.encode(text)
        attentions, logits = ref.gpt2_forward(w, config, ids, "transformer.")
        dump(f"gpt2_{n}.json", {
            "model": GPT2_DIR, "text": text, "tokens": tokens, "ids": ids,
            "attentions": r7(attentions.numpy()), "last_logits": r7(logits[-1].numpy()),
            "greedy_ids": ref.gpt2_greedy(w, config, ids, "transformer.", 8),
        })


@torch.no_grad()
def unet_goldens():
    sys.path.insert(0, os.path.join(REPO, "tools", "golden"))
    from unet_reference import Scheduler, load_folder
    model, sched_cfg = load_folder(os.path.join(REPO, UNET_DIR))
    c = model.config
    for t, cls in UNET_CASES:
        x = torch.from_numpy(np.random.default_rng(t).standard_normal(
            (1, c["in_channels"], c["sample_size"], c["sample_size"])).astype(np.float32))
        label = torch.tensor([cls])
        eps, caps = model.forward_captured(x, t, label)
        sched = Scheduler("ddim", sched_cfg)
        timesteps = sched.set_timesteps(10)
        cur = x
        for step in timesteps:
            cur, _ = sched.step(model(cur, step, label), step, cur)
        dump(f"unet_t{t}.json", {
            "model": UNET_DIR, "timestep": t, "class": cls,
            "sample": r7(x[0].numpy()), "noise_pred": r7(eps[0].numpy()),
            "attentions": [{"name": n, "weights": r7(w[0].numpy())} for n, w in caps],
            "ddim10": {"timesteps": timesteps, "final_sample": r7(cur[0].numpy())},
        })


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("which", nargs="*", default=["vit", "marian", "unet", "gpt2"])
    ap.add_argument("--vit-dir", default=VIT_DIR, help="model folder, relative to the repo")
    ap.add_argument("--marian-dir", default=MARIAN_DIR, help="model folder, relative to the repo")
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    VIT_DIR, MARIAN_DIR, OUT = a.vit_dir, a.marian_dir, a.out
    which = a.which
    torch.set_num_threads(1)
    if "vit" in which:
        vit_goldens()
    if "marian" in which:
        marian_goldens()
    if "unet" in which:
        unet_goldens()
    if "gpt2" in which:
        gpt2_goldens()
