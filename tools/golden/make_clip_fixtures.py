"""A tiny Stable-Diffusion-layout pipeline's text side (issue 41) with goldens from Hugging Face transformers' OWN
CLIPTokenizer and CLIPTextModel (v4.33.3 on Debian's torch 1.13), for the C++ CLIP tests.

    TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/golden/make_clip_fixtures.py
    # rewrites tests/data/t2i/tiny-pipe/{tokenizer,tokenizer-pad-bang,text_encoder,text_encoder-gelu-fp16}

The sources come as for make_llm_fixtures.py (its docstring: tf-v4.33.3 and hub-* under TRANSFORMERS_SRC; the same
stand-ins for the compiled safetensors and tokenizers packages). ftfy is not installed (Debian has no package), so
CLIPTokenizer cleans the text with its BasicTokenizer fallback (lower case, control characters dropped, white space
folded, CJK ideographs spaced, NFC, no punctuation split) — what the C++ tokenizer implements.

Vocabulary, built as CLIP's was: the 256 byte stand-ins, the same with "</w>", then the merges learnt here by plain
BPE from CORPUS (words split by CLIP's pattern, "</w>" on each word's last symbol) in the order learnt, then
<|startoftext|> and <|endoftext|> (the highest ids, as in CLIP). CLIPTokenizer(vocab, merges) writes its folder with
save_pretrained; "tokenizer-pad-bang" is the same with pad_token "!" (SD 2.x's, a special token split off the text).
Text encoders: CLIPTextModel (hidden 32, 2 layers, 4 heads, 64 inner, 77 positions), seeded random weights (q/k x3 so
rows are peaked), save_pretrained(safe_serialization=True): "text_encoder" quick_gelu float32 (SD 1.x), and
"text_encoder-gelu-fp16" gelu stored float16 (SD 2.x's activation; run in float32 for the golden).
Goldens (golden.json + golden.safetensors in each folder): tokenizer folders: per prompt the ids
(tokenizer(p).input_ids) and the pipeline's (padding="max_length", max_length=77, truncation=True); text encoders:
per prompt the padded ids, last_hidden_state [77, 32] and attentions [L, H, 77, 77] (output_attentions).
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "t2i", "tiny-pipe")
TAG = "v4.33.3"
MERGES = 400

CORPUS = """a photo of a cat sitting on a red chair. an oil painting of a lighthouse at night, highly detailed.
a sneaker above a bag, a dress on the right. the ankle boot is left of the trouser and a shirt below it.
portrait of an astronaut riding a horse on the moon, digital art, trending on artstation, 4k, 8k.
a bowl of fruit: apples, oranges, bananas and grapes on the kitchen table in the morning light.
it's a beautiful day; don't forget the umbrella! we'll walk to the station where they've parked the car.
sunset over the mountains with a river and pine trees, watercolor, soft colors, wide angle, cinematic.
"""

PROMPTS = [
    "a photo of a cat",
    "A Sneaker ABOVE a bag, a dress on the right.",
    "it's   a\tbeautiful\nday; DON'T forget 123 apples!!",
    "café naïve Ünïcödé — 東京 and 🙂 emoji",
    "control\x00chars\x07 and \u00a0nbsp",
    "a <|endoftext|> typed and <|ENDOFTEXT|> in capitals, <|startoftext|>",
    "hello!! wow!",
    "",
    " ".join(["portrait of an astronaut riding a horse on the moon"] * 9),  # past 77: truncated
]


def learn_merges(clip_pattern, byte_encoder, n):
    import collections
    import regex
    words = collections.Counter()
    for w in regex.findall(clip_pattern, CORPUS.lower()):
        sym = [byte_encoder[b] for b in w.encode("utf-8")]
        sym[-1] += "</w>"
        words[tuple(sym)] += 1
    merges = []
    for _ in range(n):
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        merged = collections.Counter()
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] += c
        words = merged
    return merges


def write_tokenizers(transformers, tmp):
    from transformers.models.clip.tokenization_clip import bytes_to_unicode
    CLIPTokenizer = transformers.CLIPTokenizer
    byte_encoder = bytes_to_unicode()
    pattern = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
    merges = learn_merges(pattern, byte_encoder, MERGES)
    vocab = list(byte_encoder.values())
    vocab += [v + "</w>" for v in vocab]
    vocab += ["".join(m) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    vocab = list(dict.fromkeys(vocab))  # two merges can make the same token: one id for it
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({t: i for i, t in enumerate(vocab)}, f, ensure_ascii=False)
    with open(os.path.join(tmp, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    made = {}
    for name, kw in [("tokenizer", {}), ("tokenizer-pad-bang", {"pad_token": "!"})]:
        tok = CLIPTokenizer(os.path.join(tmp, "vocab.json"), os.path.join(tmp, "merges.txt"), model_max_length=77,
                            **kw)  # as the hub's CLIP tokenizers (the pipeline pads to it)
        folder = os.path.join(OUT, name)
        shutil.rmtree(folder, ignore_errors=True)
        tok.save_pretrained(folder)
        tok = CLIPTokenizer.from_pretrained(folder)
        cases = []
        for p in PROMPTS:
            padded = tok(p, padding="max_length", max_length=77, truncation=True).input_ids
            cases.append({"prompt": p, "ids": tok(p).input_ids, "tokens": tok.convert_ids_to_tokens(tok(p).input_ids),
                          "pipeline_ids": padded})
        with open(os.path.join(folder, "golden.json"), "w", encoding="utf-8") as f:
            json.dump({"reference": f"transformers {TAG} CLIPTokenizer (no ftfy)", "cases": cases}, f, indent=1,
                      ensure_ascii=False)
            f.write("\n")
        made[name] = tok
        print(f"{name}: vocab {len(vocab)}, {len(merges)} merges, pad {tok.pad_token!r} = {tok.pad_token_id}")
    return made, len(vocab)


def write_encoders(transformers, torch, tok, vocab_size):
    from safetensors_io import save_file
    for name, act, dtype, seed, prompts in [("text_encoder", "quick_gelu", "float32", 41, PROMPTS[1:3] + PROMPTS[-1:]),
                                            ("text_encoder-gelu-fp16", "gelu", "float16", 42, PROMPTS[:1] + PROMPTS[-1:])]:
        cfg = transformers.CLIPTextConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                                          num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=77,
                                          hidden_act=act, projection_dim=32, bos_token_id=vocab_size - 2,
                                          eos_token_id=vocab_size - 1, pad_token_id=1)
        model = transformers.CLIPTextModel(cfg).eval()
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for pname, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
                r = torch.randn(p.shape, generator=g)
                if "layer_norm" in pname:
                    p.copy_((1.0 if pname.endswith("weight") else 0.0) + 0.2 * r)
                elif pname.endswith(".bias"):
                    p.copy_(0.2 * r)
                elif "embedding" in pname:
                    p.copy_(0.5 * r)
                else:
                    scale = 3.0 if (".q_proj." in pname or ".k_proj." in pname) else 1.0
                    p.copy_(scale * r / p.shape[1] ** 0.5)
        model.to(getattr(torch, dtype))
        folder = os.path.join(OUT, name)
        shutil.rmtree(folder, ignore_errors=True)
        model.save_pretrained(folder, safe_serialization=True)
        m = transformers.CLIPTextModel.from_pretrained(folder, torch_dtype=torch.float32).float().eval()
        cases, tensors = [], {}
        for i, p in enumerate(prompts):
            ids = tok(p, padding="max_length", max_length=77, truncation=True).input_ids
            with torch.no_grad():
                out = m(torch.tensor([ids]), output_attentions=True)
            tensors[f"t{i}.last_hidden_state"] = out.last_hidden_state[0].float().contiguous()
            tensors[f"t{i}.attentions"] = torch.stack([a[0] for a in out.attentions]).float().contiguous()
            cases.append({"prompt": p, "ids": ids})
        save_file(tensors, os.path.join(folder, "golden.safetensors"))
        with open(os.path.join(folder, "golden.json"), "w", encoding="utf-8") as f:
            json.dump({"reference": f"transformers {TAG} CLIPTextModel (torch {torch.__version__.split('+')[0]})",
                       "stored_dtype": dtype, "cases": cases}, f, indent=1, ensure_ascii=False)
            f.write("\n")
        size = sum(os.path.getsize(os.path.join(folder, fn)) for fn in os.listdir(folder))
        print(f"{name}: {size / 1000:.1f} kB")


def worker():
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    import fast_blas  # noqa: F401
    import make_llm_fixtures
    make_llm_fixtures.install_shims(TAG)
    import tempfile
    import torch
    import transformers
    from transformers import tokenization_utils_base as base
    # The compiled tokenizers package's AddedToken is its content as a string; v4.33's pure-python stand-in
    # (used without that package) is a dataclass whose str() is its repr, which would name no token.
    base.AddedToken.__str__ = lambda self: self.content
    tmp = tempfile.mkdtemp(prefix="clip-vocab-")
    try:
        made, vocab_size = write_tokenizers(transformers, tmp)
        write_encoders(transformers, torch, made["tokenizer"], vocab_size)
    finally:
        shutil.rmtree(tmp)


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker()
    import make_llm_fixtures
    src = os.environ.get("TRANSFORMERS_SRC", "/tmp/llmgold")
    os.makedirs(OUT, exist_ok=True)
    import subprocess
    import tempfile
    hubs = sorted(d for d in os.listdir(src) if d.startswith("hub-"))
    if not hubs:
        sys.exit(f"no hub-<version>/src/huggingface_hub under {src} (see make_llm_fixtures.py)")
    stubs = tempfile.mkdtemp(prefix="clip-stubs-")
    try:
        make_llm_fixtures.write_stubs(stubs, hubs[-1][4:])
        path = [stubs, os.path.join(src, hubs[-1], "src"), os.path.join(src, f"tf-{TAG}", "src"), HERE]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), TRANSFORMERS_VERBOSITY="error",
                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], env=env, check=True)
    finally:
        shutil.rmtree(stubs)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main(sys.argv[1:])
