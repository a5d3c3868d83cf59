"""Tiny seeded CLIP folders (issue 43) with goldens from Hugging Face transformers' OWN CLIPModel,
CLIPVisionModel(WithProjection), CLIPTokenizer and CLIPImageProcessor (v4.50.3 on Debian's torch 1.13), for the C++
CLIP tests (tests/model/test_clip_model.cpp).

    TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/golden/make_clip_model_fixtures.py [--out DIR]
    # rewrites the folders it writes in DIR (default tests/data/clip)

The sources come as for make_dinov2_fixtures.py (make_llm_fixtures.py's stand-ins and shims; the fetched code is
never edited). The tokenizer is tests/data/t2i/tiny-pipe/tokenizer (745 tokens, make_clip_fixtures.py) written
again by v4.50.3's CLIPTokenizer.save_pretrained; the image processor openai/clip-vit-base-patch32's
preprocessor_config.json scaled down (CLIPImageProcessor, shortest_edge 18, bicubic, centre crop 16x16, OpenAI
mean/std). Folders (save_pretrained(safe_serialization=True), float32):
  clip          CLIPModel: vision hidden 32, 2 layers, 4 heads, MLP 64, image 16, patch 4 (4x4 grid), quick_gelu;
                text hidden 24, 2 layers, 4 heads, MLP 48, 32 positions, eos_token_id 744 (the tokenizer's);
                projection_dim 16, logit_scale 2.3 (exp: 9.97)
  clip-legacy   CLIPModel as above but text eos_token_id 2 (configs from before transformers#24773: the pooled
                token is the argmax of the ids), gelu in both towers, projection_dim 12, seed 82
  clip-vision   CLIPVisionModelWithProjection (model_type clip_vision_model; projection 16), gelu, seed 83
Weights random and seeded: norms ~1 ± 0.2, biases ± 0.2, class embedding / positions ± 0.5, q/k x3 so rows are
peaked. Images (DIR/images): photo_97x61.png and portrait_45x71.png (tests/data/dinov2's pixels).
Goldens: <folder>/golden_<image>_<case>.safetensors, metadata "golden" = JSON {case, image, input, grid, tokens,
texts}; tensors pixels [C, H, W], resized [H, W, C], attentions [L, H, T, T] (eager), hidden [T, D]
(last_hidden_state: CLIP's encoder output has NO final norm), pooled [D] (pooler_output = post_layernorm(CLS)),
token_norms [L, T] (‖hidden_states[l + 1]‖), image_embeds [P] (visual_projection(pooled), not normalised),
patch_embeds [N, P] (visual_projection(post_layernorm(every patch token))); CLIPModel folders also text_ids_<i>,
text_embeds [texts, P] (get_text_features, one text at a time, not normalised) and logits_per_image [texts]
(CLIPModel.forward on the padded batch with its attention mask). Cases:
  default    the saved processor: 16x16, grid 4x4 = the table
  nonsquare  shortest_edge 16, no crop, interpolate_pos_encoding=True: 16x25 (grid 4x6) or 25x16 (6x4)
DIR/goldens.json lists every file with its metadata.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TAG = "v4.50.3"
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "clip")
TOKENIZER = os.path.join(ROOT, "tests", "data", "t2i", "tiny-pipe", "tokenizer")

VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=16,
              patch_size=4, num_channels=3, hidden_act="quick_gelu", layer_norm_eps=1e-5)
TEXT = dict(hidden_size=24, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, vocab_size=745,
            max_position_embeddings=32, hidden_act="quick_gelu", layer_norm_eps=1e-5, bos_token_id=743,
            eos_token_id=744, pad_token_id=744)
FIXTURES = {  # folder: (model class, text overrides or None, vision overrides, projection_dim, seed)
    "clip": ("CLIPModel", {}, {}, 16, 81),
    "clip-legacy": ("CLIPModel", dict(eos_token_id=2, hidden_act="gelu"), dict(hidden_act="gelu"), 12, 82),
    "clip-vision": ("CLIPVisionModelWithProjection", None, dict(hidden_act="gelu"), 16, 83),
}
PROCESSOR = dict(do_resize=True, size={"shortest_edge": 18}, resample=3, do_center_crop=True,
                 crop_size={"height": 16, "width": 16}, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
                 image_mean=[0.48145466, 0.4578275, 0.40821073], image_std=[0.26862954, 0.26130258, 0.27577711],
                 do_convert_rgb=True)
CASES = {"default": {}, "nonsquare": dict(size={"shortest_edge": 16}, do_center_crop=False)}
TEXTS = ["a photo of a cat", "a red chair", "A Sneaker ABOVE a bag!", "the lighthouse at night, oil painting"]


def randomize(torch, model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            r = torch.randn(p.shape, generator=g)
            if name == "logit_scale":
                p.fill_(2.3)
            elif ("norm" in name or "layrnorm" in name) and name.endswith(".weight"):
                p.copy_(1.0 + 0.2 * r)
            elif name.endswith(".bias"):
                p.copy_(0.2 * r)
            elif name.endswith("class_embedding") or "position_embedding" in name or "token_embedding" in name:
                p.copy_(0.5 * r)
            elif p.dim() == 4:  # the patch convolution [D, C, p, p]
                p.copy_(r / (p.shape[1] * p.shape[2] * p.shape[3]) ** 0.5)
            else:  # a Linear weight [out, in]
                scale = 3.0 if (".q_proj." in name or ".k_proj." in name) else 1.0
                p.copy_(scale * r / p.shape[1] ** 0.5)


def make_folder(transformers, torch, out, folder, spec):
    cls_name, text, vision, proj, seed = spec
    if text is None:
        cfg = transformers.CLIPVisionConfig(**dict(VISION, **vision), projection_dim=proj)
    else:
        cfg = transformers.CLIPConfig(text_config=dict(TEXT, **text), vision_config=dict(VISION, **vision),
                                      projection_dim=proj)
    model = getattr(transformers, cls_name)(cfg).eval()
    randomize(torch, model, seed)
    d = os.path.join(out, folder)
    model.save_pretrained(d, safe_serialization=True)
    transformers.CLIPImageProcessor(**PROCESSOR).save_pretrained(d)
    if text is not None:
        transformers.CLIPTokenizer.from_pretrained(TOKENIZER).save_pretrained(d)
    return d


def goldens(transformers, torch, d, cls_name, image_name, path, case, over):
    from PIL import Image
    model = getattr(transformers, cls_name).from_pretrained(d, attn_implementation="eager").eval()
    proc = transformers.CLIPImageProcessor.from_pretrained(d)
    vision = model.vision_model
    img = Image.open(path)
    pixels = proc(img, return_tensors="pt", **over).pixel_values
    resized = proc(img, do_rescale=False, do_normalize=False, data_format="channels_last", return_tensors="np",
                   **over).pixel_values[0]
    interp = case != "default"
    with torch.no_grad():
        v = vision(pixels, output_attentions=True, output_hidden_states=True, interpolate_pos_encoding=interp)
        proj = model.visual_projection
        t = {"pixels": pixels[0], "resized": torch.from_numpy(resized.astype("float32")),
             "attentions": torch.stack([a[0] for a in v.attentions]), "hidden": v.last_hidden_state[0],
             "pooled": v.pooler_output[0], "image_embeds": proj(v.pooler_output)[0],
             "patch_embeds": proj(vision.post_layernorm(v.last_hidden_state[0, 1:])),
             "token_norms": torch.stack([s[0].norm(dim=-1) for s in v.hidden_states[1:]])}
        texts = []
        if cls_name == "CLIPModel":
            tok = transformers.CLIPTokenizer.from_pretrained(d)
            embeds = []
            for i, text in enumerate(TEXTS):
                ids = tok(text, return_tensors="pt").input_ids
                t[f"text_ids_{i}"] = ids[0].float()
                embeds.append(model.get_text_features(input_ids=ids)[0])
                texts.append(text)
            t["text_embeds"] = torch.stack(embeds)
            batch = tok(TEXTS, padding=True, return_tensors="pt")
            o = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, pixel_values=pixels,
                      interpolate_pos_encoding=interp)
            t["logits_per_image"] = o.logits_per_image[0]
            check = model.get_image_features(pixel_values=pixels, interpolate_pos_encoding=interp)[0]
            assert torch.allclose(check, t["image_embeds"], atol=1e-6)
    h, w = pixels.shape[-2:]
    p = model.config.vision_config.patch_size if hasattr(model.config, "vision_config") else model.config.patch_size
    meta = {"case": case, "image": image_name + ".png", "processor_overrides": over, "input": [int(h), int(w)],
            "grid": [int(h // p), int(w // p)], "tokens": int(t["hidden"].shape[0]), "texts": texts,
            "reference": f"transformers {TAG} {cls_name} + CLIPImageProcessor + CLIPTokenizer "
                         f"(torch {torch.__version__.split('+')[0]})"}
    return t, meta


def worker(out):
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    import fast_blas  # noqa: F401
    import make_llm_fixtures
    make_llm_fixtures.install_shims(TAG)
    import torch
    torch.set_num_threads(1)
    import transformers
    from safetensors_io import save_file
    getattr(transformers.utils.logging, "disable_progress_bar", lambda: None)()
    vision_goldens.hashable_added_token(transformers)
    for folder in FIXTURES:
        shutil.rmtree(os.path.join(out, folder), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    images = vision_goldens.copy_pictures(out)
    index = []
    for folder, spec in FIXTURES.items():
        d = make_folder(transformers, torch, out, folder, spec)
        for image_name, path in images.items():
            for case, over in CASES.items():
                t, meta = goldens(transformers, torch, d, spec[0], image_name, path, case, over)
                vision_goldens.save_golden(save_file, out, folder, image_name, case, t, meta, index)
        vision_goldens.report_folder(out, folder, spec[0])
    vision_goldens.write_index(out, index)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    import vision_goldens
    vision_goldens.main(sys.argv[1:], __file__, DEFAULT_OUT, TAG, worker)
