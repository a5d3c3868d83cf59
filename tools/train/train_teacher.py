#!/usr/bin/env python3
"""Train a small CNN on Fashion-MNIST as the distillation teacher of the built-in ViT.

The teacher is a training aid only: it is never shipped. train_vit.py --teacher PATH adds its
softened predictions to the ViT's loss (knowledge distillation, as DeiT does with a convnet
teacher); the ViT stays a plain ViTForImageClassification.

Same data, same inputs (preprocess_uint8) and the same crop + flip augmentation as train_vit.py.
The test set is only used for reporting the teacher's accuracy.

Usage:
  train_teacher.py --work build/train-work/teacher [--epochs 12] [--width 32] [--resume]
"""
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before numpy and torch load OpenBLAS)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from fashion_data import augment, evaluate, preprocess_uint8, start_run  # noqa: E402


def block(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]


class TeacherCNN(nn.Module):
    """Two conv blocks at 28×28, two at 14×14, one at 7×7, global average pool, linear."""

    def __init__(self, w=32):
        super().__init__()
        self.width = w
        self.features = nn.Sequential(
            *block(1, w), *block(w, w), nn.MaxPool2d(2),
            *block(w, 2 * w), *block(2 * w, 2 * w), nn.MaxPool2d(2),
            *block(2 * w, 4 * w), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2))
        self.head = nn.Linear(4 * w, 10)

    def forward(self, x):
        return self.head(self.features(x)), None  # (logits, attentions) like the ViT


def load_teacher(path):
    ck = torch.load(path)
    model = TeacherCNN(ck["width"])
    model.load_state_dict(ck["model"])
    model.eval()
    return model, ck


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="build/train-work/teacher")
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--resume", action="store_true", help="continue teacher.pt (nothing to do when it is complete)")
    ap.add_argument("--measure", type=int, default=0, help="time N training steps and exit")
    args = ap.parse_args()

    xtr, ytr, xte, yte = start_run(args)
    path = os.path.join(args.work, "teacher.pt")
    spe = len(xtr) // args.batch
    model = TeacherCNN(args.width)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
    total = spe * args.epochs
    history, t_all = [], 0.0
    if args.resume and os.path.exists(path):
        ck = torch.load(path)
        if ck["width"] != args.width or ck["epochs"] != args.epochs:
            sys.exit(f"error: {path} is a width-{ck['width']}, {ck['epochs']}-epoch teacher; remove it or match it")
        model.load_state_dict(ck["model"])
        if "opt" in ck:
            opt.load_state_dict(ck["opt"])
        history, t_all = ck["history"], ck["train_seconds"]
        print(f"resuming after epoch {len(history)} of {args.epochs}", flush=True)
    for ep in range(len(history), args.epochs):
        rng = np.random.default_rng(args.seed + ep)
        perm = rng.permutation(len(xtr))
        model.train()
        t0 = time.time()
        tot = 0.0
        for s in range(spe):
            idx = perm[s * args.batch:(s + 1) * args.batch]
            xb = torch.from_numpy(preprocess_uint8(augment(xtr[idx], rng)))
            yb = torch.from_numpy(ytr[idx])
            step = ep * spe + s
            for g in opt.param_groups:  # one cycle: short linear warm-up, cosine to zero
                g["lr"] = args.lr * (step + 1) / (0.3 * spe) if step < 0.3 * spe else \
                    args.lr * 0.5 * (1 + math.cos(math.pi * step / total))
            logits, _ = model(xb)
            loss = F.cross_entropy(logits, yb, label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += loss.item()
            if args.measure and s + 1 == args.measure:
                dt = time.time() - t0
                print(f"{args.measure} steps in {dt:.1f}s -> epoch ≈ {dt / args.measure * spe / 60:.1f} min")
                return
            if s % 100 == 0:
                print(f"ep {ep + 1} step {s}/{spe} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
        dt = time.time() - t0
        t_all += dt
        acc = evaluate(model, xte, yte)
        history.append({"epoch": ep + 1, "train_loss": tot / spe, "test_acc": acc, "seconds": dt})
        print(f"== epoch {ep + 1} loss {tot / spe:.4f} test_acc {acc:.4f} time {dt:.0f}s", flush=True)
        torch.save({"width": args.width, "model": model.state_dict(), "history": history,
                    "epochs": args.epochs, "train_seconds": t_all, "test_acc": acc,
                    "opt": opt.state_dict()}, path + ".tmp")
        os.replace(path + ".tmp", path)
    print("done;", path)


if __name__ == "__main__":
    main()
