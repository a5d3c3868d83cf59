#!/usr/bin/python3
"""What GGUF's block formats cost this engine: the same random weights in the real shape of Qwen3-0.6B written as
BF16, F16, Q8_0 and Q4_K_M GGUF files, each timed by `attnlens-cli bench` (one thread, every head captured: a
128-token prompt through the KV cache, then N greedy tokens) and its peak memory measured (`attnlens-cli text`).
Block formats stay blocks in memory and are decoded row by row as a layer runs (core/models/llama_gguf.h): a
decoding step decodes every weight row once, a prompt decodes blocks of rows into a small float32 buffer.

  /usr/bin/python3 tools/bench/gguf_bench.py [--cli build/release/app/attnlens-cli] [--out /tmp/attnlens-gguf-bench]
      [--repeat 3] [--new-tokens 16] [--formats bf16,f16,q8_0,q4_k_m]

Shape (Qwen3-0.6B's config): hidden 1024, 28 layers, 16 heads / 8 KV heads, head_dim 128, q/k norms, intermediate
3072, vocabulary 151936, tied; weights N(0, 0.02), norms 1 — every matrix's rows are whole 256-value K-quant
super-blocks. Q4_K_M as llama.cpp's quantize lays it out: Q4_K matrices; Q6_K for the tied token embeddings and for
attn_v / ffn_down on its "more bits" layers (the first and last eighth, every third between); norms F32. The
vocabulary is Qwen3's real one (tests/data/tokenizers/qwen3) as tokenizer.ggml.* (pre-tokenizer qwen2).
Files are written once into --out (about 3 GB). stdout: one JSON object.
"""
import argparse
import json
import os
import subprocess
import sys
import tarfile

import numpy as np

os.environ.setdefault("ATTNLENS_THREADS", "1")  # the engine on one thread, as the peer (`attnlens-cli --threads`)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "golden"))
sys.path.insert(0, HERE)
import gguf_format as G  # noqa: E402
from llm_bench import ours_peak_mb, prompt_of  # noqa: E402

SHAPE = dict(hidden=1024, layers=28, heads=16, kv=8, head_dim=128, inner=3072, vocab=151936)
FORMATS = {"bf16": (G.BF16, 32), "f16": (G.F16, 1), "q8_0": (G.Q8_0, 7), "q4_k_m": (G.Q4_K, 15)}


def more_bits(layer, n):
    """llama.cpp's use_more_bits: Q4_K_M gives attn_v and ffn_down Q6_K on these layers."""
    return layer < n // 8 or layer >= 7 * n // 8 or (layer - n // 8) % 3 == 2


def tensors(fmt):
    s, rng = SHAPE, np.random.default_rng(44)
    base = FORMATS[fmt][0]
    d, hd, q, kv = s["hidden"], s["head_dim"], s["heads"] * s["head_dim"], s["kv"] * s["head_dim"]

    def w(rows, cols):
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02)
    out = [("token_embd.weight", G.Q6_K if fmt == "q4_k_m" else base, w(s["vocab"], d))]
    for i in range(s["layers"]):
        more = G.Q6_K if fmt == "q4_k_m" and more_bits(i, s["layers"]) else base
        p = f"blk.{i}."
        out += [(p + "attn_norm.weight", G.F32, np.ones(d, np.float32)),
                (p + "ffn_norm.weight", G.F32, np.ones(d, np.float32)),
                (p + "attn_q_norm.weight", G.F32, np.ones(hd, np.float32)),
                (p + "attn_k_norm.weight", G.F32, np.ones(hd, np.float32)),
                (p + "attn_q.weight", base, w(q, d)), (p + "attn_k.weight", base, w(kv, d)),
                (p + "attn_v.weight", more, w(kv, d)), (p + "attn_output.weight", base, w(d, q)),
                (p + "ffn_gate.weight", base, w(s["inner"], d)), (p + "ffn_up.weight", base, w(s["inner"], d)),
                (p + "ffn_down.weight", more, w(d, s["inner"]))]
    out.append(("output_norm.weight", G.F32, np.ones(d, np.float32)))
    return out


def vocabulary():
    with tarfile.open(os.path.join(ROOT, "tests", "data", "tokenizers", "qwen3", "tokenizer.tar.xz")) as tar:
        member = next(m for m in tar.getmembers() if os.path.basename(m.name) == "tokenizer.json")
        j = json.load(tar.extractfile(member))
    tokens, types = {}, {}
    for t, i in j["model"]["vocab"].items():
        tokens[i], types[i] = t, 1
    for a in j["added_tokens"]:
        tokens[a["id"]], types[a["id"]] = a["content"], 3 if a.get("special") else 4
    # padded to the embedding's rows with "[PAD<i>]" (unused) entries, as llama.cpp's converter pads to config.json's
    # vocab_size: llama.cpp refuses a file whose token list is shorter than token_embd
    n = max(max(tokens) + 1, SHAPE["vocab"])
    merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]
    eos = next(a["id"] for a in j["added_tokens"] if a["content"] == "<|im_end|>")
    return [("tokenizer.ggml.model", G.STRING, "gpt2"), ("tokenizer.ggml.pre", G.STRING, "qwen2"),
            ("tokenizer.ggml.tokens", G.ARRAY, (G.STRING, [tokens.get(i, f"[PAD{i}]") for i in range(n)])),
            ("tokenizer.ggml.token_type", G.ARRAY, (G.I32, [types.get(i, 5) for i in range(n)])),
            ("tokenizer.ggml.merges", G.ARRAY, (G.STRING, merges)),
            ("tokenizer.ggml.eos_token_id", G.U32, eos), ("tokenizer.ggml.add_bos_token", G.BOOL, False)]


def write(out, fmt):
    # v2: the token list padded to the embedding's rows (v1 files, unpadded, are refused by llama.cpp)
    path = os.path.join(out, f"qwen3-0.6b-sized-v2.{fmt}.gguf")
    if os.path.exists(path):
        return path
    s, a = SHAPE, "qwen3"
    meta = [("general.architecture", G.STRING, a), ("general.file_type", G.U32, FORMATS[fmt][1]),
            (f"{a}.context_length", G.U32, 40960), (f"{a}.embedding_length", G.U32, s["hidden"]),
            (f"{a}.block_count", G.U32, s["layers"]), (f"{a}.feed_forward_length", G.U32, s["inner"]),
            (f"{a}.attention.head_count", G.U32, s["heads"]), (f"{a}.attention.head_count_kv", G.U32, s["kv"]),
            (f"{a}.attention.key_length", G.U32, s["head_dim"]), (f"{a}.attention.value_length", G.U32, s["head_dim"]),
            (f"{a}.rope.freq_base", G.F32V, 1000000.0), (f"{a}.attention.layer_norm_rms_epsilon", G.F32V, 1e-6)]
    os.makedirs(out, exist_ok=True)
    G.write_gguf(path + ".part", meta + vocabulary(), tensors(fmt))
    os.replace(path + ".part", path)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--out", default="/tmp/attnlens-gguf-bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--formats", default="bf16,f16,q8_0,q4_k_m")
    args = ap.parse_args()
    formats = args.formats.split(",")
    paths = {f: write(args.out, f) for f in formats}
    text, ids = prompt_of(args.cli, paths[formats[0]], 128)
    result = {"model": "Qwen3-0.6B-shaped, random weights", "threads": 1, "prompt_tokens": len(ids),
              "new_tokens": args.new_tokens, "formats": {}}
    for f in formats:
        cmd = [args.cli, "bench", "--model", paths[f], "--text", text, "--new-tokens", str(args.new_tokens),
               "--repeat", str(args.repeat)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        result["formats"][f] = {"file_mb": round(os.path.getsize(paths[f]) / 2**20), "prompt_ms": r["prompt_ms"],
                                "per_token_ms": r["per_token_ms"],
                                "peak_mb_cli_text": round(ours_peak_mb(args.cli, paths[f], text, args.new_tokens))}
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
