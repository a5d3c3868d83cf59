"""Tiny seeded BERT and GPT-2 folders in the hub layout, with goldens, for the C++ text engine tests (issue 24).

    /usr/bin/python3 tools/golden/make_text_fixtures.py   # rewrites tests/data/text/

Models (config.json, model.safetensors, tokenizer files; weights random, q/k scaled up so rows are peaked):
  bert-mlm     BertForMaskedLM ("bert." prefix, cls.predictions.*, decoder tied to the word embeddings and so
               not saved, as save_pretrained writes it), uncased vocab.txt, gelu, hidden 32, 2 layers, 4 heads
  bert-cased   BertModel (no prefix, with pooler), do_lower_case false in tokenizer_config.json, relu,
               LayerNorm tensors named gamma / beta as in the original BERT checkpoints
  gpt2         GPT2LMHeadModel ("transformer." prefix, lm_head tied and not saved), byte-level BPE learned here
               (vocab.json + merges.txt), gelu_new, n_embd 32, 2 layers, 4 heads
  gpt2-bare    GPT2Model without prefix (as the original "gpt2" checkpoint), tokenizer.json only (vocab and merges
               read from there), scale_attn_weights false
Goldens (golden.safetensors + golden.json in each folder): for every text, the tokens and ids, attentions
[L, H, T, T], logits [T, V] (LM heads), pooled (BertModel) and, for GPT-2, the greedy continuation of 6 tokens.
The reference is text_reference.py (independent of the C++ code).
"""
import collections
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
import fast_blas  # noqa: F401,E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import save_file  # noqa: E402
from text_reference import ByteBpe, WordPiece, bert_forward, gpt2_forward, gpt2_greedy, learn_bpe  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "text")

BERT_TEXTS = [
    "Hello, world! The cat sat on the mat.",
    "The [MASK] sat on the [MASK].",
    "Café naïve RÉSUMÉ — Ünïcödé façade",
    "中国人 love Paris和Berlin",
    "Don't stop: it's 3.14 pounds!!",
    "unaffable runningjumped xyzzyq",
    "emoji 😀 and 🇩🇪 flags",
    "repeated   spaces\tand\nnewlines  ",
    "ΣΊΣΥΦΟΣ Straße İstanbul",
    "zero\u200bwidth\x00and\x07controls",
    "a" * 101 + " long",
    "[mask] is not [MASK]",
]
GPT2_TEXTS = [
    "Hello, world! The cat sat on the mat.",
    "Don't stop: it's 3.14 pounds!! We'll see, I'm sure they've won.",
    "repeated   spaces\tand\nnewlines  ",
    "Café naïve RÉSUMÉ — Ünïcödé",
    "emoji 😀 and 🇩🇪 flags, 中国人",
    "<|endoftext|>The dog",
    "  leading spaces and trailing ",
]
BPE_CORPUS = (
    "the cat sat on the mat. the dog ran to the park and the cat ran after the dog. hello world, hello there! "
    "don't stop: it's raining, we'll see. they've won, i'm sure. the quick brown fox jumps over the lazy dog. "
    "Paris and Berlin are cities. The weather is nice today and tomorrow. Numbers: 3.14, 42, 1000.") * 3


def bert_vocab():
    specials = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = [chr(c) for c in range(33, 127) if not chr(c).isupper()]
    words = ["the", "cat", "sat", "on", "mat", "hello", "world", "cafe", "naive", "resume", "unicode", "facade",
             "love", "paris", "berlin", "don", "stop", "it", "pounds", "un", "##aff", "##able", "run", "##ning",
             "jump", "##ed", "emoji", "and", "flags", "repeated", "spaces", "new", "##lines", "is", "not", "mask",
             "straße", "strasse", "σισυφοσ", "zero", "width", "controls", "long", "Hello", "The", "Paris", "Cafe",
             "Berlin", "Don", "##s", "##t", "##i", "##e", "##a"]
    cjk = ["中", "国", "人", "和", "😀"]
    pieces = ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"]
    return list(dict.fromkeys(specials + chars + words + cjk + pieces))  # first occurrence of each, in order


def random_weights(shapes, seed):
    g = torch.Generator().manual_seed(seed)
    out = collections.OrderedDict()
    for name, shape in shapes:
        if name.endswith("LayerNorm.weight") or name.endswith("LayerNorm.gamma") or ".ln_" in name and name.endswith(".weight") \
                or name.endswith("ln_f.weight"):
            t = 1.0 + 0.1 * torch.randn(shape, generator=g)
        elif any(k in name for k in ("query.weight", "key.weight")):
            t = 0.5 * torch.randn(shape, generator=g)
        else:
            t = 0.2 * torch.randn(shape, generator=g)
        out[name] = t
    return out


def bert_shapes(c, prefix, mlm, pooler, gamma):
    d, v, inter = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    lnw, lnb = ("gamma", "beta") if gamma else ("weight", "bias")
    s = [(prefix + "embeddings.word_embeddings.weight", [v, d]),
         (prefix + "embeddings.position_embeddings.weight", [c["max_position_embeddings"], d]),
         (prefix + "embeddings.token_type_embeddings.weight", [c["type_vocab_size"], d]),
         (prefix + f"embeddings.LayerNorm.{lnw}", [d]), (prefix + f"embeddings.LayerNorm.{lnb}", [d])]
    for layer in range(c["num_hidden_layers"]):
        q = f"{prefix}encoder.layer.{layer}."
        for name, shape in [("attention.self.query", [d, d]), ("attention.self.key", [d, d]),
                            ("attention.self.value", [d, d]), ("attention.output.dense", [d, d]),
                            ("intermediate.dense", [inter, d]), ("output.dense", [d, inter])]:
            s += [(q + name + ".weight", shape), (q + name + ".bias", [shape[0]])]
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            s += [(q + f"{ln}.{lnw}", [d]), (q + f"{ln}.{lnb}", [d])]
    if pooler:
        s += [(prefix + "pooler.dense.weight", [d, d]), (prefix + "pooler.dense.bias", [d])]
    if mlm:
        s += [("cls.predictions.bias", [v]), ("cls.predictions.transform.dense.weight", [d, d]),
              ("cls.predictions.transform.dense.bias", [d]), ("cls.predictions.transform.LayerNorm.weight", [d]),
              ("cls.predictions.transform.LayerNorm.bias", [d])]
    return s


def gpt2_shapes(c, prefix):
    d, v = c["n_embd"], c["vocab_size"]
    s = [(prefix + "wte.weight", [v, d]), (prefix + "wpe.weight", [c["n_positions"], d])]
    for layer in range(c["n_layer"]):
        q = f"{prefix}h.{layer}."
        s += [(q + "ln_1.weight", [d]), (q + "ln_1.bias", [d]), (q + "attn.c_attn.weight", [d, 3 * d]),
              (q + "attn.c_attn.bias", [3 * d]), (q + "attn.c_proj.weight", [d, d]), (q + "attn.c_proj.bias", [d]),
              (q + "ln_2.weight", [d]), (q + "ln_2.bias", [d]), (q + "mlp.c_fc.weight", [d, 4 * d]),
              (q + "mlp.c_fc.bias", [4 * d]), (q + "mlp.c_proj.weight", [4 * d, d]), (q + "mlp.c_proj.bias", [d])]
    s += [(prefix + "ln_f.weight", [d]), (prefix + "ln_f.bias", [d])]
    return s


def normalised(w, gamma):
    """The tensors under the names the reference reads (gamma/beta → weight/bias, as transformers renames them)."""
    if not gamma:
        return w
    return {k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias"): v
            for k, v in w.items()}


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")


def make_bert(name, arch, mlm, pooler, lower, act, gamma, seed):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    vocab = bert_vocab()
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    c = {"architectures": [arch], "attention_probs_dropout_prob": 0.0, "hidden_act": act, "hidden_dropout_prob": 0.0,
         "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-12,
         "max_position_embeddings": 64, "model_type": "bert", "num_attention_heads": 4, "num_hidden_layers": 2,
         "pad_token_id": 0, "position_embedding_type": "absolute", "torch_dtype": "float32",
         "transformers_version": "4.33.3", "type_vocab_size": 2, "use_cache": True, "vocab_size": len(vocab)}
    write_json(os.path.join(folder, "config.json"), c)
    write_json(os.path.join(folder, "tokenizer_config.json"),
               {"do_lower_case": lower, "model_max_length": 64, "tokenizer_class": "BertTokenizer"})
    prefix = "bert." if mlm else ""
    w = random_weights(bert_shapes(c, prefix, mlm, pooler, gamma), seed)
    save_file(w, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    ref = normalised(w, gamma)
    tok = WordPiece(os.path.join(folder, "vocab.txt"), do_lower_case=lower)
    golden, cases = {}, []
    for i, text in enumerate(BERT_TEXTS):
        tokens, ids = tok.encode(text)
        attentions, _, logits, pooled = bert_forward(ref, c, ids, prefix)
        golden[f"t{i}.attentions"] = attentions
        if logits is not None:
            golden[f"t{i}.logits"] = logits
        if pooled is not None:
            golden[f"t{i}.pooled"] = pooled
        cases.append({"text": text, "tokens": tokens, "ids": ids})
    save_file(golden, os.path.join(folder, "golden.safetensors"))
    write_json(os.path.join(folder, "golden.json"), {"cases": cases})
    print("wrote", name, len(vocab), "tokens")


def make_gpt2(name, prefix, scale, tokenizer_json, seed):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    vocab, merges = learn_bpe([BPE_CORPUS], 400)
    if tokenizer_json:
        write_json(os.path.join(folder, "tokenizer.json"),
                   {"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
                    "added_tokens": [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "special": True}]})
    else:
        write_json(os.path.join(folder, "vocab.json"), vocab)
        with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    c = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel" if prefix else "GPT2Model"],
         "attn_pdrop": 0.0, "bos_token_id": vocab["<|endoftext|>"], "embd_pdrop": 0.0,
         "eos_token_id": vocab["<|endoftext|>"], "initializer_range": 0.02, "layer_norm_epsilon": 1e-5,
         "model_type": "gpt2", "n_ctx": 64, "n_embd": 32, "n_head": 4, "n_inner": None, "n_layer": 2,
         "n_positions": 64, "reorder_and_upcast_attn": False, "resid_pdrop": 0.0, "scale_attn_by_inverse_layer_idx": False,
         "scale_attn_weights": scale, "torch_dtype": "float32", "transformers_version": "4.33.3", "use_cache": True,
         "vocab_size": len(vocab)}
    write_json(os.path.join(folder, "config.json"), c)
    w = random_weights(gpt2_shapes(c, prefix), seed)
    save_file(w, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    tmp = os.path.join(folder, "_ref")
    os.makedirs(tmp, exist_ok=True)
    write_json(os.path.join(tmp, "vocab.json"), vocab)
    with open(os.path.join(tmp, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    tok = ByteBpe(os.path.join(tmp, "vocab.json"), os.path.join(tmp, "merges.txt"))
    shutil.rmtree(tmp)
    golden, cases = {}, []
    for i, text in enumerate(GPT2_TEXTS):
        tokens, ids = tok.encode(text)
        attentions, logits = gpt2_forward(w, c, ids, prefix)
        golden[f"t{i}.attentions"] = attentions
        golden[f"t{i}.logits"] = logits
        cases.append({"text": text, "tokens": tokens, "ids": ids, "greedy": gpt2_greedy(w, c, ids, prefix, 6)})
    save_file(golden, os.path.join(folder, "golden.safetensors"))
    write_json(os.path.join(folder, "golden.json"), {"cases": cases})
    print("wrote", name, len(vocab), "tokens", len(merges), "merges")


def main():
    torch.set_num_threads(1)
    with torch.no_grad():
        make_bert("bert-mlm", "BertForMaskedLM", mlm=True, pooler=False, lower=True, act="gelu", gamma=False, seed=1)
        make_bert("bert-cased", "BertModel", mlm=False, pooler=True, lower=False, act="relu", gamma=True, seed=2)
        make_gpt2("gpt2", "transformer.", True, False, seed=3)
        make_gpt2("gpt2-bare", "", False, True, seed=4)


if __name__ == "__main__":
    main()
