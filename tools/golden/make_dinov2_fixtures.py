"""Tiny seeded DINOv2 folders (issue 43) with goldens from Hugging Face transformers' OWN Dinov2* classes and
BitImageProcessor (v4.50.3 on Debian's torch 1.13), for the C++ ViT engine tests.

    TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/golden/make_dinov2_fixtures.py [--out DIR]
    # rewrites the folders it writes in DIR (default tests/data/dinov2, read by tests/model/test_dinov2_model.cpp)

The sources come as for make_llm_fixtures.py (its docstring: tf-v4.50.3 and hub-* under TRANSFORMERS_SRC; the same
stand-ins for the compiled safetensors and tokenizers packages and its install_shims for the torch >= 2 names that
v4.50.3 touches). The fetched code is never edited.

Folders (config.json + model.safetensors as save_pretrained(safe_serialization=True) writes them, float32; the
preprocessor_config.json of facebook/dinov2-small scaled down: BitImageProcessor, shortest_edge 18 (256 there),
bicubic, centre crop 16x16 (224), ImageNet mean/std, do_convert_rgb). Every folder: hidden 32, 2 layers, 4 heads,
patch 4, image_size 20 (a 5x5 position table; the crop gives a 4x4 grid, so the default input is interpolated,
as facebook/dinov2-* interpolate their 37x37 table to 16x16 at 224 pixels), layer_norm_eps 1e-6, gelu:
  dinov2            Dinov2Model, plain MLP (fc1 128 / fc2), layer scale, mask_token
  dinov2-swiglu     Dinov2Model, use_swiglu_ffn (weights_in [176, 32] = 2 x 88: int(128 * 2 / 3) = 85 rounded up to
                    a multiple of 8), drop_path_rate 0.1 (inert in eval), qkv_bias false
  dinov2-reg        Dinov2WithRegistersModel, 4 register tokens, plain MLP
  dinov2-cls        Dinov2ForImageClassification ("dinov2." prefix), 3 labels, classifier [3, 64] on
                    concat(CLS, mean of tokens 1..)
  dinov2-reg-cls    Dinov2WithRegistersForImageClassification ("dinov2_with_registers." prefix), 3 labels, SwiGLU;
                    v4.50.3's mean runs over tokens 1.. INCLUDING the 4 registers (transformers#37817, fixed after
                    v4.50.3 by #37836): "logits" is v4.50.3's, "logits_patch_mean" the fixed head (patches only)
Weights random and seeded: norms ~1 ± 0.2, biases ± 0.2, lambda1 0.6 ± 0.3, q/k x3 so rows are peaked, cls /
positions / registers / mask token ± 0.5.
Images (DIR/images): photo_97x61.png (landscape; the same pixels as tests/data/vit/images/photo_97x61.png) and
portrait_45x71.png (portrait: the other branch of the shortest-edge rule).
Goldens: <folder>/golden_<image>_<case>.safetensors, metadata "golden" = JSON {case, image, processor overrides,
input [H, W], grid [rows, cols], tokens, registers, interpolated}; tensors pixels [C, H, W] (pixel_values),
resized [H, W, C] (the processor's resize + crop alone, uint8 values as float), attentions [L, H, T, T],
hidden [T, D] (last_hidden_state), pooled [D] (pooler_output), token_norms [L, T] (‖hidden_states[l + 1]‖ per
token: the stream after layer l, before the final layernorm), logits [labels] (classifiers). Cases:
  default    the saved processor: 16x16, grid 4x4, positions interpolated 5x5 -> 4x4 (shrinking)
  trained    shortest_edge 23, crop 20x20: grid 5x5 = the table, no interpolation
  nonsquare  shortest_edge 16, no crop: 16x25 (photo; 1 pixel column dropped by the strided conv, grid 4x6) or
             25x16 (portrait; 1 row dropped, grid 6x4): the table interpolated to a non-square grid (one axis
             shrunk, the other enlarged)
DIR/goldens.json lists every file with its metadata.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TAG = "v4.50.3"
DEFAULT_OUT = os.path.join(HERE, "..", "..", "tests", "data", "dinov2")

BASE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=4, hidden_act="gelu",
            layer_norm_eps=1e-6, image_size=20, patch_size=4, num_channels=3, qkv_bias=True, layerscale_value=1.0,
            drop_path_rate=0.0, use_swiglu_ffn=False, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
LABELS = ["tabby", "tiger", "lynx"]
FIXTURES = {  # folder: (model class, config class, config overrides, seed)
    "dinov2": ("Dinov2Model", "Dinov2Config", {}, 71),
    "dinov2-swiglu": ("Dinov2Model", "Dinov2Config", dict(use_swiglu_ffn=True, drop_path_rate=0.1, qkv_bias=False),
                      72),
    "dinov2-reg": ("Dinov2WithRegistersModel", "Dinov2WithRegistersConfig", dict(num_register_tokens=4), 73),
    "dinov2-cls": ("Dinov2ForImageClassification", "Dinov2Config",
                   dict(id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)}), 74),
    "dinov2-reg-cls": ("Dinov2WithRegistersForImageClassification", "Dinov2WithRegistersConfig",
                       dict(num_register_tokens=4, use_swiglu_ffn=True, id2label=dict(enumerate(LABELS)),
                            label2id={l: i for i, l in enumerate(LABELS)}), 75),
}
# facebook/dinov2-small's preprocessor_config.json with 256 -> 18 and 224 -> 16.
PROCESSOR = dict(do_resize=True, size={"shortest_edge": 18}, resample=3, do_center_crop=True,
                 crop_size={"height": 16, "width": 16}, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
                 image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225], do_convert_rgb=True)
CASES = {  # name: preprocess() overrides
    "default": {},
    "trained": dict(size={"shortest_edge": 23}, crop_size={"height": 20, "width": 20}),
    "nonsquare": dict(size={"shortest_edge": 16}, do_center_crop=False),
}
IMAGES = {"photo_97x61": (97, 61, 1), "portrait_45x71": (45, 71, 7)}  # name: (width, height, seed)


def randomize(torch, model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            r = torch.randn(p.shape, generator=g)
            if name.endswith("lambda1"):  # layer scale
                p.copy_(0.6 + 0.3 * r)
            elif "norm" in name and name.endswith(".weight"):  # norm1, norm2, layernorm
                p.copy_(1.0 + 0.2 * r)
            elif name.endswith(".bias"):
                p.copy_(0.2 * r)
            elif name.split(".")[-1] in ("cls_token", "mask_token", "register_tokens", "position_embeddings"):
                p.copy_(0.5 * r)
            elif p.dim() == 4:  # the patch convolution [D, C, p, p]
                p.copy_(r / (p.shape[1] * p.shape[2] * p.shape[3]) ** 0.5)
            else:  # a Linear weight [out, in]
                scale = 3.0 if (".query." in name or ".key." in name) else 1.0
                p.copy_(scale * r / p.shape[1] ** 0.5)


def write_images(out):
    import numpy as np
    from PIL import Image
    from make_vit_fixtures import photo_like
    d = os.path.join(out, "images")
    os.makedirs(d, exist_ok=True)
    paths = {}
    for name, (w, h, seed) in IMAGES.items():
        paths[name] = os.path.join(d, name + ".png")
        Image.fromarray(np.ascontiguousarray(photo_like(w, h, seed))).save(paths[name])
    return paths


def worker(out):
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    import fast_blas  # noqa: F401
    import make_llm_fixtures
    make_llm_fixtures.install_shims(TAG)
    import torch
    torch.set_num_threads(1)
    import transformers
    from PIL import Image
    from safetensors_io import save_file
    getattr(transformers.utils.logging, "disable_progress_bar", lambda: None)()

    for folder in FIXTURES:  # only what this script writes: DIR may hold other fixtures
        shutil.rmtree(os.path.join(out, folder), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    images = write_images(out)
    index = []
    for folder, (cls_name, cfg_name, extra, seed) in FIXTURES.items():
        cfg = getattr(transformers, cfg_name)(**dict(BASE, **extra))
        model = getattr(transformers, cls_name)(cfg).eval()
        randomize(torch, model, seed)
        d = os.path.join(out, folder)
        model.save_pretrained(d, safe_serialization=True)
        transformers.BitImageProcessor(**PROCESSOR).save_pretrained(d)
        # Everything below runs on what was written: the folder loaded afresh, as a user would.
        model = getattr(transformers, cls_name).from_pretrained(d, attn_implementation="eager").eval()
        proc = transformers.AutoImageProcessor.from_pretrained(d)
        assert type(proc).__name__ == "BitImageProcessor", type(proc)
        backbone = model if cls_name.endswith("Model") else getattr(model, model.base_model_prefix)
        registers = getattr(model.config, "num_register_tokens", 0)
        patch = model.config.patch_size
        for image_name, path in images.items():
            for case, over in CASES.items():
                img = Image.open(path)
                pixels = proc(img, return_tensors="pt", **over).pixel_values  # [1, C, H, W]
                resized = proc(img, do_rescale=False, do_normalize=False, data_format="channels_last",
                               return_tensors="np", **over).pixel_values[0]  # [H, W, C] uint8 values
                with torch.no_grad():
                    o = model(pixels, output_attentions=True)
                    b = backbone(pixels, output_attentions=True, output_hidden_states=True)  # + hidden_states
                h, w = pixels.shape[-2:]
                rows, cols = h // patch, w // patch
                tokens = 1 + registers + rows * cols
                t = {"pixels": pixels[0], "resized": torch.from_numpy(resized.astype("float32")),
                     "attentions": torch.stack([a[0] for a in o.attentions]),
                     "hidden": b.last_hidden_state[0], "pooled": b.pooler_output[0],
                     # hidden_states[l + 1]: the stream after layer l, before the final layernorm
                     "token_norms": torch.stack([s[0].norm(dim=-1) for s in b.hidden_states[1:]])}
                assert t["attentions"].shape[-1] == tokens and t["hidden"].shape[0] == tokens
                assert torch.equal(t["pooled"], t["hidden"][0])  # pooler_output = CLS after the final layernorm
                if hasattr(o, "logits"):
                    t["logits"] = o.logits[0]
                    seq = b.last_hidden_state[0]
                    check = model.classifier(torch.cat([seq[0], seq[1:].mean(0)]))  # v4.50.3's head
                    assert torch.allclose(check, t["logits"], atol=1e-6)
                    if registers:  # the head as fixed after v4.50.3 (transformers#37836): patches only
                        t["logits_patch_mean"] = model.classifier(
                            torch.cat([seq[0], seq[1 + registers:].mean(0)])).detach()
                grid = model.config.image_size // patch
                meta = {"case": case, "image": image_name + ".png", "processor_overrides": over,
                        "input": [int(h), int(w)], "grid": [int(rows), int(cols)], "tokens": int(tokens),
                        "registers": int(registers), "position_grid": [grid, grid],
                        "interpolated": not (rows * cols == grid * grid and h == w),
                        "reference": f"transformers {TAG} {cls_name} + BitImageProcessor "
                                     f"(torch {torch.__version__.split('+')[0]})"}
                vision_goldens.save_golden(save_file, out, folder, image_name, case, t, meta, index)
        vision_goldens.report_folder(out, folder, cls_name)
    vision_goldens.write_index(out, index)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    import vision_goldens
    vision_goldens.main(sys.argv[1:], __file__, DEFAULT_OUT, TAG, worker)
