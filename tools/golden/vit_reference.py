"""An independent PyTorch ViT, written from docs/model-semantics.md (not from transformers'
code), used to produce goldens for the C++ engine (core/models/vit_model.*).

Covers: ViTForImageClassification (prefix "vit.", classifier on CLS) and bare ViTModel (no prefix,
optional pooler), qkv_bias, exact GELU, LayerNorm eps from config, position-embedding interpolation
(bicubic, align_corners=False, +0.1 scale trick), ViTImageProcessor preprocessing with PIL, attention
rollout (Abnar & Zuidema, as documented in core/analysis/attention_maps.h).

Run with Debian's interpreter: /usr/bin/python3 (torch 1.13, PIL, numpy).
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from safetensors_io import load_torch as load_file


def load_config(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        c = json.load(f)
    return {
        "hidden": c.get("hidden_size", 768),
        "layers": c.get("num_hidden_layers", 12),
        "heads": c.get("num_attention_heads", 12),
        "inter": c.get("intermediate_size", 3072),
        "eps": c.get("layer_norm_eps", 1e-12),
        "image_size": c.get("image_size", 224),
        "patch": c.get("patch_size", 16),
        "channels": c.get("num_channels", 3),
        "qkv_bias": c.get("qkv_bias", True),
        "act": c.get("hidden_act", "gelu"),
        "id2label": c.get("id2label"),
    }


def load_processor(model_dir):
    p = {"do_resize": True, "size": {"height": 224, "width": 224}, "resample": 2, "do_rescale": True,
         "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
         "image_std": [0.5, 0.5, 0.5]}
    path = os.path.join(model_dir, "preprocessor_config.json")
    stored = {}
    if os.path.exists(path):
        with open(path) as f:
            stored = json.load(f)
    kind = stored.get("image_processor_type", stored.get("feature_extractor_type", "ViTImageProcessor"))
    if kind.startswith("DeiT"):
        # DeiTImageProcessor's defaults (transformers v4.33): 256x256 bicubic, centre crop 224,
        # ImageNet default mean/std.
        p.update({"size": {"height": 256, "width": 256}, "resample": 3, "image_mean": [0.485, 0.456, 0.406],
                  "image_std": [0.229, 0.224, 0.225], "do_center_crop": True,
                  "crop_size": {"height": 224, "width": 224}})
    p.update(stored)
    for key in ("size", "crop_size"):
        if isinstance(p.get(key), int):
            p[key] = {"height": p[key], "width": p[key]}
    p["do_center_crop"] = bool(p.get("do_center_crop")) and kind.startswith("DeiT")  # ViT ignores it
    return p


def center_crop(arr, height, width):
    """transformers.image_transforms.center_crop on an [H, W, C] array: the window at
    ((H - height) // 2, (W - width) // 2), zero-padded where it leaves the image."""
    h, w = arr.shape[:2]
    top, left = (h - height) // 2, (w - width) // 2
    out = np.zeros((height, width) + arr.shape[2:], dtype=arr.dtype)
    ys, xs = max(0, top), max(0, left)
    ye, xe = min(h, top + height), min(w, left + width)
    out[ys - top:ye - top, xs - left:xe - left] = arr[ys:ye, xs:xe]
    return out


def preprocess(pil_image, proc, channels):
    """PIL image -> (pixels [C,H,W] float32 torch, resized uint8 numpy [H,W,C]).

    Channel conversion first (RGB, or "L" for a 1-channel model), then ViTImageProcessor's steps:
    PIL resize (uint8 in, uint8 out), x * rescale_factor in float64 -> float32, (x - mean) / std in float32.
    """
    img = pil_image.convert("L" if channels == 1 else "RGB")
    if proc["do_resize"]:
        size = (proc["size"]["width"], proc["size"]["height"])
        img = img.resize(size, resample=proc["resample"], reducing_gap=None)
    arr = np.array(img)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if proc["do_center_crop"]:
        arr = center_crop(arr, proc["crop_size"]["height"], proc["crop_size"]["width"])
    x = arr
    if proc["do_rescale"]:
        x = (x * proc["rescale_factor"]).astype(np.float32)
    else:
        x = x.astype(np.float32)
    if proc["do_normalize"]:
        mean = np.array(proc["image_mean"], dtype=np.float32)
        std = np.array(proc["image_std"], dtype=np.float32)
        if mean.size == 1:
            mean = np.repeat(mean, channels)
        if std.size == 1:
            std = np.repeat(std, channels)
        mean, std = mean[:channels], std[:channels]
        x = (x - mean) / std
    return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1))), arr


class RefVit:
    def __init__(self, model_dir):
        self.c = load_config(model_dir)
        w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.prefix = "vit." if "vit.embeddings.cls_token" in w else ""
        self.w = w

    def g(self, name):
        return self.w[self.prefix + name]

    def positions(self, rows, cols, interpolate):
        pos = self.g("embeddings.position_embeddings")  # [1, N+1, D]
        n = pos.shape[1] - 1
        if rows * cols == n and rows == cols:
            return pos
        if not interpolate:
            raise ValueError("input size differs from image_size")
        g = int(math.sqrt(n))
        d = pos.shape[2]
        grid = pos[:, 1:].reshape(1, g, g, d).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, scale_factor=((rows + 0.1) / g, (cols + 0.1) / g), mode="bicubic",
                             align_corners=False)
        assert grid.shape[-2:] == (rows, cols)
        grid = grid.permute(0, 2, 3, 1).reshape(1, rows * cols, d)
        return torch.cat([pos[:, :1], grid], dim=1)

    @torch.no_grad()
    def forward(self, pixels, interpolate=False, head_mask=None):
        """pixels [C,H,W] -> dict(logits [labels] or None, attentions [L,H,T,T], hidden [T,D], pooled).
        head_mask [L,H] of 0/1 as transformers' head_mask: the probabilities are multiplied by it (and returned so)."""
        c = self.c
        p, d, nh = c["patch"], c["hidden"], c["heads"]
        hd = d // nh
        x = F.conv2d(pixels[None], self.g("embeddings.patch_embeddings.projection.weight"),
                     self.g("embeddings.patch_embeddings.projection.bias"), stride=p)  # [1, D, rows, cols]
        rows, cols = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)  # [1, N, D], row-major over the grid
        cls = self.g("embeddings.cls_token").expand(1, 1, d)
        x = torch.cat([cls, x], dim=1) + self.positions(rows, cols, interpolate)
        t = x.shape[1]
        atts = []
        for i in range(c["layers"]):
            pre = f"encoder.layer.{i}."

            def lin(v, name, bias=True):
                b = self.g(pre + name + ".bias") if bias else None
                return F.linear(v, self.g(pre + name + ".weight"), b)

            h = F.layer_norm(x, (d,), self.g(pre + "layernorm_before.weight"), self.g(pre + "layernorm_before.bias"),
                             c["eps"])
            q = lin(h, "attention.attention.query", c["qkv_bias"]).view(1, t, nh, hd).transpose(1, 2)
            k = lin(h, "attention.attention.key", c["qkv_bias"]).view(1, t, nh, hd).transpose(1, 2)
            v = lin(h, "attention.attention.value", c["qkv_bias"]).view(1, t, nh, hd).transpose(1, 2)
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
            probs = torch.softmax(scores, dim=-1)  # [1, H, T, T]
            if head_mask is not None:
                probs = probs * head_mask[i].view(1, nh, 1, 1)
            atts.append(probs[0])
            ctx = torch.matmul(probs, v).transpose(1, 2).reshape(1, t, d)
            x = x + lin(ctx, "attention.output.dense")
            h = F.layer_norm(x, (d,), self.g(pre + "layernorm_after.weight"), self.g(pre + "layernorm_after.bias"),
                             c["eps"])
            assert c["act"] == "gelu"
            x = x + lin(F.gelu(lin(h, "intermediate.dense")), "output.dense")
        x = F.layer_norm(x, (d,), self.g("layernorm.weight"), self.g("layernorm.bias"), c["eps"])
        out = {"hidden": x[0], "attentions": torch.stack(atts), "logits": None, "pooled": None}
        if self.prefix + "pooler.dense.weight" in self.w:
            out["pooled"] = torch.tanh(F.linear(x[0, 0], self.g("pooler.dense.weight"), self.g("pooler.dense.bias")))
        if "classifier.weight" in self.w:
            out["logits"] = F.linear(x[0, 0], self.w["classifier.weight"], self.w["classifier.bias"])
        return out


def rollout(attentions, discard_ratio=0.0, fusion="mean"):
    """attentions [L,H,T,T] -> [T,T]: per layer fuse heads, zero the floor(ratio * T*(T-1)) smallest
    weights among keys 1..T-1 (ties: lower flat index first), add I, renormalise rows, multiply."""
    L, H, T, _ = attentions.shape
    result = torch.eye(T, dtype=torch.float64)
    for l in range(L):
        a = attentions[l].double()
        a = {"mean": a.mean(0), "max": a.max(0).values, "min": a.min(0).values}[fusion].clone()
        if discard_ratio > 0:
            sub = a[:, 1:].reshape(-1)
            drop = int(sub.numel() * discard_ratio)
            order = sorted(range(sub.numel()), key=lambda i: (sub[i].item(), i))[:drop]
            sub[order] = 0
            a[:, 1:] = sub.reshape(T, T - 1)
        a = a + torch.eye(T, dtype=torch.float64)
        a = a / a.sum(dim=-1, keepdim=True)
        result = a @ result
    return result.float()
