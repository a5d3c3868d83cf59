#!/usr/bin/env python3
"""Train the built-in ViT (Hugging Face ViTForImageClassification semantics) on Fashion-MNIST.

Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist/*.gz, IDX format).
The model is a plain PyTorch re-implementation whose state_dict names equal the HF checkpoint
names (vit.embeddings.*, vit.encoder.layer.{i}.*, vit.layernorm.*, classifier.*), pre-norm,
exact erf GELU, LayerNorm eps 1e-12, scores/sqrt(head_dim).

Inputs are produced exactly like ViTImageProcessor would from the 28x28 grayscale PNG:
uint8 -> x * (1/255) in float64 -> float32 -> (x - mean) / std in float32.

Usage:
  train_vit.py --work build/train-work/vit [--epochs 30] [--resume]
  train_vit.py --work build/train-work/vit --export-only   # export latest checkpoint
"""
import argparse
import glob
import json
import re
import math
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before numpy and torch load OpenBLAS)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
import safetensors_io as st_io  # noqa: E402  (the one shared writer, tools/golden)
import hf_folder  # noqa: E402

from fashion_data import (CLASSES, DATA_DIR, IMAGE_MEAN, IMAGE_STD, REPO, augment, evaluate,  # noqa: E402,F401
                          load_split, preprocess_uint8, read_idx, start_run)


# ---------------------------------------------------------------------------------------- model
class PatchEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.projection = nn.Conv2d(c["num_channels"], c["hidden_size"], c["patch_size"],
                                    stride=c["patch_size"])

    def forward(self, x):
        return self.projection(x).flatten(2).transpose(1, 2)  # row-major over the grid


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = (c["image_size"] // c["patch_size"]) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c["hidden_size"]))
        self.position_embeddings = nn.Parameter(torch.randn(1, n + 1, c["hidden_size"]) * 0.02)
        self.patch_embeddings = PatchEmbeddings(c)

    def forward(self, x):
        p = self.patch_embeddings(x)
        cls = self.cls_token.expand(p.shape[0], -1, -1)
        return torch.cat([cls, p], dim=1) + self.position_embeddings


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["hidden_size"]
        self.h = c["num_attention_heads"]
        self.hd = d // self.h
        self.query = nn.Linear(d, d, bias=c["qkv_bias"])
        self.key = nn.Linear(d, d, bias=c["qkv_bias"])
        self.value = nn.Linear(d, d, bias=c["qkv_bias"])

    def forward(self, x):
        b, n, d = x.shape

        def split(t):
            return t.view(b, n, self.h, self.hd).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, n, d)
        return ctx, probs


class SelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = SelfAttention(c)
        self.output = SelfOutput(c)

    def forward(self, x):
        ctx, probs = self.attention(x)
        return self.output.dense(ctx), probs


class Dense(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.dense = nn.Linear(i, o)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, i, eps = c["hidden_size"], c["intermediate_size"], c["layer_norm_eps"]
        self.attention = Attention(c)
        self.intermediate = Dense(d, i)
        self.output = Dense(i, d)
        self.layernorm_before = nn.LayerNorm(d, eps=eps)
        self.layernorm_after = nn.LayerNorm(d, eps=eps)

    def forward(self, x):
        a, probs = self.attention(self.layernorm_before(x))
        x = x + a
        h = F.gelu(self.intermediate.dense(self.layernorm_after(x)))  # exact erf GELU
        x = x + self.output.dense(h)
        return x, probs


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])


class ViTModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        self.layernorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])


class ViTForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.vit = ViTModel(c)
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, pixel_values, output_attentions=False):
        x = self.vit.embeddings(pixel_values)
        atts = []
        for layer in self.vit.encoder.layer:
            x, probs = layer(x)
            if output_attentions:
                atts.append(probs)
        x = self.vit.layernorm(x)
        logits = self.classifier(x[:, 0])
        return logits, atts


def grow_layers(cfg, sd, n):
    """Insert n new encoder layers, spread evenly between the old ones, into a state dict. Each new
    layer is freshly initialised except its two output projections (attention output and MLP output),
    which are zero: its residual branches add nothing, so the grown model computes exactly what the
    old one did, and training grows the new layers from there."""
    old = cfg["num_hidden_layers"]
    total = old + n
    new_at = sorted({round((i + 1) * total / (n + 1)) - 1 for i in range(n)})
    cfg = dict(cfg, num_hidden_layers=total)
    fresh = ViTForImageClassification(cfg).state_dict()
    out, src = {}, 0
    pre = "vit.encoder.layer."
    for k, v in sd.items():
        if not k.startswith(pre):
            out[k] = v
    for dst in range(total):
        for k, v in fresh.items():
            if not k.startswith(f"{pre}{dst}."):
                continue
            rest = k[len(f"{pre}{dst}."):]
            if dst in new_at:
                zero = rest.startswith("attention.output.dense.") or rest.startswith("output.dense.")
                out[k] = torch.zeros_like(v) if zero else v
            else:
                out[k] = sd[f"{pre}{src}.{rest}"]
        if dst not in new_at:
            src += 1
    return cfg, out, new_at


def teacher_spec(args):
    return {"path": os.path.relpath(os.path.abspath(args.teacher), REPO), "alpha": args.kd_alpha,
            "temperature": args.kd_temp}


def make_config(args):
    return {
        "hidden_size": args.d, "num_hidden_layers": args.layers, "num_attention_heads": args.heads,
        "intermediate_size": args.ffn, "layer_norm_eps": 1e-12, "image_size": 28,
        "patch_size": 4, "num_channels": 1, "qkv_bias": True, "num_labels": len(CLASSES),
    }


def hf_config(c):
    return {
        "architectures": ["ViTForImageClassification"],
        "model_type": "vit",
        "attention_probs_dropout_prob": 0.0,
        "encoder_stride": c["patch_size"],
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "hidden_size": c["hidden_size"],
        "id2label": {str(i): n for i, n in enumerate(CLASSES)},
        "label2id": {n: i for i, n in enumerate(CLASSES)},
        "image_size": c["image_size"],
        "initializer_range": 0.02,
        "intermediate_size": c["intermediate_size"],
        "layer_norm_eps": c["layer_norm_eps"],
        "num_attention_heads": c["num_attention_heads"],
        "num_channels": c["num_channels"],
        "num_hidden_layers": c["num_hidden_layers"],
        "patch_size": c["patch_size"],
        "problem_type": "single_label_classification",
        "qkv_bias": c["qkv_bias"],
        "torch_dtype": "float32",
        "transformers_version": "4.33.3",
    }


def preprocessor_config():
    return {
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [IMAGE_MEAN],
        "image_processor_type": "ViTImageProcessor",
        "image_std": [IMAGE_STD],
        "resample": 2,
        "rescale_factor": 1.0 / 255.0,
        "size": {"height": 28, "width": 28},
    }


def config_from_hf(hc):
    return {k: hc[k] for k in ["hidden_size", "num_hidden_layers", "num_attention_heads",
                               "intermediate_size", "layer_norm_eps", "image_size", "patch_size",
                               "num_channels", "qkv_bias"]} | {"num_labels": len(hc["id2label"])}


def load_exported(folder):
    """Re-load an exported HF folder into the training model (used by make_goldens.py)."""
    return hf_folder.load_exported(folder, lambda hc: ViTForImageClassification(config_from_hf(hc)))


def record_from_card(text):
    """The training record (meta) of a folder exported before the record was stored in the
    safetensors metadata, recovered from the model card that export() wrote."""
    meta = {"history": [], "epoch": 0, "train_seconds": 0.0}
    m = re.search(r"AdamW \(weight decay ([\d.]+)\), batch (\d+)", text)
    meta["wd"], meta["batch"] = float(m.group(1)), int(m.group(2))
    cycles = []
    for m in re.finditer(r"\* cycle \d+[^:]*: epochs (\d+)–(\d+), peak lr ([\d.e-]+), linear warm-up "
                         r"([\d.]+) epochs?(?:, cosine over a ([\d.]+)-minute wall-time budget)?"
                         r"(?:, cosine decay)?(, no augmentation)?; (\d+) minutes", text):
        cycles.append({"start_epoch": int(m.group(1)) - 1, "epochs": int(m.group(2)) - int(m.group(1)) + 1,
                       "lr": float(m.group(3)), "warmup_epochs": float(m.group(4)),
                       "budget_minutes": float(m.group(5)) if m.group(5) else None,
                       "seconds": 60.0 * int(m.group(7)), "augment": not m.group(6)})
    for m in re.finditer(r"^\| (\d+)(?: \(stopped after (\d+) steps: budget\))? \| ([\d.]+) \| "
                         r"([\d.]+) % \|$", text, re.M):
        meta["history"].append({"epoch": int(m.group(1)), "train_loss": float(m.group(3)),
                                "test_acc": float(m.group(4)) / 100, "partial": bool(m.group(2)),
                                **({"steps": int(m.group(2))} if m.group(2) else {})})
    meta["epoch"] = len(meta["history"])
    m = re.search(r"(\d+) minutes of training wall time", text)
    meta["train_seconds"] = 60.0 * int(m.group(1)) if m else sum(c["seconds"] for c in cycles)
    if cycles:
        meta["cycles"], meta["cycle"] = cycles[:-1], cycles[-1]
        meta["lr"], meta["warmup_epochs"] = cycles[0]["lr"], cycles[0]["warmup_epochs"]
    meta["epochs"] = meta["epoch"]
    return meta


def load_for_training(folder):
    """An exported folder as a checkpoint without optimizer state: weights + training record."""
    model, hc = load_exported(folder)
    meta = st_io.training_record(folder, record_from_card)
    meta.pop("cpp_eval", None)  # measured on the old weights
    return {"config": config_from_hf(hc), "meta": meta, "model": model.state_dict()}


# ------------------------------------------------------------------------------------ training
def export(model, meta, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    c = model.config
    tensors = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    # The training record travels with the weights, so that a later run can continue from the
    # shipped folder alone (--init-from) when the work directory is gone.
    st_io.save_file(tensors, os.path.join(out_dir, "model.safetensors"),
                    {"format": "pt", st_io.TRAINING_RECORD_KEY: json.dumps(meta, separators=(",", ":"))})
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(hf_config(c), f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump(preprocessor_config(), f, indent=2)
        f.write("\n")
    nparams = sum(v.size for v in tensors.values())
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write(model_card(c, meta, nparams))


def model_card(c, meta, nparams):
    hist = meta.get("history", [])
    best = dict(hist[-1]) if hist else {}
    avg = meta.get("averaged")
    if avg:
        best["test_acc"] = avg["test_acc"]
    lines = [
        "---", "license: mit", "library_name: transformers", "pipeline_tag: image-classification",
        "datasets:", "- fashion_mnist", "---", "",
        "# vit-fashion-mnist — Attention Lens built-in vision transformer", "",
        "A small Vision Transformer (Hugging Face `ViTForImageClassification` layout and semantics)",
        "trained from scratch on CPU by `tools/train/train_vit.py` in the Attention Lens repository.", "",
        "## Data", "",
        "Fashion-MNIST (Zalando Research, MIT licence) as shipped by Debian's `dataset-fashion-mnist`:",
        "60 000 training and 10 000 test 28×28 grayscale images in 10 classes. All 60 000 training",
        "images are used for training; the test set is only used for measuring (its accuracy after",
        "every epoch is the table below, and was watched when choosing the next cycle's schedule).", "",
        "## Model", "",
        f"* 28×28×1 input, patch 4 → 7×7 = 49 patches + CLS = 50 tokens",
        f"* hidden {c['hidden_size']}, {c['num_hidden_layers']} layers, {c['num_attention_heads']} heads, "
        f"MLP {c['intermediate_size']}, exact GELU, pre-norm, LayerNorm eps 1e-12",
        f"* {nparams:,} parameters, float32 safetensors",
        "", "## Preprocessing", "",
        f"Load the PNG as 8-bit grayscale (identical to any channel of an RGB load of a gray image),",
        f"resize to 28×28 (bilinear, identity for the shipped samples), ×1/255, then",
        f"(x − {IMAGE_MEAN}) / {IMAGE_STD}. See `preprocessor_config.json`.", "",
        "## Training", "",
        f"* AdamW (weight decay {meta.get('wd')}), batch {meta.get('batch')}, label smoothing 0.1, "
        "gradient clipping 1.0",
        "* augmentation (unless a cycle below says otherwise): random 28×28 crop from the image "
        "zero-padded by 2 pixels, horizontal flip",
        *cycle_lines(meta),
        *grown_lines(meta),
        f"* {len(hist)} epochs in all, one CPU thread (PyTorch 1.13 + OpenBLAS), "
        f"{meta.get('train_seconds', 0) / 60:.0f} minutes of training wall time",
        "", "## Results", "",
        f"Test accuracy (10 000 Fashion-MNIST test images, PyTorch, float32): "
        f"**{100 * best.get('test_acc', 0):.2f} %** after epoch {best.get('epoch', '?')}" +
        (f", with the exported weights the average of the weights after epochs {avg['epochs'][0]}–"
         f"{avg['epochs'][-1]} (the last epoch's weights alone: {100 * hist[-1]['test_acc']:.2f} %)." if avg else "."), "",
        *cpp_eval_lines(meta.get("cpp_eval")),
        *(["The train loss of a distillation cycle is its whole loss (cross-entropy and distillation terms).", ""]
          if any(c.get("teacher") for c in list(meta.get("cycles", [])) + [meta.get("cycle") or {}, meta])
          else []),
        "| epoch | train loss | test accuracy |", "|---|---|---|",
    ]
    for h in hist:
        part = f" (stopped after {h['steps']} steps: budget)" if h.get("partial") else ""
        lines.append(f"| {h['epoch']}{part} | {h['train_loss']:.4f} | {100 * h['test_acc']:.2f} % |")
    lines += [
        "", "## Known weaknesses", "",
        *([f"* **Below the project's 91 % target** ({100 * best.get('test_acc', 0):.2f} % in PyTorch): "
           f"{len(hist)} epochs in {meta.get('train_seconds', 0) / 60:.0f} minutes of one CPU thread",
           "  (see the learning-rate cycles above) left it under-fitted — training and test accuracy",
           "  stayed close together. More epochs (`tools/train/run_vit.sh` without `--minutes`: 25",
           "  epochs from scratch), or a GPU, are the way up."] if best.get("test_acc", 1) < 0.91 else []),
        "* Trained on centred, 28×28 Fashion-MNIST product photos on a black background: real photos,",
        "  other backgrounds, inverted (dark-on-light) images or off-centre objects will be misclassified.",
        "* The usual confusions of this dataset remain: Shirt vs T-shirt/top, Pullover and Coat.",
        "* Small and trained briefly on CPU; attention maps are informative but coarser than those of a",
        "  large pretrained ViT.", "",
    ]
    return "\n".join(lines)


def cpp_eval_lines(ev):
    """The C++ engine's own measurement (attnlens-cli vision-eval) as model-card lines."""
    if not ev:
        return []
    lines = [f"Measured by the Attention Lens C++ engine (`attnlens-cli vision-eval`, PNG-equivalent "
             f"preprocessing from the IDX bytes) over all {ev['images']:,} test images: "
             f"**{100 * ev['accuracy']:.2f} %** ({ev['correct']:,} correct, "
             f"{ev['ms_per_image']:.1f} ms per image on one thread).", "",
             "| class | test accuracy (C++) |", "|---|---|"]
    for c in ev["per_class"]:
        lines.append(f"| {c['label']} | {100 * c['correct'] / max(1, c['count']):.1f} % |")
    return lines + ["", "Per epoch (PyTorch):", ""]


def cycle_lines(meta):
    """The learning-rate schedule(s) as model-card lines: one per warm-restart cycle."""
    cycles = list(meta.get("cycles", [])) + ([meta["cycle"]] if meta.get("cycle") else [])
    if not cycles:
        cycles = [{"start_epoch": 0, "epochs": meta.get("epochs"), "lr": meta.get("lr"),
                   "warmup_epochs": meta.get("warmup_epochs"),
                   "budget_minutes": meta.get("budget_minutes"),
                   "seconds": meta.get("train_seconds", 0.0), "teacher": meta.get("teacher")}]
    hist = meta.get("history", [])
    out = []
    for i, c in enumerate(cycles):
        end = cycles[i + 1]["start_epoch"] if i + 1 < len(cycles) else len(hist)
        budget = (f", cosine over a {c['budget_minutes']:g}-minute wall-time budget"
                  if c.get("budget_minutes") else ", cosine decay")
        out.append(f"* cycle {i + 1}{' (warm restart from the weights above)' if i else ''}: "
                   f"epochs {c['start_epoch'] + 1}–{end}, peak lr {c['lr']:g}, linear warm-up "
                   f"{c['warmup_epochs']:g} epoch{budget}"
                   f"{'' if c.get('augment', True) else ', no augmentation'}"
                   f"{', optimizer state restarted (continued from the exported folder)' if c.get('fresh_optimizer') else ''}"
                   f"{teacher_words(c.get('teacher'))}; "
                   f"{c.get('seconds', 0) / 60:.0f} minutes")
    return out


def teacher_words(kd):
    if not kd:
        return ""
    return (f", distilled from a CNN teacher (`tools/train/train_teacher.py --width {kd.get('width')}`, "
            f"{kd.get('teacher_epochs')} epochs, {kd.get('teacher_minutes', 0):.0f} minutes, "
            f"{100 * kd.get('test_acc', 0):.2f} % test accuracy; loss (1 − {kd['alpha']:g}) · CE + {kd['alpha']:g} · "
            f"T² · KL at T = {kd['temperature']:g})")


def grown_lines(meta):
    return [f"* after epoch {g['at_epoch']}: {len(g['new_layers'])} new layers inserted (now layers "
            f"{', '.join(str(i) for i in g['new_layers'])}, counted from 0), their output projections zero so "
            "that the model started from the same function" for g in meta.get("grown", [])]


def lr_at(step, total, warmup, base, frac=None):
    """Linear warm-up, then cosine decay over the remaining steps, or, with a wall-time budget,
    over the remaining fraction of the budget (frac = elapsed / budget)."""
    if step < warmup:
        return base * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    if frac is not None:
        p = max(p, frac)
    return base * 0.5 * (1 + math.cos(math.pi * min(1.0, p)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="build/train-work/vit")
    ap.add_argument("--out", default=os.path.join(REPO, "resources/models/vit-fashion-mnist"))
    ap.add_argument("--d", type=int, default=96)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=192)
    ap.add_argument("--epochs", type=int, default=None,
                    help="total epochs (default 25); on --resume, overrides the stored plan")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--minutes", type=float, default=None,
                    help="training wall-time budget (total, including earlier runs of a resumed "
                         "job): the cosine decays over the budget and training stops when it is "
                         "used up (for machines shared with other work)")
    ap.add_argument("--warmup-epochs", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--new-cycle", action="store_true",
                    help="with --resume: keep the weights and start a new learning-rate cycle "
                         "(warm-up, then cosine over --epochs more epochs or over the --minutes "
                         "budget of this cycle), e.g. after a budget run ended too early")
    ap.add_argument("--no-augment", action="store_true",
                    help="with --new-cycle: train this cycle on the plain images (no crop/flip), e.g. a "
                         "final fitting cycle of an under-fitted model")
    ap.add_argument("--init-from", default=None, metavar="FOLDER",
                    help="with --new-cycle, when --work holds no checkpoint: continue from an exported folder "
                         "(weights + the training record in its safetensors metadata or model card; the "
                         "optimizer state restarts)")
    ap.add_argument("--average", type=int, default=0, metavar="K",
                    help="with --export-only: export the average of the weights after the last K epochs "
                         "(<work>/snaps/epNNN.pt, saved every epoch) instead of the last weights; recorded, so "
                         "later --export-only runs average the same epochs")
    ap.add_argument("--export-only", action="store_true")
    ap.add_argument("--export-every-epoch", action="store_true")
    ap.add_argument("--cpp-eval", default=None,
                    help="with --export-only: the JSON of `attnlens-cli vision-eval` over the test set "
                         "(the C++ engine's accuracy), recorded in the checkpoint and the model card")
    ap.add_argument("--teacher", default=None, metavar="PT",
                    help="distil from this CNN (train_teacher.py's teacher.pt) during the new cycle (--new-cycle) "
                         "or, on a fresh run, the whole training: loss = (1 - a) * CE(labels) + a * T^2 * KL(teacher_T || student_T)")
    ap.add_argument("--kd-alpha", type=float, default=0.5, help="weight a of the distillation term")
    ap.add_argument("--kd-temp", type=float, default=2.0, help="softmax temperature T of the distillation term")
    ap.add_argument("--grow-layers", type=int, default=0, metavar="N",
                    help="with --init-from: insert N new layers (spread evenly, output projections zero, so "
                         "the model starts as the old one) before training")
    ap.add_argument("--measure", type=int, default=0, help="time N training steps and exit")
    args = ap.parse_args()

    xtr, ytr, xte, yte = start_run(args)
    ckpt_path = os.path.join(args.work, "last.pt")
    steps_per_epoch = len(xtr) // args.batch

    meta = {"epochs": args.epochs or 25, "lr": args.lr, "wd": args.wd, "batch": args.batch,
            "warmup_epochs": args.warmup_epochs, "history": [], "train_seconds": 0.0, "epoch": 0}
    cfg = make_config(args)
    if (args.resume or args.export_only) and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        cfg, meta = ck["config"], ck["meta"]
        if args.epochs:
            meta["epochs"] = args.epochs  # shortened/lengthened plan: cosine re-spans the new total
        model = ViTForImageClassification(cfg)
        model.load_state_dict(ck["model"])
    elif args.init_from and not os.path.exists(ckpt_path):
        ck = load_for_training(args.init_from)
        cfg, meta = ck["config"], ck["meta"]
        if args.grow_layers:
            cfg, ck["model"], where = grow_layers(cfg, ck["model"], args.grow_layers)
            meta.setdefault("grown", []).append({"at_epoch": meta["epoch"], "new_layers": where})
        model = ViTForImageClassification(cfg)
        model.load_state_dict(ck["model"])
        print(f"initialised from {args.init_from}: {meta['epoch']} epochs"
              f"{f', {args.grow_layers} new layers at {where}' if args.grow_layers else ''}", flush=True)
    else:
        ck = None
        model = ViTForImageClassification(cfg)
        if args.teacher:
            meta["teacher"] = teacher_spec(args)
    if args.new_cycle and ck is not None:
        # Warm restart: a new schedule that starts at the current epoch. Earlier cycles stay in
        # meta["cycles"] for the model card.
        meta.setdefault("cycles", [])
        if meta.get("cycle"):
            meta["cycles"].append(meta["cycle"])
        else:
            meta["cycles"].append({"start_epoch": 0, "epochs": meta["epoch"], "lr": meta["lr"],
                                   "warmup_epochs": meta["warmup_epochs"],
                                   "budget_minutes": meta.get("budget_minutes"),
                                   "seconds": meta["train_seconds"], "teacher": meta.pop("teacher", None)})
        meta.pop("budget_minutes", None)
        more = args.epochs or 25
        meta["cycle"] = {"start_epoch": meta["epoch"], "epochs": more, "lr": args.lr,
                         "warmup_epochs": args.warmup_epochs, "budget_minutes": args.minutes,
                         "seconds": 0.0, "augment": not args.no_augment,
                         "fresh_optimizer": "opt" not in ck}
        if args.teacher:
            meta["cycle"]["teacher"] = teacher_spec(args)
        meta["epochs"] = meta["epoch"] + more
    elif args.minutes:
        if meta.get("cycle"):
            meta["cycle"]["budget_minutes"] = args.minutes
        else:
            meta["budget_minutes"] = args.minutes
    if args.export_only:
        k = args.average or len(meta.get("averaged", {}).get("epochs", []))
        if k > 1:
            snaps = sorted((int(os.path.basename(p)[2:5]), p)
                           for p in glob.glob(os.path.join(args.work, "snaps", "ep*.pt")))
            snaps = [(e, p) for e, p in snaps if e <= meta["epoch"]][-k:]
            epochs, paths = [e for e, _ in snaps], [p for _, p in snaps]
            if meta.get("averaged", {}).get("epochs") != epochs:
                meta.pop("cpp_eval", None)  # measured on other weights
            sds = [torch.load(p)["model"] for p in paths]
            model.load_state_dict({n: sum(sd[n].float() for sd in sds) / len(sds) for n in sds[0]})
            meta["averaged"] = {"epochs": epochs, "test_acc": evaluate(model, xte, yte)}
            print(f"averaged epochs {epochs}: test accuracy {meta['averaged']['test_acc']:.4f} "
                  f"(last epoch {meta['history'][-1]['test_acc']:.4f})", flush=True)
        if args.cpp_eval:
            with open(args.cpp_eval, encoding="utf-8") as f:
                ev = json.load(f)
            meta["cpp_eval"] = {k: ev[k] for k in ("accuracy", "images", "correct", "per_class", "ms_per_image")}
        if (args.cpp_eval or k > 1) and ck is not None and os.path.exists(ckpt_path):
            torch.save({**ck, "meta": meta}, ckpt_path)  # the checkpoint keeps the last weights
        export(model, meta, args.out)
        print("exported", args.out, "epoch", meta["epoch"])
        return

    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "position_embeddings" in n or "cls_token" in n else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": meta["wd"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=meta["lr"])
    if ck is not None and "opt" in ck:
        opt.load_state_dict(ck["opt"])
    total = steps_per_epoch * meta["epochs"]
    warmup = int(steps_per_epoch * meta["warmup_epochs"])
    nparams = sum(p.numel() for p in model.parameters())
    print(f"config {cfg} params {nparams}", flush=True)

    cycle = meta.get("cycle")
    budget = cycle["budget_minutes"] if cycle else meta.get("budget_minutes")
    if cycle:  # schedule of the current warm-restart cycle
        cyc_start = cycle["start_epoch"] * steps_per_epoch
        total = cycle["epochs"] * steps_per_epoch
        warmup = int(steps_per_epoch * cycle["warmup_epochs"])
    teacher = None
    kd = (cycle or meta).get("teacher")
    if kd:
        from train_teacher import load_teacher  # noqa: E402  (teacher → fashion_data; never back here)
        teacher, tck = load_teacher(os.path.join(REPO, kd["path"]))
        kd.update({"width": tck["width"], "test_acc": tck["test_acc"], "teacher_epochs": len(tck["history"]),
                   "teacher_minutes": tck["train_seconds"] / 60})
        print(f"distilling from {kd['path']} (test accuracy {tck['test_acc']:.4f}), "
              f"alpha {kd['alpha']} T {kd['temperature']}", flush=True)
    stop = False
    while meta["epoch"] < meta["epochs"] and not stop:
        ep = meta["epoch"]
        rng = np.random.default_rng(args.seed + ep)
        perm = rng.permutation(len(xtr))
        model.train()
        t0 = time.time()
        tot_loss, nb = 0.0, 0
        for s in range(steps_per_epoch):
            idx = perm[s * args.batch:(s + 1) * args.batch]
            plain = cycle is not None and not cycle.get("augment", True)
            xb = torch.from_numpy(preprocess_uint8(xtr[idx] if plain else augment(xtr[idx], rng)))
            yb = torch.from_numpy(ytr[idx])
            step = ep * steps_per_epoch + s
            base_lr = meta["lr"]
            if cycle:
                step -= cyc_start
                base_lr = cycle["lr"]
            frac = None
            if budget:
                spent = cycle["seconds"] if cycle else meta["train_seconds"]
                frac = (spent + time.time() - t0) / (budget * 60)
                if frac >= 1.0:
                    stop = True
                    break
            for g in opt.param_groups:
                g["lr"] = lr_at(step, total, warmup, base_lr, frac)
            logits, _ = model(xb)
            loss = F.cross_entropy(logits, yb, label_smoothing=0.1)
            if teacher is not None:
                with torch.no_grad():
                    t_logits, _ = teacher(xb)
                tt = kd["temperature"]
                kl = F.kl_div(F.log_softmax(logits / tt, -1), F.log_softmax(t_logits / tt, -1),
                              reduction="batchmean", log_target=True)
                loss = (1 - kd["alpha"]) * loss + kd["alpha"] * tt * tt * kl
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            tot_loss += loss.item()
            nb += 1
            if args.measure and s + 1 == args.measure:
                dt = time.time() - t0
                print(f"{args.measure} steps in {dt:.1f}s -> epoch ≈ {dt / args.measure * steps_per_epoch / 60:.1f} min")
                return
            if s % 100 == 0:
                print(f"ep {ep + 1} step {s}/{steps_per_epoch} loss {loss.item():.4f} "
                      f"lr {opt.param_groups[0]['lr']:.2e} "
                      f"{time.time() - t0:.0f}s", flush=True)
        train_time = time.time() - t0
        if nb == 0:
            break
        acc = evaluate(model, xte, yte)
        meta["train_seconds"] += train_time
        if cycle:
            cycle["seconds"] += train_time
        meta["epoch"] = ep + 1
        meta["history"].append({"epoch": ep + 1, "train_loss": tot_loss / max(1, nb),
                                "test_acc": acc, "seconds": train_time,
                                "steps": nb, "partial": nb < steps_per_epoch})
        print(f"== epoch {ep + 1} loss {tot_loss / nb:.4f} test_acc {acc:.4f} "
              f"time {train_time:.0f}s", flush=True)
        torch.save({"config": cfg, "meta": meta, "model": model.state_dict(),
                    "opt": opt.state_dict()}, ckpt_path + ".tmp")
        os.replace(ckpt_path + ".tmp", ckpt_path)
        os.makedirs(os.path.join(args.work, "snaps"), exist_ok=True)  # for --average
        torch.save({"model": model.state_dict(), "epoch": ep + 1},
                   os.path.join(args.work, "snaps", f"ep{ep + 1:03d}.pt"))
        if args.export_every_epoch:
            export(model, meta, args.out)
    export(model, meta, args.out)
    print("done; exported", args.out)


if __name__ == "__main__":
    main()
