"""Tiny seeded ViT fixtures and goldens for the C++ vision engine tests.

    /usr/bin/python3 tools/golden/make_vit_fixtures.py   # writes tests/data/vit/

Models (HF folder layout: config.json, model.safetensors, preprocessor_config.json):
  rgb       ViTForImageClassification ("vit." prefix), 3 channels, 16x16, patch 4, 5 labels, F32,
            ImageNet mean/std, bilinear resize
  rgb-f16   the same weights stored as F16;  rgb-bf16: as BF16
  rgb-interp  the rgb weights with a 24x32 processor size (needs position interpolation, grid 6x8)
  grey      1 channel, 16x16, patch 4, 3 labels, one-value mean/std
  bare      bare ViTModel (no prefix) with pooler, qkv_bias=false, eps 1e-6, 20x20, patch 5,
            processor "size": 20 (int form) with bicubic resize and default mean/std
Images (tests/data/vit/images): photo_97x61.png (needs shrinking), small_11x7.png (needs enlarging),
grey_13x9.png, resize_src_53x37.png, and format/edge-case files for the image loader tests.
resize_cases.safetensors: PIL resizes of resize_src_53x37.png with every filter to several sizes.
Goldens: <model>/golden_<image>.safetensors with pixels [C,H,W], resized [H,W,C] (uint8 as float),
logits, attentions [L,H,T,T], hidden [T,D], pooled, rollout [T,T] and rollout_discard (ratio 0.3).
The reference is vit_reference.py (independent of the C++ code).
"""
import json
import os
import shutil
import struct
import sys
import zlib

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import save_file  # noqa: E402
from vit_reference import RefVit, load_processor, preprocess, rollout  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "vit")
IMAGES = os.path.join(OUT, "images")


def hf_config(arch, hidden, layers, heads, inter, image, patch, channels, labels=None, qkv_bias=True, eps=1e-12):
    c = {
        "architectures": [arch],
        "attention_probs_dropout_prob": 0.0,
        "encoder_stride": patch,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "hidden_size": hidden,
        "image_size": image,
        "initializer_range": 0.02,
        "intermediate_size": inter,
        "layer_norm_eps": eps,
        "model_type": "vit",
        "num_attention_heads": heads,
        "num_channels": channels,
        "num_hidden_layers": layers,
        "patch_size": patch,
        "qkv_bias": qkv_bias,
        "torch_dtype": "float32",
        "transformers_version": "4.33.3",
    }
    if labels:
        c["id2label"] = {str(i): l for i, l in enumerate(labels)}
        c["label2id"] = {l: i for i, l in enumerate(labels)}
    return c


def random_weights(gen, c, prefix, classifier_labels=0, pooler=False):
    d, inter, p, ch = c["hidden_size"], c["intermediate_size"], c["patch_size"], c["num_channels"]
    n = (c["image_size"] // p) ** 2

    def rnd(*shape, std=0.2):
        return torch.randn(*shape, generator=gen) * std

    w = {}
    e = prefix + "embeddings."
    w[e + "cls_token"] = rnd(1, 1, d, std=0.5)
    w[e + "position_embeddings"] = rnd(1, n + 1, d, std=0.5)
    w[e + "patch_embeddings.projection.weight"] = rnd(d, ch, p, p, std=0.3)
    w[e + "patch_embeddings.projection.bias"] = rnd(d, std=0.1)
    for i in range(c["num_hidden_layers"]):
        l = f"{prefix}encoder.layer.{i}."
        for ln in ("layernorm_before", "layernorm_after"):
            w[l + ln + ".weight"] = 1.0 + rnd(d, std=0.1)
            w[l + ln + ".bias"] = rnd(d, std=0.1)
        for name in ("query", "key", "value"):
            w[l + f"attention.attention.{name}.weight"] = rnd(d, d, std=0.6 / d ** 0.25)
            if c["qkv_bias"]:
                w[l + f"attention.attention.{name}.bias"] = rnd(d, std=0.1)
        w[l + "attention.output.dense.weight"] = rnd(d, d, std=d ** -0.5)
        w[l + "attention.output.dense.bias"] = rnd(d, std=0.1)
        w[l + "intermediate.dense.weight"] = rnd(inter, d, std=d ** -0.5)
        w[l + "intermediate.dense.bias"] = rnd(inter, std=0.1)
        w[l + "output.dense.weight"] = rnd(d, inter, std=inter ** -0.5)
        w[l + "output.dense.bias"] = rnd(d, std=0.1)
    w[prefix + "layernorm.weight"] = 1.0 + rnd(d, std=0.1)
    w[prefix + "layernorm.bias"] = rnd(d, std=0.1)
    if pooler:
        w[prefix + "pooler.dense.weight"] = rnd(d, d, std=d ** -0.5)
        w[prefix + "pooler.dense.bias"] = rnd(d, std=0.1)
    if classifier_labels:
        w["classifier.weight"] = rnd(classifier_labels, d, std=1.0)
        w["classifier.bias"] = rnd(classifier_labels, std=0.1)
    return w


def write_model(name, config, weights, processor, dtype=torch.float32):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    cfg = dict(config)
    cfg["torch_dtype"] = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}[dtype]
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    save_file({k: v.to(dtype) for k, v in weights.items()}, os.path.join(d, "model.safetensors"))
    if processor is not None:
        with open(os.path.join(d, "preprocessor_config.json"), "w") as f:
            json.dump(processor, f, indent=2)
    return d


def vit_processor(height, width, mean, std, resample=2):
    return {"do_normalize": True, "do_rescale": True, "do_resize": True, "image_mean": mean, "image_std": std,
            "image_processor_type": "ViTImageProcessor", "resample": resample, "rescale_factor": 1 / 255,
            "size": {"height": height, "width": width}}


# --- images -----------------------------------------------------------------------------------------
def photo_like(w, h, seed):
    """Smooth colour gradients plus a disc and mild noise: exercises the resize filter everywhere."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 127 + 120 * np.sin(x / w * 3.1 + y / h * 1.3)
    g = 127 + 120 * np.cos(y / h * 4.2 - x / w * 0.7)
    b = 255 * ((x - w * 0.6) ** 2 + (y - h * 0.4) ** 2 < (min(w, h) * 0.3) ** 2) * 0.8 + 20
    img = np.stack([r, g, b], -1) + rng.normal(0, 12, (h, w, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png16_rgb(path, arr16):
    """16-bit RGB PNG (PIL cannot write one)."""
    h, w, _ = arr16.shape
    raw = b"".join(b"\x00" + arr16[y].astype(">u2").tobytes() for y in range(h))
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
    data += png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def make_images():
    os.makedirs(IMAGES, exist_ok=True)
    photo = photo_like(97, 61, 1)
    small = photo_like(11, 7, 2)
    Image.fromarray(photo).save(os.path.join(IMAGES, "photo_97x61.png"))
    Image.fromarray(small).save(os.path.join(IMAGES, "small_11x7.png"))
    grey = np.array(Image.fromarray(photo_like(13, 9, 3)).convert("L"))
    Image.fromarray(grey).save(os.path.join(IMAGES, "grey_13x9.png"))
    # Same pixels in the other lossless formats.
    Image.fromarray(small).save(os.path.join(IMAGES, "small_11x7.bmp"))
    Image.fromarray(small).save(os.path.join(IMAGES, "small_11x7.tiff"))
    Image.fromarray(small).save(os.path.join(IMAGES, "small_11x7.webp"), lossless=True, quality=100)
    # Alpha is dropped without compositing; the expected RGB is `small`.
    rgba = np.concatenate([small, (np.arange(77).reshape(7, 11, 1) * 3).astype(np.uint8)], -1)
    Image.fromarray(rgba, "RGBA").save(os.path.join(IMAGES, "small_11x7_rgba.png"))
    # 16-bit: high byte = `small`, low byte noise; expected RGB is `small`.
    low = np.random.default_rng(4).integers(0, 256, small.shape)
    write_png16_rgb(os.path.join(IMAGES, "small_11x7_rgb16.png"), small.astype(np.uint16) * 256 + low)
    grey16 = grey.astype(np.uint16) * 256 + 255
    Image.fromarray(grey16.astype(np.uint16)).save(os.path.join(IMAGES, "grey_13x9_16bit.png"))
    # JPEG stored 8 wide x 4 high, left half red, right half blue, EXIF orientation 6 (rotate 90° CW to
    # display): upright it is 4 wide x 8 high, red on top, blue at the bottom.
    jpg = np.zeros((4, 8, 3), np.uint8)
    jpg[:, :4] = (255, 0, 0)
    jpg[:, 4:] = (0, 0, 255)
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.fromarray(jpg).save(os.path.join(IMAGES, "exif_rotate6_8x4.jpg"), quality=95, exif=exif.tobytes())
    return {"photo_97x61": os.path.join(IMAGES, "photo_97x61.png"),
            "small_11x7": os.path.join(IMAGES, "small_11x7.png"),
            "grey_13x9": os.path.join(IMAGES, "grey_13x9.png")}


RESIZE_TARGETS = [(1, 1), (7, 3), (16, 16), (29, 40), (211, 13), (53, 20), (20, 37)]
RESIZE_FILTERS = {1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}


def resize_cases():
    """PIL Image.resize of a 53x37 RGB picture to several sizes (shrink, enlarge, one axis only) with
    every supported filter: resize_cases.safetensors, tensors "<filter>_<w>x<h>" [h, w, 3] (F16, exact
    for 0..255)."""
    src = photo_like(53, 37, 6)
    path = os.path.join(IMAGES, "resize_src_53x37.png")
    Image.fromarray(src).save(path)
    out = {}
    for code, name in RESIZE_FILTERS.items():
        for w, h in RESIZE_TARGETS:
            r = np.array(Image.open(path).convert("RGB").resize((w, h), resample=code, reducing_gap=None))
            out[f"{name}_{w}x{h}"] = torch.from_numpy(r.astype(np.float32)).half()
    save_file(out, os.path.join(OUT, "resize_cases.safetensors"))


def golden(model_dir, image_path, tag, interpolate=False):
    ref = RefVit(model_dir)
    proc = load_processor(model_dir)
    pixels, resized = preprocess(Image.open(image_path), proc, ref.c["channels"])
    out = ref.forward(pixels, interpolate=interpolate)
    t = {"pixels": pixels, "resized": torch.from_numpy(resized.astype(np.float32)),
         "attentions": out["attentions"], "hidden": out["hidden"],
         "rollout": rollout(out["attentions"]), "rollout_discard": rollout(out["attentions"], 0.3),
         "rollout_max": rollout(out["attentions"], 0.0, "max")}
    if out["logits"] is not None:
        t["logits"] = out["logits"]
    if out["pooled"] is not None:
        t["pooled"] = out["pooled"]
    save_file({k: v.float().contiguous() for k, v in t.items()}, os.path.join(model_dir, f"golden_{tag}.safetensors"))


def main():
    torch.set_num_threads(1)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    images = make_images()
    resize_cases()

    gen = torch.Generator().manual_seed(1234)
    labels = ["cat", "dog", "bird", "fish", "frog"]
    rgb_cfg = hf_config("ViTForImageClassification", 32, 2, 4, 64, 16, 4, 3, labels)
    rgb_w = random_weights(gen, rgb_cfg, "vit.", classifier_labels=len(labels))
    imagenet = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    rgb = write_model("rgb", rgb_cfg, rgb_w, vit_processor(16, 16, *imagenet))
    f16 = write_model("rgb-f16", rgb_cfg, rgb_w, vit_processor(16, 16, *imagenet), torch.float16)
    bf16 = write_model("rgb-bf16", rgb_cfg, rgb_w, vit_processor(16, 16, *imagenet), torch.bfloat16)
    interp = write_model("rgb-interp", rgb_cfg, rgb_w, vit_processor(24, 32, *imagenet))

    # DeiT checkpoints: model_type "vit", DeiT's processor (resize, then centre crop). One crop inside
    # the resized image (19x19 -> 16x16, odd margins), one that pads vertically and crops horizontally.
    deit = write_model("rgb-deit", rgb_cfg, rgb_w,
                       {"crop_size": 16, "do_center_crop": True, "do_normalize": True, "do_resize": True,
                        "feature_extractor_type": "DeiTFeatureExtractor", "image_mean": imagenet[0],
                        "image_std": imagenet[1], "resample": 3, "size": 19})
    deit_pad = write_model("rgb-deit-pad", rgb_cfg, rgb_w,
                           {"crop_size": {"height": 16, "width": 16}, "do_center_crop": True,
                            "image_processor_type": "DeiTImageProcessor", "size": {"height": 11, "width": 21}})

    grey_cfg = hf_config("ViTForImageClassification", 24, 3, 2, 48, 16, 4, 1, ["a", "b", "c"])
    grey = write_model("grey", grey_cfg, random_weights(gen, grey_cfg, "vit.", classifier_labels=3),
                       vit_processor(16, 16, [0.286], [0.353]))

    bare_cfg = hf_config("ViTModel", 24, 2, 3, 40, 20, 5, 3, None, qkv_bias=False, eps=1e-6)
    bare_proc = {"do_normalize": True, "do_resize": True, "feature_extractor_type": "ViTFeatureExtractor",
                 "resample": 3, "size": 20}
    bare = write_model("bare", bare_cfg, random_weights(gen, bare_cfg, "", pooler=True), bare_proc)

    for tag in ("photo_97x61", "small_11x7"):
        golden(rgb, images[tag], tag)
        golden(grey, images[tag], tag)
    golden(grey, images["grey_13x9"], "grey_13x9")
    golden(bare, images["photo_97x61"], "photo_97x61")
    golden(bare, images["small_11x7"], "small_11x7")
    golden(f16, images["photo_97x61"], "photo_97x61")
    golden(bf16, images["photo_97x61"], "photo_97x61")
    golden(interp, images["photo_97x61"], "photo_97x61", interpolate=True)
    golden(deit, images["photo_97x61"], "photo_97x61")
    golden(deit_pad, images["photo_97x61"], "photo_97x61")
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {OUT} ({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
