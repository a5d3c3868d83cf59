"""GGUF fixtures for the C++ reader (core/io/gguf.h) and the GGML block decoders (core/ops/ggml_quants.h).

    /usr/bin/python3 tools/golden/make_gguf_fixtures.py      # rewrites tests/data/gguf/

quants.gguf: one tensor per type the reader converts — F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K,
Q4_K, Q5_K, Q6_K — each [3, 512] (two super-blocks per row) of seeded values with a different spread per row
(row 2 has one large outlier per block, as real weights do), plus a 1-D F32 tensor and a [2, 2, 64] Q8_0 one;
metadata of every value type: scalars, a string array, numeric arrays, an empty array and an array of arrays;
general.alignment 64 (not the default 32).
quants.golden.safetensors: for each tensor, "<name>.original" (what was quantised) and "<name>.decoded" (its
blocks decoded by gguf_format.dequantize, numpy, independently of the C++ decoder).

Models, as llama.cpp's convert_hf_to_gguf.py lays them out (facts from its source: tensor and key names, the
llama architecture's q/k rows permuted per head for its interleaved rope, Qwen's left as they are, 1-D tensors
kept F32, a matrix whose rows are no whole blocks kept F16), from the LLM fixtures (tests/data/llm):
  llama-gqa.{f32,f16,q8_0}.gguf    llama, 8 heads / 2 kv, untied (output.weight)
  qwen2-bias.{f32,q8_0}.gguf       qwen2, q/k/v biases, tied (no output.weight)
  qwen3-qknorm.bf16.gguf           qwen3, head_dim 32 (key_length), q/k norms, tied, bfloat16 as stored
  llama-q4k.q4_k.gguf              llama, hidden 256: every matrix Q4_K but output.weight Q6_K (Q4_K_M's choice)
  gemma3-gguf.bf16.gguf            gemma3: norms stored as 1 + w, its four norms' names, attention.sliding_window
  llama3-rope.f32.gguf             llama with rope_scaling llama3 as llama.cpp stores it: a rope_freqs.weight table
  gpt2.{f32,q8_0}.gguf             gpt2 from tests/data/text/gpt2 (its real byte-level BPE vocabulary and merges)
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import gguf_format as G  # noqa: E402
from safetensors_io import load_file, save_file  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "gguf")
TYPES = [G.F32, G.F16, G.BF16, G.Q4_0, G.Q4_1, G.Q5_0, G.Q5_1, G.Q8_0, G.Q2_K, G.Q3_K, G.Q4_K, G.Q5_K, G.Q6_K]


def values(rng):
    x = rng.normal(size=(3, 512)).astype(np.float32)
    x[0] *= 0.02  # a weight-like spread
    x[1] = x[1] * 0.5 + 0.3  # an offset row: the minimum matters
    x[2, ::32] *= 12  # one outlier per 32
    return x


LLM = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "llm")
MODELS = [("llama-gqa", [G.F32, G.F16, G.Q8_0]), ("qwen2-bias", [G.F32, G.Q8_0]), ("qwen3-qknorm", [G.BF16]),
          ("llama-q4k", [G.Q4_K]), ("gemma3-gguf", [G.BF16]), ("llama3-rope", [G.F32])]
ARCHS = {"gemma3_text": "gemma3"}  # model_type → general.architecture where they differ


def permute(w, heads):
    """llama.cpp's LlamaModel.permute: each head's rows [first half | second half] interleaved."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def rope_freqs(config):
    """llama.cpp's LlamaModel.generate_extra_tensors for rope_type llama3: a divisor per inverse frequency."""
    s = config["rope_scaling"]
    dim = config["hidden_size"] // config["num_attention_heads"]
    freqs = 1.0 / (config["rope_theta"] ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    factor, low, high, old = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
    out = []
    for freq in freqs:
        wavelen = 2 * np.pi / freq
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def gguf_tensors(config, weights, arch):
    gemma = arch == "gemma3"
    names = {"input_layernorm": "attn_norm", "post_attention_layernorm": "post_attention_norm" if gemma else "ffn_norm",
             "pre_feedforward_layernorm": "ffn_norm", "post_feedforward_layernorm": "post_ffw_norm",
             "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    out = [("token_embd.weight", weights["model.embed_tokens.weight"])]
    for l in range(config["num_hidden_layers"]):
        for hf, gg in names.items():
            for kind in ("weight", "bias"):
                key = f"model.layers.{l}.{hf}.{kind}"
                if key not in weights:
                    continue
                w = weights[key]
                if arch == "llama" and hf in ("self_attn.q_proj", "self_attn.k_proj"):
                    heads = config["num_attention_heads"] if hf.endswith("q_proj") else config["num_key_value_heads"]
                    w = permute(w, heads)
                if gemma and "norm" in hf:  # Gemma3Model.modify_tensors: (1 + w), in float32
                    w = np.asarray(w, dtype=np.float32) + 1
                out.append((f"blk.{l}.{gg}.{kind}", w))
    norm = weights["model.norm.weight"]
    out.append(("output_norm.weight", np.asarray(norm, dtype=np.float32) + 1 if gemma else norm))
    if (config.get("rope_scaling") or {}).get("rope_type") == "llama3":
        out.append(("rope_freqs.weight", rope_freqs(config)))
    if "lm_head.weight" in weights and not config.get("tie_word_embeddings", False):
        out.append(("output.weight", weights["lm_head.weight"]))
    return out


def model_metadata(config, arch, file_type):
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    m = [("general.architecture", G.STRING, arch), ("general.name", G.STRING, "attnlens fixture"),
         ("general.file_type", G.U32, file_type), ("general.quantization_version", G.U32, 2),
         (f"{arch}.vocab_size", G.U32, config["vocab_size"]),
         (f"{arch}.context_length", G.U32, config["max_position_embeddings"]),
         (f"{arch}.embedding_length", G.U32, config["hidden_size"]),
         (f"{arch}.block_count", G.U32, config["num_hidden_layers"]),
         (f"{arch}.feed_forward_length", G.U32, config["intermediate_size"]),
         (f"{arch}.attention.head_count", G.U32, heads),
         (f"{arch}.attention.head_count_kv", G.U32, config["num_key_value_heads"]),
         (f"{arch}.rope.freq_base", G.F32V, float(config.get("rope_theta", 10000.0))),
         (f"{arch}.attention.layer_norm_rms_epsilon", G.F32V, float(config["rms_norm_eps"]))]
    if config.get("head_dim"):
        m += [(f"{arch}.attention.key_length", G.U32, head_dim), (f"{arch}.attention.value_length", G.U32, head_dim)]
    if arch == "gemma3":  # llama.cpp fixes the pattern (every 6th layer full) and the local rope base (10 000)
        m += [(f"{arch}.attention.sliding_window", G.U32, config["sliding_window"])]
    # a byte-level vocabulary of the fixtures' 256 ids: GPT-2's byte → character table, no merges (each byte its
    # own token), as tokenizer.ggml.* — so that a GGUF file opens with its tokenizer (ids = the text's bytes)
    m += [("tokenizer.ggml.model", G.STRING, "gpt2"), ("tokenizer.ggml.pre", G.STRING, "gpt-2"),
          ("tokenizer.ggml.tokens", G.ARRAY, (G.STRING, byte_level_tokens())),
          ("tokenizer.ggml.token_type", G.ARRAY, (G.I32, [1] * 256)),
          ("tokenizer.ggml.merges", G.ARRAY, (G.STRING, [])),
          ("tokenizer.ggml.bos_token_id", G.U32, 1), ("tokenizer.ggml.eos_token_id", G.U32, 2),
          ("tokenizer.ggml.add_bos_token", G.BOOL, False)]
    return m


def byte_level_tokens():
    """GPT-2's bytes_to_unicode: printable bytes as themselves, the others shifted past 255, in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table, n = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return [table[b] for b in range(256)]


def convert_models():
    file_types = {G.F32: 0, G.F16: 1, G.Q8_0: 7, G.Q4_K: 15, G.BF16: 32}  # 15: llama.cpp's MOSTLY_Q4_K_M
    for folder, types in MODELS:
        config = json.load(open(os.path.join(LLM, folder, "config.json")))
        weights = load_file(os.path.join(LLM, folder, "model.safetensors"))
        arch = ARCHS.get(config["model_type"], config["model_type"])
        for t in types:
            block = G.BLOCK[t][0]
            tensors = [(name, t if w.ndim == 2 and w.shape[-1] % block == 0 else (G.F32 if w.ndim == 1 else G.F16), w)
                       for name, w in gguf_tensors(config, weights, arch)]
            if t == G.Q4_K:  # Q4_K_M's mix, as llama.cpp quantises: the output matrix Q6_K
                tensors = [(n, G.Q6_K if n == "output.weight" else tt, w) for n, tt, w in tensors]
            path = os.path.join(OUT, f"{folder}.{G.NAMES[t].lower()}.gguf")
            G.write_gguf(path, model_metadata(config, arch, file_types[t]), tensors)
            errors = {}  # each type's relative rms rounding error, |decoded - w| / |w| over its matrices
            for _, tt, w in tensors:
                x = np.asarray(w, dtype=np.float32)
                d = G.dequantize(tt, G.encode(tt, x), x.shape[-1]).reshape(x.shape)
                e = errors.setdefault(G.NAMES[tt], [0.0, 0.0])
                e[0], e[1] = e[0] + float(((d - x) ** 2).sum()), e[1] + float((x ** 2).sum())
            rounding = ", ".join(f"{n} {(a / b) ** 0.5:.3g}" for n, (a, b) in errors.items() if a > 0)
            print(f"{os.path.basename(path)}: {len(tensors)} tensors, {os.path.getsize(path)} bytes"
                  + (f"; weights' relative rounding error: {rounding}" if rounding else ""))


GPT2 = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "text", "gpt2")


def convert_gpt2():
    """GPT2Model of convert_hf_to_gguf.py: Conv1D weights transposed to [out, in], the token embeddings again
    as output.weight, position_embd kept F32; the vocabulary as _set_vocab_gpt2 writes it (tokens in id order,
    <|endoftext|> a control token, merges, pre-tokenizer gpt-2, no BOS)."""
    config = json.load(open(os.path.join(GPT2, "config.json")))
    w = {k.removeprefix("transformer."): np.asarray(v, dtype=np.float32)
         for k, v in load_file(os.path.join(GPT2, "model.safetensors")).items()}
    names = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output", "ln_2": "ffn_norm",
             "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
    tensors = [("token_embd.weight", w["wte.weight"]), ("position_embd.weight", w["wpe.weight"])]
    for l in range(config["n_layer"]):
        for hf, gg in names.items():
            for kind in ("weight", "bias"):
                x = w[f"h.{l}.{hf}.{kind}"]
                tensors.append((f"blk.{l}.{gg}.{kind}", x.T.copy() if x.ndim == 2 else x))
    tensors += [("output_norm.weight", w["ln_f.weight"]), ("output_norm.bias", w["ln_f.bias"]),
                ("output.weight", w["wte.weight"])]
    vocab = json.load(open(os.path.join(GPT2, "vocab.json")))
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    merges = [m for m in open(os.path.join(GPT2, "merges.txt"), encoding="utf-8").read().split("\n")
              if m and not m.startswith("#version")]
    eos = vocab["<|endoftext|>"]
    a = "gpt2"
    meta = [("general.architecture", G.STRING, a), ("general.name", G.STRING, "attnlens gpt2 fixture"),
            (f"{a}.context_length", G.U32, config["n_ctx"]), (f"{a}.embedding_length", G.U32, config["n_embd"]),
            (f"{a}.feed_forward_length", G.U32, 4 * config["n_embd"]), (f"{a}.block_count", G.U32, config["n_layer"]),
            (f"{a}.attention.head_count", G.U32, config["n_head"]),
            (f"{a}.attention.layer_norm_epsilon", G.F32V, float(config["layer_norm_epsilon"])),
            ("tokenizer.ggml.model", G.STRING, "gpt2"), ("tokenizer.ggml.pre", G.STRING, "gpt-2"),
            ("tokenizer.ggml.tokens", G.ARRAY, (G.STRING, tokens)),
            ("tokenizer.ggml.token_type", G.ARRAY, (G.I32, [3 if i == eos else 1 for i in range(len(tokens))])),
            ("tokenizer.ggml.merges", G.ARRAY, (G.STRING, merges)),
            ("tokenizer.ggml.bos_token_id", G.U32, eos), ("tokenizer.ggml.eos_token_id", G.U32, eos),
            ("tokenizer.ggml.add_bos_token", G.BOOL, False)]
    for t, file_type in [(G.F32, 0), (G.Q8_0, 7)]:
        typed = [(n, t if x.ndim == 2 and n != "position_embd.weight" else G.F32, x) for n, x in tensors]
        path = os.path.join(OUT, f"gpt2.{G.NAMES[t].lower()}.gguf")
        G.write_gguf(path, meta + [("general.file_type", G.U32, file_type)], typed)
        print(f"{os.path.basename(path)}: {len(typed)} tensors, {os.path.getsize(path)} bytes")


def fuzz_seed():
    """tests/fuzz/corpus/fuzz_gguf/spm-gemma3.gguf: gemma3 metadata with a per-layer sliding pattern, a tiny
    SentencePiece vocabulary (scores, byte pieces) and one rope_freqs tensor, for the fuzzer to mutate."""
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581", "a", "b", "\u2581a", "ab"]
    types = [2, 3, 3] + [6] * 256 + [1] * 5
    scores = [0.0] * 259 + [-1.0, -2.0, -3.0, -4.0, -5.0]
    a = "gemma3"
    meta = [("general.architecture", G.STRING, a), (f"{a}.embedding_length", G.U32, 8),
            (f"{a}.block_count", G.U32, 2), (f"{a}.attention.head_count", G.U32, 2),
            (f"{a}.feed_forward_length", G.U32, 8), (f"{a}.context_length", G.U32, 16),
            (f"{a}.attention.sliding_window", G.U32, 4),
            (f"{a}.attention.sliding_window_pattern", G.ARRAY, (G.BOOL, [True, False])),
            ("tokenizer.ggml.model", G.STRING, "llama"), ("tokenizer.ggml.tokens", G.ARRAY, (G.STRING, pieces)),
            ("tokenizer.ggml.scores", G.ARRAY, (G.F32V, scores)), ("tokenizer.ggml.token_type", G.ARRAY, (G.I32, types)),
            ("tokenizer.ggml.add_space_prefix", G.BOOL, False)]
    path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fuzz", "corpus", "fuzz_gguf", "spm-gemma3.gguf")
    G.write_gguf(path, meta, [("rope_freqs.weight", G.F32, np.ones(2, dtype=np.float32)),
                              ("token_embd.weight", G.F32, np.zeros((len(pieces), 8), dtype=np.float32))])
    print(f"{os.path.basename(path)}: {os.path.getsize(path)} bytes")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261206)
    tensors, golden = [], {}
    for t in TYPES:
        name = "quant." + G.NAMES[t].lower()
        x = values(rng)
        tensors.append((name, t, x))
    tensors.append(("vector.f32", G.F32, rng.normal(size=(7,)).astype(np.float32)))
    tensors.append(("cube.q8_0", G.Q8_0, rng.normal(size=(2, 2, 64)).astype(np.float32)))
    for name, t, x in tensors:
        data = G.encode(t, x)
        golden[name + ".original"] = x
        golden[name + ".decoded"] = G.dequantize(t, data, x.shape[-1]).reshape(x.shape).astype(np.float32)
    metadata = [
        ("general.architecture", G.STRING, "llama"),
        ("general.name", G.STRING, "quants fixture ✓"),
        ("general.alignment", G.U32, 64),
        ("test.u8", G.U8, 200),
        ("test.i8", G.I8, -100),
        ("test.u16", G.U16, 60000),
        ("test.i16", G.I16, -30000),
        ("test.u32", G.U32, 4000000000),
        ("test.i32", G.I32, -2000000000),
        ("test.u64", G.U64, 2**40),
        ("test.i64", G.I64, -(2**40)),
        ("test.f32", G.F32V, 0.25),
        ("test.f64", G.F64V, 1e-300),
        ("test.bool", G.BOOL, True),
        ("test.strings", G.ARRAY, (G.STRING, ["a", "Ġb", "", "<|endoftext|>"])),
        ("test.floats", G.ARRAY, (G.F32V, [0.5, -1.0, 3.0])),
        ("test.ints", G.ARRAY, (G.I32, [1, -2, 3, 4])),
        ("test.empty", G.ARRAY, (G.U8, [])),
        ("test.nested", G.ARRAY, (G.ARRAY, [(G.U8, [1, 2]), (G.STRING, ["x"])])),
    ]
    G.write_gguf(os.path.join(OUT, "quants.gguf"), metadata, tensors, alignment=64)
    save_file(golden, os.path.join(OUT, "quants.golden.safetensors"))
    for name, t, x in tensors:
        err = np.abs(golden[name + ".decoded"] - x).max()
        print(f"{name:14s} {G.NAMES[t]:5s} max |decoded - original| {err:.4g}")
    convert_models()
    convert_gpt2()
    fuzz_seed()


if __name__ == "__main__":
    main()
