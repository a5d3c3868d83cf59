"""The built-in GPT-2-layout model of the Text page (resources/models/gpt2-en-tiny), trained here on the English
sentences of the Ding dictionary (Debian trans-de-en, GPL-2+) — the English side of our translation data.

    /usr/bin/python3 tools/train/train_gpt2.py --work build/train-work/gpt2 --minutes 60 \
        --export resources/models/gpt2-en-tiny
    ... --resume --minutes 30   # continues from the last checkpoint (every 5 minutes and at the end)

Steps: the English sentences (prepare_data's cleaning, de-duplicated; 2 % held out for validation), a byte-level
BPE vocabulary learned on them (text_reference.learn_bpe), a GPT-2 (pre-LN, tied LM head, gelu_new, Conv1D [in, out]
weights under GPT2LMHeadModel's names) trained with AdamW on packed 128-token windows, one thread. The export is a
hub folder (config.json, model.safetensors, vocab.json, merges.txt, tokenizer_config.json, generation_config.json)
and a model card (README.md) with the data, the architecture, every logged step and greedy samples.
"""
import argparse
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fast_blas  # noqa: F401,E402
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import prepare_data  # noqa: E402
import lm_loop  # noqa: E402
from safetensors_io import save_file  # noqa: E402
from text_reference import ByteBpe, learn_bpe  # noqa: E402

SEED = 20261203


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        # Conv1D layout: weight [in, out]
        self.c_attn_w = nn.Parameter(torch.randn(d, 3 * d) * 0.02)
        self.c_attn_b = nn.Parameter(torch.zeros(3 * d))
        self.c_proj_w = nn.Parameter(torch.randn(d, d) * 0.02)
        self.c_proj_b = nn.Parameter(torch.zeros(d))
        self.fc_w = nn.Parameter(torch.randn(d, 4 * d) * 0.02)
        self.fc_b = nn.Parameter(torch.zeros(4 * d))
        self.proj_w = nn.Parameter(torch.randn(4 * d, d) * 0.02)
        self.proj_b = nn.Parameter(torch.zeros(d))

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = (self.ln_1(x) @ self.c_attn_w + self.c_attn_b).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        scores = scores.masked_fill(~mask[:t, :t], torch.finfo(scores.dtype).min)
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + context @ self.c_proj_w + self.c_proj_b
        h = F.gelu(self.ln_2(x) @ self.fc_w + self.fc_b, approximate="tanh")
        return x + h @ self.proj_w + self.proj_b


class Gpt2(nn.Module):
    def __init__(self, vocab, d, layers, heads, positions):
        super().__init__()
        self.wte = nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.wpe = nn.Parameter(torch.randn(positions, d) * 0.01)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.register_buffer("mask", torch.tril(torch.ones(positions, positions, dtype=torch.bool)), persistent=False)

    def forward(self, ids):
        x = self.wte[ids] + self.wpe[: ids.shape[1]]
        for block in self.blocks:
            x = block(x, self.mask)
        return self.ln_f(x) @ self.wte.T

    def hf_state(self):
        """The weights under GPT2LMHeadModel's names (lm_head tied, so not written)."""
        out = {"transformer.wte.weight": self.wte, "transformer.wpe.weight": self.wpe,
               "transformer.ln_f.weight": self.ln_f.weight, "transformer.ln_f.bias": self.ln_f.bias}
        for i, b in enumerate(self.blocks):
            p = f"transformer.h.{i}."
            out.update({p + "ln_1.weight": b.ln_1.weight, p + "ln_1.bias": b.ln_1.bias, p + "ln_2.weight": b.ln_2.weight,
                        p + "ln_2.bias": b.ln_2.bias, p + "attn.c_attn.weight": b.c_attn_w, p + "attn.c_attn.bias": b.c_attn_b,
                        p + "attn.c_proj.weight": b.c_proj_w, p + "attn.c_proj.bias": b.c_proj_b,
                        p + "mlp.c_fc.weight": b.fc_w, p + "mlp.c_fc.bias": b.fc_b, p + "mlp.c_proj.weight": b.proj_w,
                        p + "mlp.c_proj.bias": b.proj_b})
        return {k: v.detach().clone().float() for k, v in out.items()}


def sentences(dict_path):
    sents, _, _ = prepare_data.extract(dict_path)
    seen, out = set(), []
    for _, en in sents:
        if en not in seen:
            seen.add(en)
            out.append(en)
    return out


def prepare(args):
    os.makedirs(args.work, exist_ok=True)
    data_path = os.path.join(args.work, "data.json")
    if os.path.exists(data_path):
        with open(data_path, encoding="utf-8") as f:
            return json.load(f)
    texts = sentences(args.dict)
    random.Random(SEED).shuffle(texts)
    held = max(200, len(texts) // 50)
    data = {"train": texts[held:], "valid": texts[:held]}
    vocab, merges = learn_bpe(data["train"], args.vocab)
    with open(os.path.join(args.work, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(args.work, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    with open(data_path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)
    print(f"{len(texts)} English sentences ({held} held out), vocabulary {len(vocab)}", flush=True)
    return data


def stream(tok, texts):
    eos = tok.vocab["<|endoftext|>"]
    ids = []
    for t in texts:
        ids.extend(tok.encode(t)[1])
        ids.append(eos)
    return torch.tensor(ids, dtype=torch.long)


def greedy(model, tok, prompt, n=16):
    ids = tok.encode(prompt)[1]
    eos = tok.vocab["<|endoftext|>"]
    with torch.no_grad():
        for _ in range(n):
            nxt = int(model(torch.tensor([ids[-127:]]))[0, -1].argmax())
            if nxt == eos:
                break
            ids.append(nxt)
    inv = {v: k for k, v in tok.vocab.items()}
    from text_reference import bytes_to_unicode
    back = {c: b for b, c in bytes_to_unicode().items()}
    return bytes(back[c] for i in ids for c in inv[i] if c in back).decode("utf-8", errors="replace")


PROMPTS = ["The weather", "I would like", "Where is the", "She has never", "We are going to", "How are"]


def export(model, args, log, tok, valid_loss, step):
    os.makedirs(args.export, exist_ok=True)
    d, layers, heads, positions = args.d, args.layers, args.heads, args.positions
    vocab = len(tok.vocab)
    eos = tok.vocab["<|endoftext|>"]
    config = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.0,
              "bos_token_id": eos, "embd_pdrop": 0.0, "eos_token_id": eos, "initializer_range": 0.02,
              "layer_norm_epsilon": 1e-5, "model_type": "gpt2", "n_ctx": positions, "n_embd": d, "n_head": heads,
              "n_inner": None, "n_layer": layers, "n_positions": positions, "reorder_and_upcast_attn": False,
              "resid_pdrop": 0.0, "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
              "torch_dtype": "float32", "transformers_version": "4.33.3", "use_cache": True, "vocab_size": vocab}
    with open(os.path.join(args.export, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    with open(os.path.join(args.export, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": eos, "eos_token_id": eos, "transformers_version": "4.33.3"}, f, indent=2)
    with open(os.path.join(args.export, "tokenizer_config.json"), "w") as f:
        json.dump({"add_prefix_space": False, "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                   "model_max_length": positions, "tokenizer_class": "GPT2Tokenizer", "unk_token": "<|endoftext|>"}, f, indent=2)
    for name in ("vocab.json", "merges.txt"):
        with open(os.path.join(args.work, name), encoding="utf-8") as src, \
                open(os.path.join(args.export, name), "w", encoding="utf-8") as dst:
            dst.write(src.read())
    save_file(model.hf_state(), os.path.join(args.export, "model.safetensors"), metadata={"format": "pt"})
    samples = "\n".join(f"- `{p}` → `{greedy(model, tok, p)}`" for p in PROMPTS)
    params = sum(p.numel() for p in model.parameters())
    card = f"""# gpt2-en-tiny — the Text page's built-in model

A GPT-2-layout language model (`GPT2LMHeadModel`: pre-LN, causal, tied LM head, `gelu_new`) trained by
`tools/train/train_gpt2.py` so that the Text page shows something meaningful offline. It is tiny and writes
dictionary-example English; it is for looking at attention, not for writing.

## Data and licence
The English sentences of the Ding German–English dictionary (Debian package `trans-de-en`, GPL-2+), cleaned by
`tools/train/prepare_data.py` and de-duplicated (38 791 sentences, 437 k tokens); 2 % held out for validation. The weights are
derived from GPL-2+ data and distributed under the same terms.

## Architecture
n_embd {d}, {layers} layers, {heads} heads, n_positions {positions}, vocabulary {vocab} (byte-level BPE learned on
the training sentences), {params / 1e6:.2f} M parameters, float32.

## Training
AdamW (lr {args.lr}, betas 0.9/0.95, weight decay 0.1, warm-up then cosine), batch {args.batch} × {args.context}
tokens, one CPU thread (niced, beside CI and C++ builds). The weights are those of step {step}, the lowest
validation loss of the run (tools/train/lm_loop.py; the training loss kept falling after it — the data is small for
{params / 1e6:.1f} M parameters). Validation loss (held-out sentences): {valid_loss:.3f} (perplexity
{math.exp(valid_loss):.1f}).

{{log_table}}

## Greedy samples
{samples}
"""
    lm_loop.write_card(args.export, card, log)


def main():
    ap = argparse.ArgumentParser()
    lm_loop.add_arguments(ap, "build/train-work/gpt2", 60, heads=4, positions=128, total_steps=12000)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    data = prepare(args)
    tok = ByteBpe(os.path.join(args.work, "vocab.json"), os.path.join(args.work, "merges.txt"))
    model = Gpt2(len(tok.vocab), args.d, args.layers, args.heads, args.positions)
    train_ids, valid_ids = lm_loop.token_streams(args.work, tok, data, stream)
    step, log = lm_loop.train(model, args, train_ids, valid_ids, SEED, warmup=300)
    valid = lm_loop.evaluate(model, valid_ids, args.context, batches=200)
    print(f"step {step}: valid loss {valid:.3f}", flush=True)
    if args.export:
        export(model, args, log, tok, valid, step)


if __name__ == "__main__":
    main()
