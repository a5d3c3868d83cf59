"""Tiny seeded SigLIP folders (issue 43) with goldens from Hugging Face transformers' OWN SiglipModel,
SiglipVisionModel, SiglipTokenizer and SiglipImageProcessor (v4.50.3 on Debian's torch 1.13), for the C++ SigLIP
tests (tests/model/test_siglip_model.cpp).

    TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/golden/make_siglip_fixtures.py [--out DIR]
    # rewrites the folders it writes in DIR (default tests/data/siglip)

The sources come as for make_clip_model_fixtures.py (make_llm_fixtures.py's stand-ins and shims; the fetched code is
never edited); the slow SiglipTokenizer needs Debian's python3-sentencepiece and python3-protobuf.
Tokenizer: spiece.model, a 112-piece unigram model trained here by the sentencepiece library on generated captions
(pad 0 "<pad>", eos 1 "</s>", unk 2 "<unk>", no BOS: the ids google/siglip-* use), saved by SiglipTokenizer with
model_max_length 64 and model_input_names ["input_ids"] (SigLIP was trained without a text mask: the pad token is
the EOS, and the pooled token is the last of the 64).
Image processor: google/siglip-base-patch16-224's preprocessor_config.json scaled down (SiglipImageProcessor:
resize to 16x16 without keeping the aspect, bicubic, rescale, mean = std = 0.5).
Folders (save_pretrained(safe_serialization=True), float32):
  siglip         SiglipModel: vision hidden 32, 2 layers, 4 heads, MLP 64, image 16, patch 4 (4x4 grid, no CLS),
                 gelu_pytorch_tanh, the attention-pooling head; text hidden 24, 2 layers, 4 heads, MLP 48,
                 64 positions, projection_size 32; logit_scale 2.3, logit_bias -1.7
  siglip-vision  SiglipVisionModel (model_type siglip_vision_model), gelu, seed 92
Weights random and seeded (norms ~1 +- 0.2, biases +- 0.2, probe / positions / token embeddings +- 0.5, q/k x3).
Images (DIR/images): photo_97x61.png and portrait_45x71.png (tests/data/dinov2's pixels).
Goldens: <folder>/golden_<image>_<case>.safetensors, metadata "golden" = JSON {case, image, input, grid, tokens,
texts}; tensors pixels [C, H, W], resized [H, W, C], attentions [L, H, N, N] (eager), hidden [N, D]
(last_hidden_state = post_layernorm(encoder output)), pooled [D] (the pooling head's output = image_embeds, not
normalised), probe_attentions [H, N] (the head's nn.MultiheadAttention, average_attn_weights=False),
patch_embeds [N, D] (each patch through the head's value path: x = out_proj(v_proj(hidden_i)), x + mlp(layernorm(x))
— what the head outputs when its probe attends to that patch alone), token_norms [L, N]; SiglipModel folders also
text_ids_<i> (padded to 64), text_embeds [texts, D] (get_text_features, not normalised), text_attentions_0
[L, H, 64, 64] (photo_97x61 default only) and logits_per_image [texts] (SiglipModel.forward on the batch, no mask). Cases:
  default    the saved processor: 16x16, grid 4x4 = the table
  nonsquare  16x24 (grid 4x6), interpolate_pos_encoding=True
DIR/tokenizer_cases.json: texts and SiglipTokenizer's ids for them (no padding), punctuation, case, spaces, "</s>"
and non-ASCII letters included. DIR/goldens.json lists every file with its metadata.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TAG = "v4.50.3"
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "siglip")

VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=16,
              patch_size=4, num_channels=3, hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6)
TEXT = dict(hidden_size=24, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, vocab_size=112,
            max_position_embeddings=64, hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6, projection_size=32,
            pad_token_id=1, bos_token_id=None, eos_token_id=1)
FIXTURES = {  # folder: (model class, vision overrides, seed)
    "siglip": ("SiglipModel", {}, 91),
    "siglip-vision": ("SiglipVisionModel", dict(hidden_act="gelu"), 92),
}
PROCESSOR = dict(do_resize=True, size={"height": 16, "width": 16}, resample=3, do_rescale=True,
                 rescale_factor=1 / 255, do_normalize=True, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
CASES = {"default": {}, "nonsquare": dict(size={"height": 16, "width": 24})}
TEXTS = ["a photo of a cat", "a red chair", "A Sneaker ABOVE a bag!", "the lighthouse at night, oil painting"]
TOKENIZER_CASES = TEXTS + [
    "", "   ", "Hello, World!!", "a  dog\tand\n a   cat", "an apple</s> and a pear", "café crème brûlée",
    "ＦＵＬＬ width", "don't (really) stop: 100% sure?", "_under_score_", "emoji 🐱 cat", "ÉCOLE Straße",
    "a photo of a " + "very " * 40 + "long dog"]
WORDS = ("a an the photo picture drawing painting sketch of on in at with and two three red green blue black white "
         "yellow cat dog bird horse car chair table lamp bag shoe sneaker coat dress shirt boot sandal trouser "
         "lighthouse night day oil small large old new above below beside near sea city street tree house").split()


def train_spm(path):
    import random
    import sentencepiece as spm
    rng = random.Random(5)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(3000)]
    lines += ["café crème brûlée école straße", "hello world emoji under score", "full width 100 sure stop"] * 20
    corpus = path + ".txt"
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    spm.SentencePieceTrainer.train(input=corpus, model_prefix=path, vocab_size=TEXT["vocab_size"],
                                   model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   character_coverage=1.0, minloglevel=2)
    os.remove(corpus)
    os.remove(path + ".vocab")
    vision_goldens.anonymize_sentencepiece(path + ".model")
    return path + ".model"


def randomize(torch, model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            r = torch.randn(p.shape, generator=g)
            if name == "logit_scale":
                p.fill_(2.3)
            elif name == "logit_bias":
                p.fill_(-1.7)
            elif "norm" in name and name.endswith(".weight"):
                p.copy_(1.0 + 0.2 * r)
            elif name.endswith("bias"):  # also the pooling head's in_proj_bias
                p.copy_(0.2 * r)
            elif name.endswith("probe") or "position_embedding" in name or "token_embedding" in name:
                p.copy_(0.5 * r)
            elif p.dim() == 4:  # the patch convolution [D, C, p, p]
                p.copy_(r / (p.shape[1] * p.shape[2] * p.shape[3]) ** 0.5)
            else:  # a Linear weight [out, in], the head's in_proj_weight [3D, D]
                scale = 3.0 if (".q_proj." in name or ".k_proj." in name or "in_proj_weight" in name) else 1.0
                p.copy_(scale * r / p.shape[1] ** 0.5)


def make_folder(transformers, torch, out, folder, spec, spm_path):
    cls_name, vision, seed = spec
    if cls_name == "SiglipVisionModel":
        cfg = transformers.SiglipVisionConfig(**dict(VISION, **vision))
    else:
        cfg = transformers.SiglipConfig(text_config=TEXT, vision_config=dict(VISION, **vision))
    model = getattr(transformers, cls_name)(cfg).eval()
    randomize(torch, model, seed)
    d = os.path.join(out, folder)
    model.save_pretrained(d, safe_serialization=True)
    transformers.SiglipImageProcessor(**PROCESSOR).save_pretrained(d)
    if cls_name == "SiglipModel":
        tok = transformers.SiglipTokenizer(spm_path, model_max_length=64, model_input_names=["input_ids"])
        tok.save_pretrained(d)
    return d


def vision_tensors(torch, vision, pixels, interp):
    v = vision(pixels, output_attentions=True, output_hidden_states=True, interpolate_pos_encoding=interp)
    head, h = vision.head, v.last_hidden_state
    probe = head.probe.repeat(h.shape[0], 1, 1)
    _, probe_att = head.attention(probe, h, h, need_weights=True, average_attn_weights=False)
    d = h.shape[-1]
    mha = head.attention
    x = torch.nn.functional.linear(h[0], mha.in_proj_weight[2 * d:], mha.in_proj_bias[2 * d:])
    x = mha.out_proj(x)
    patch = x + head.mlp(head.layernorm(x))
    return {"attentions": torch.stack([a[0] for a in v.attentions]), "hidden": h[0], "pooled": v.pooler_output[0],
            "probe_attentions": probe_att[0, :, 0, :], "patch_embeds": patch,
            "token_norms": torch.stack([s[0].norm(dim=-1) for s in v.hidden_states[1:]])}


def text_tensors(transformers, torch, model, d, pixels, interp, attentions):
    tok = transformers.SiglipTokenizer.from_pretrained(d)
    t, embeds = {}, []
    batch = tok(TEXTS, padding="max_length", max_length=64, truncation=True, return_tensors="pt")
    assert "attention_mask" not in batch
    for i in range(len(TEXTS)):
        ids = batch.input_ids[i:i + 1]
        t[f"text_ids_{i}"] = ids[0].float()
        embeds.append(model.get_text_features(input_ids=ids)[0])
    t["text_embeds"] = torch.stack(embeds)
    if attentions:  # the same for every picture: kept once
        out = model.text_model(input_ids=batch.input_ids[:1], output_attentions=True)
        t["text_attentions_0"] = torch.stack([a[0] for a in out.attentions])
    o = model(input_ids=batch.input_ids, pixel_values=pixels, interpolate_pos_encoding=interp)
    t["logits_per_image"] = o.logits_per_image[0]
    return t


def goldens(transformers, torch, d, cls_name, image_name, path, case, over):
    from PIL import Image
    model = getattr(transformers, cls_name).from_pretrained(d, attn_implementation="eager").eval()
    proc = transformers.SiglipImageProcessor.from_pretrained(d)
    img = Image.open(path)
    pixels = proc(img, return_tensors="pt", **over).pixel_values
    resized = proc(img, do_rescale=False, do_normalize=False, data_format="channels_last", return_tensors="np",
                   **over).pixel_values[0]
    interp = case != "default"
    with torch.no_grad():
        t = {"pixels": pixels[0], "resized": torch.from_numpy(resized.astype("float32"))}
        t.update(vision_tensors(torch, model.vision_model, pixels, interp))
        texts = []
        if cls_name == "SiglipModel":
            first = image_name == "photo_97x61" and case == "default"
            t.update(text_tensors(transformers, torch, model, d, pixels, interp, first))
            texts = TEXTS
            check = model.get_image_features(pixel_values=pixels, interpolate_pos_encoding=interp)[0]
            assert torch.allclose(check, t["pooled"], atol=1e-6)
    h, w = pixels.shape[-2:]
    p = VISION["patch_size"]
    meta = {"case": case, "image": image_name + ".png", "processor_overrides": over, "input": [int(h), int(w)],
            "grid": [int(h // p), int(w // p)], "tokens": int(t["hidden"].shape[0]), "texts": texts,
            "reference": f"transformers {TAG} {cls_name} + SiglipImageProcessor + SiglipTokenizer "
                         f"(torch {torch.__version__.split('+')[0]})"}
    return t, meta


def tokenizer_cases(transformers, d):
    tok = transformers.SiglipTokenizer.from_pretrained(d)
    return [{"text": s, "ids": tok(s).input_ids,
             "padded": tok(s, padding="max_length", max_length=64, truncation=True).input_ids}
            for s in TOKENIZER_CASES]


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
    spm_dir = os.path.join(out, "siglip-spm-tmp")
    os.makedirs(spm_dir, exist_ok=True)
    spm_path = train_spm(os.path.join(spm_dir, "spiece"))
    index = []
    for folder, spec in FIXTURES.items():
        d = make_folder(transformers, torch, out, folder, spec, spm_path)
        for image_name, path in images.items():
            for case, over in CASES.items():
                t, meta = goldens(transformers, torch, d, spec[0], image_name, path, case, over)
                vision_goldens.save_golden(save_file, out, folder, image_name, case, t, meta, index)
        vision_goldens.report_folder(out, folder, spec[0])
    shutil.rmtree(spm_dir)
    with open(os.path.join(out, "tokenizer_cases.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_cases(transformers, os.path.join(out, "siglip")), f, indent=1, ensure_ascii=False)
        f.write("\n")
    vision_goldens.write_index(out, index, f", {len(TOKENIZER_CASES)} tokenizer cases")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    import vision_goldens
    vision_goldens.main(sys.argv[1:], __file__, DEFAULT_OUT, TAG, worker)
