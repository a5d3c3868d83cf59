"""The built-in Llama-architecture model of the Text page (resources/models/llama-en-tiny), trained here on the same
English sentences as gpt2-en-tiny (the Ding dictionary, Debian trans-de-en, GPL-2+), so that the page shows a modern
decoder offline: grouped-query attention, rotary position embeddings, RMSNorm, a SwiGLU MLP, weights stored in
bfloat16, a tokenizer.json.

    /usr/bin/python3 tools/train/train_llama.py --work build/train-work/llama --minutes 40 \\
        --export resources/models/llama-en-tiny
    ... --resume --minutes 30   # continues from the last checkpoint (every 5 minutes and at the end)

Steps: train_gpt2's data (its cleaning, de-duplication, 2 % held out; a byte-level BPE vocabulary learned on the
training sentences), a LlamaForCausalLM-layout model (names, shapes and semantics of transformers' modeling_llama:
RMSNorm with eps 1e-5, rotate_half RoPE with theta 10000 in float32, q/k/v/o projections without bias, 6 query heads
sharing 2 key/value heads, SwiGLU, tied embeddings) trained with AdamW on packed 128-token windows, one thread.
The export is a hub folder: config.json (model_type llama), generation_config.json, model.safetensors in bfloat16
(the weights are rounded to bf16 once, at export; the card gives the validation loss of the rounded model),
tokenizer.json (the learned BPE as a byte-level tokenizer.json, <|endoftext|> its one special token),
tokenizer_config.json, and a model card (README.md). The exported weights are those with the lowest validation loss
(evaluated every 500 steps): the data is small and the model starts to memorise it.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fast_blas  # noqa: F401,E402
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import lm_loop  # noqa: E402  (the training loop the built-in language models share)
import train_gpt2 as gpt2  # noqa: E402  (data, BPE, token streams, sampling prompts)
from safetensors_io import save_file  # noqa: E402
from text_reference import ByteBpe  # noqa: E402

SEED = 20261204
THETA = 10000.0
EPS = 1e-5


class RmsNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Layer(nn.Module):
    def __init__(self, d, heads, kv_heads, inter):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.input_layernorm, self.post_attention_layernorm = RmsNorm(d), RmsNorm(d)
        self.q_proj = nn.Linear(d, heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(heads * self.hd, d, bias=False)
        self.gate_proj = nn.Linear(d, inter, bias=False)
        self.up_proj = nn.Linear(d, inter, bias=False)
        self.down_proj = nn.Linear(inter, d, bias=False)
        for lin in (self.q_proj, self.k_proj, self.v_proj, self.o_proj, self.gate_proj, self.up_proj, self.down_proj):
            nn.init.normal_(lin.weight, std=0.02)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        group = self.heads // self.kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        scores = scores.masked_fill(~mask[:t, :t], torch.finfo(scores.dtype).min)
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o_proj(context)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    def __init__(self, vocab, d, layers, heads, kv_heads, inter, positions):
        super().__init__()
        self.embed_tokens = nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.layers = nn.ModuleList(Layer(d, heads, kv_heads, inter) for _ in range(layers))
        self.norm = RmsNorm(d)
        hd = d // heads
        inv = 1.0 / (THETA ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
        freqs = torch.outer(torch.arange(positions).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)
        self.register_buffer("mask", torch.tril(torch.ones(positions, positions, dtype=torch.bool)), persistent=False)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.embed_tokens[ids]
        cos, sin = self.cos[:t], self.sin[:t]
        for layer in self.layers:
            x = layer(x, cos, sin, self.mask)
        return self.norm(x) @ self.embed_tokens.T

    def hf_state(self):
        """The weights under LlamaForCausalLM's names (lm_head tied, so not written), as float32."""
        out = {"model.embed_tokens.weight": self.embed_tokens, "model.norm.weight": self.norm.weight}
        for i, layer in enumerate(self.layers):
            p = f"model.layers.{i}."
            out[p + "input_layernorm.weight"] = layer.input_layernorm.weight
            out[p + "post_attention_layernorm.weight"] = layer.post_attention_layernorm.weight
            for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
                out[p + "self_attn." + name + ".weight"] = getattr(layer, name).weight
            for name in ("gate_proj", "up_proj", "down_proj"):
                out[p + "mlp." + name + ".weight"] = getattr(layer, name).weight
        return {k: v.detach().clone().float() for k, v in out.items()}


def tokenizer_json(tok, eos_token):
    """The learned byte-level BPE as Hugging Face's tokenizer.json (GPT-2's layout: ByteLevel with its regex)."""
    with open(tok.merges_path, encoding="utf-8") as f:
        merges = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#version")]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": tok.vocab[eos_token], "content": eos_token, "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": True, "special": True}],
            "normalizer": None, "pre_tokenizer": byte_level, "post_processor": byte_level, "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": tok.vocab, "merges": merges}}


def export(model, args, log, tok, valid_f32, valid_bf16, step):
    os.makedirs(args.export, exist_ok=True)
    eos_token = "<|endoftext|>"
    eos, vocab = tok.vocab[eos_token], len(tok.vocab)
    config = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
              "bos_token_id": eos, "eos_token_id": eos, "head_dim": args.d // args.heads, "hidden_act": "silu",
              "hidden_size": args.d, "initializer_range": 0.02, "intermediate_size": args.inter,
              "max_position_embeddings": args.positions, "mlp_bias": False, "model_type": "llama",
              "num_attention_heads": args.heads, "num_hidden_layers": args.layers,
              "num_key_value_heads": args.kv_heads, "pretraining_tp": 1, "rms_norm_eps": EPS, "rope_scaling": None,
              "rope_theta": THETA, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
              "transformers_version": "4.43.4", "use_cache": True, "vocab_size": vocab}
    files = {"config.json": config,
             "generation_config.json": {"bos_token_id": eos, "eos_token_id": [eos], "transformers_version": "4.43.4"},
             "tokenizer_config.json": {"add_bos_token": False, "bos_token": eos_token, "eos_token": eos_token,
                                       "model_max_length": args.positions, "tokenizer_class": "PreTrainedTokenizerFast",
                                       "clean_up_tokenization_spaces": False},
             "tokenizer.json": tokenizer_json(tok, eos_token)}
    for name, obj in files.items():
        with open(os.path.join(args.export, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=None if name == "tokenizer.json" else 2, ensure_ascii=False, sort_keys=name != "tokenizer.json")
            f.write("\n")
    state = {k: v.to(torch.bfloat16) for k, v in model.hf_state().items()}
    save_file(state, os.path.join(args.export, "model.safetensors"), metadata={"format": "pt"})
    samples = "\n".join(f"- `{p}` → `{gpt2.greedy(model, tok, p)}`" for p in gpt2.PROMPTS)
    params = sum(p.numel() for p in model.parameters())
    card = f"""# llama-en-tiny — the Text page's built-in modern decoder

A Llama-architecture language model (`LlamaForCausalLM`: RMSNorm, rotary position embeddings, grouped-query
attention with {args.heads} query heads sharing {args.kv_heads} key/value heads, a SwiGLU MLP, tied embeddings, weights
stored in bfloat16, a `tokenizer.json`) trained by `tools/train/train_llama.py`, so that the Text page shows the
architecture of today's LLMs offline. It is tiny and writes dictionary-example English; it is for looking at
attention, not for writing.

## Data and licence
The English sentences of the Ding German–English dictionary (Debian package `trans-de-en`, GPL-2+), cleaned by
`tools/train/prepare_data.py` and de-duplicated, the same as gpt2-en-tiny's; 2 % held out for validation. The
weights are derived from GPL-2+ data and distributed under the same terms.

## Architecture
hidden {args.d}, {args.layers} layers, {args.heads} heads of {args.d // args.heads} / {args.kv_heads} key/value heads,
intermediate {args.inter}, rope_theta {THETA:g}, max_position_embeddings {args.positions}, vocabulary {vocab} (byte-level
BPE learned on the training sentences), {params / 1e6:.2f} M parameters, stored in bfloat16.

## Training
AdamW (lr {args.lr}, betas 0.9/0.95, weight decay 0.1, warm-up then cosine), batch {args.batch} × {args.context}
tokens, one CPU thread (niced, beside C++ builds and a fuzzer), {log[-1]['step'] if log else 0} steps in
{log[-1]['minutes'] if log else 0:.0f} minutes. The weights are those of step {step}, the lowest validation loss of the
run (evaluated every 500 steps; the training loss keeps falling after it — the data is small for the model), rounded
to bfloat16 at export. Validation loss (held-out sentences): {valid_f32:.3f} in float32, {valid_bf16:.3f} with the bfloat16 weights
(perplexity {math.exp(valid_bf16):.1f}).

{{log_table}}

## Greedy samples (float32 weights)
{samples}
"""
    lm_loop.write_card(args.export, card, log)


def main():
    ap = argparse.ArgumentParser()
    lm_loop.add_arguments(ap, "build/train-work/llama", 40, heads=6, positions=256, total_steps=3000)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--inter", type=int, default=512)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    data = gpt2.prepare(args)
    tok = ByteBpe(os.path.join(args.work, "vocab.json"), os.path.join(args.work, "merges.txt"))
    tok.merges_path = os.path.join(args.work, "merges.txt")
    model = Llama(len(tok.vocab), args.d, args.layers, args.heads, args.kv_heads, args.inter, args.positions)
    train_ids, valid_ids = lm_loop.token_streams(args.work, tok, data, gpt2.stream)
    step, log = lm_loop.train(model, args, train_ids, valid_ids, SEED, warmup=200)
    valid = lm_loop.evaluate(model, valid_ids, args.context, batches=200)
    print(f"step {step}: valid loss {valid:.3f}", flush=True)
    if args.export:
        rounded = Llama(len(tok.vocab), args.d, args.layers, args.heads, args.kv_heads, args.inter, args.positions)
        rounded.load_state_dict({k: v.to(torch.bfloat16).float() for k, v in model.state_dict().items()})
        valid_bf16 = lm_loop.evaluate(rounded, valid_ids, args.context, batches=200)
        export(model, args, log, tok, valid, valid_bf16, step)


if __name__ == "__main__":
    main()
