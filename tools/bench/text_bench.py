#!/usr/bin/python3
"""Text models' speed against PyTorch, one thread each, every attention head captured on both sides, random
weights in the real shapes (issue 24's goals: bert-base forward over 128 tokens >= 1.3x faster; gpt2 greedy
per generated token over a 128-token context >= 3x faster).

  /usr/bin/python3 tools/bench/text_bench.py [--cli build/release/app/attnlens-cli] [--out /tmp/attnlens-text-bench]
      [--repeat 5] [--new-tokens 32] [--rounds 2] [--threads N] [--avx2]

Writes bert-base-sized (hidden 768, 12 layers, 12 heads, 3072, vocab 30522) and gpt2-sized (n_embd 768, 12 layers,
12 heads, vocab 50257, 1024 positions) folders to --out (hub layout; the test fixtures' tokenizers padded with
filler tokens to those vocabularies), then alternates the two sides for --rounds rounds, each keeping its best:
  ours   `attnlens-cli bench --model DIR --text T [--new-tokens N]`
  peer   PyTorch written to transformers v4.33's semantics (text_reference.py's BERT forward with
         output_attentions; GPT-2 greedy with a key/value cache appended by torch.cat, attentions of every step kept)
stdout: one JSON object per row and the speed-ups.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

# --threads N (default 1): our team (ATTNLENS_THREADS) and, unless the caller set them, torch's pool
# (OMP_NUM_THREADS) and OpenBLAS's (OPENBLAS_NUM_THREADS), sized before torch loads OpenBLAS. With N > 1 the peer's
# best layout differs by model (tools/bench/compare.py's peer_envs: torch N + OpenBLAS 1, or torch 1 +
# OpenBLAS N): run it both ways with the two variables set and keep the faster.
THREADS = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv[:-1] else "1"
os.environ["ATTNLENS_THREADS"] = THREADS
os.environ.setdefault("OPENBLAS_NUM_THREADS", THREADS)
os.environ.setdefault("OMP_NUM_THREADS", THREADS)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
os.environ.pop("OPENBLAS_CORETYPE", None)
os.environ.pop("OPENBLAS_L2_SIZE", None)  # the development shell sets this too; the peer gets OpenBLAS's own
sys.path.insert(0, HERE)
import isa_env  # noqa: F401,E402  (--avx2)
import fast_blas  # noqa: F401,E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import text_reference as ref  # noqa: E402
from safetensors_io import save_file  # noqa: E402

BERT = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
        "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        "hidden_act": "gelu", "model_type": "bert", "architectures": ["BertForMaskedLM"]}
GPT2 = {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024, "n_ctx": 1024,
        "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"], "scale_attn_weights": True, "eos_token_id": 50256, "bos_token_id": 50256}
TEXT = ("the cat sat on the mat and the dog ran to the park , hello world ! " * 20)


def randn(shape, g, scale=0.02):
    return torch.randn(shape, generator=g) * scale


def make_bert(out):
    folder = os.path.join(out, "bert-base-sized")
    if os.path.exists(os.path.join(folder, "model.safetensors")):
        return folder
    os.makedirs(folder, exist_ok=True)
    g = torch.Generator().manual_seed(1)
    c, d, inter, v = BERT, BERT["hidden_size"], BERT["intermediate_size"], BERT["vocab_size"]
    w = {"bert.embeddings.word_embeddings.weight": randn([v, d], g),
         "bert.embeddings.position_embeddings.weight": randn([c["max_position_embeddings"], d], g),
         "bert.embeddings.token_type_embeddings.weight": randn([2, d], g),
         "bert.embeddings.LayerNorm.weight": torch.ones(d), "bert.embeddings.LayerNorm.bias": torch.zeros(d)}
    for i in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        for name, shape in [("attention.self.query", [d, d]), ("attention.self.key", [d, d]), ("attention.self.value", [d, d]),
                            ("attention.output.dense", [d, d]), ("intermediate.dense", [inter, d]), ("output.dense", [d, inter])]:
            w[p + name + ".weight"] = randn(shape, g)
            w[p + name + ".bias"] = torch.zeros(shape[0])
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + ln + ".weight"], w[p + ln + ".bias"] = torch.ones(d), torch.zeros(d)
    w.update({"cls.predictions.bias": torch.zeros(v), "cls.predictions.transform.dense.weight": randn([d, d], g),
              "cls.predictions.transform.dense.bias": torch.zeros(d),
              "cls.predictions.transform.LayerNorm.weight": torch.ones(d),
              "cls.predictions.transform.LayerNorm.bias": torch.zeros(d)})
    save_file(w, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(c, f)
    with open(os.path.join(ROOT, "tests", "data", "text", "bert-mlm", "vocab.txt"), encoding="utf-8") as f:
        tokens = [t.rstrip("\n") for t in f]
    tokens += [f"[unused{i}]" for i in range(1, v - len(tokens) + 1)]
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(tokens[:v]) + "\n")
    return folder


def make_gpt2(out):
    folder = os.path.join(out, "gpt2-sized")
    if os.path.exists(os.path.join(folder, "model.safetensors")):
        return folder
    os.makedirs(folder, exist_ok=True)
    g = torch.Generator().manual_seed(2)
    c, d, v = GPT2, GPT2["n_embd"], GPT2["vocab_size"]
    p = "transformer."
    w = {p + "wte.weight": randn([v, d], g), p + "wpe.weight": randn([c["n_positions"], d], g, 0.01),
         p + "ln_f.weight": torch.ones(d), p + "ln_f.bias": torch.zeros(d)}
    for i in range(c["n_layer"]):
        q = f"{p}h.{i}."
        w.update({q + "ln_1.weight": torch.ones(d), q + "ln_1.bias": torch.zeros(d), q + "ln_2.weight": torch.ones(d),
                  q + "ln_2.bias": torch.zeros(d), q + "attn.c_attn.weight": randn([d, 3 * d], g),
                  q + "attn.c_attn.bias": torch.zeros(3 * d), q + "attn.c_proj.weight": randn([d, d], g),
                  q + "attn.c_proj.bias": torch.zeros(d), q + "mlp.c_fc.weight": randn([d, 4 * d], g),
                  q + "mlp.c_fc.bias": torch.zeros(4 * d), q + "mlp.c_proj.weight": randn([4 * d, d], g),
                  q + "mlp.c_proj.bias": torch.zeros(d)})
    save_file(w, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(c, f)
    src = os.path.join(ROOT, "tests", "data", "text", "gpt2")
    with open(os.path.join(src, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    eot = vocab.pop("<|endoftext|>")
    del eot
    for i in range(len(vocab), v - 1):
        vocab[f"<filler{i}>"] = i
    vocab["<|endoftext|>"] = v - 1
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    shutil.copy(os.path.join(src, "merges.txt"), os.path.join(folder, "merges.txt"))
    return folder


def load(folder):
    from safetensors_io import load_torch
    with open(os.path.join(folder, "config.json")) as f:
        return load_torch(os.path.join(folder, "model.safetensors")), json.load(f)


def peer_bert(folder, ids, repeat):
    w, c = load(folder)
    times = []
    with torch.no_grad():
        for i in range(repeat + 1):
            start = time.perf_counter()
            ref.bert_forward(w, c, ids, "bert.")
            if i:
                times.append((time.perf_counter() - start) * 1000)
    return {"median_ms": statistics.median(times)}


def peer_gpt2(folder, ids, new_tokens, repeat):
    """Greedy with a KV cache and every step's attentions kept, as GPT2LMHeadModel.generate(output_attentions=True)."""
    w, c = load(folder)
    p, heads, eps, d = "transformer.", c["n_head"], c["layer_norm_epsilon"], c["n_embd"]
    hd = d // heads

    def step(tokens, past, start_pos):
        t = len(tokens)
        x = w[p + "wte.weight"][torch.tensor(tokens)] + w[p + "wpe.weight"][start_pos:start_pos + t]
        attentions = []
        for layer in range(c["n_layer"]):
            q = f"{p}h.{layer}."
            a = torch.nn.functional.layer_norm(x, (d,), w[q + "ln_1.weight"], w[q + "ln_1.bias"], eps)
            qkv = torch.addmm(w[q + "attn.c_attn.bias"], a, w[q + "attn.c_attn.weight"])
            qh, kh, vh = (z.view(t, heads, hd).transpose(0, 1) for z in qkv.split(d, dim=-1))
            if past[layer] is not None:
                kh = torch.cat([past[layer][0], kh], dim=1)
                vh = torch.cat([past[layer][1], vh], dim=1)
            past[layer] = (kh, vh)
            scores = (qh @ kh.transpose(1, 2)) / math.sqrt(hd)
            if t > 1:
                m = kh.shape[1]
                causal = torch.ones(t, m, dtype=torch.bool).tril(m - t)
                scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
            probs = torch.softmax(scores, dim=-1)
            attentions.append(probs)
            ctx = (probs @ vh).transpose(0, 1).reshape(t, d)
            x = x + torch.addmm(w[q + "attn.c_proj.bias"], ctx, w[q + "attn.c_proj.weight"])
            m_ = torch.nn.functional.layer_norm(x, (d,), w[q + "ln_2.weight"], w[q + "ln_2.bias"], eps)
            h = torch.nn.functional.gelu(torch.addmm(w[q + "mlp.c_fc.bias"], m_, w[q + "mlp.c_fc.weight"]), approximate="tanh")
            x = x + torch.addmm(w[q + "mlp.c_proj.bias"], h, w[q + "mlp.c_proj.weight"])
        x = torch.nn.functional.layer_norm(x[-1:], (d,), w[p + "ln_f.weight"], w[p + "ln_f.bias"], eps)
        return x @ w[p + "wte.weight"].T, attentions

    prompt, per_token = [], []
    with torch.no_grad():
        for i in range(repeat + 1):
            past = [None] * c["n_layer"]
            start = time.perf_counter()
            logits, kept = step(ids, past, 0)
            prompt_ms = (time.perf_counter() - start) * 1000
            pos = len(ids)
            for _ in range(new_tokens):
                nxt = int(logits[-1].argmax())
                logits, att = step([nxt], past, pos)
                kept.append(att)
                pos += 1
            total = (time.perf_counter() - start) * 1000
            if i:
                prompt.append(prompt_ms)
                per_token.append((total - prompt_ms) / new_tokens)
    return {"prompt_ms": statistics.median(prompt), "per_token_ms": statistics.median(per_token)}


def ours(cli, folder, text, new_tokens, repeat):
    cmd = [cli, "bench", "--model", folder, "--text", text, "--repeat", str(repeat)]
    if new_tokens:
        cmd += ["--new-tokens", str(new_tokens)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--out", default="/tmp/attnlens-text-bench")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="threads on each side (read before the imports)")
    ap.add_argument("--avx2", action="store_true", help="both sides without AVX-512 (tools/bench/isa_env.py)")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    bert_dir, gpt_dir = make_bert(args.out), make_gpt2(args.out)
    bert_tok = ref.WordPiece(os.path.join(bert_dir, "vocab.txt"))
    words = TEXT.split()
    bert_text = ""
    for word in words:  # the longest prefix of TEXT that is at most 128 tokens with [CLS] and [SEP]
        candidate = (bert_text + " " + word) if bert_text else word
        if len(bert_tok.encode(candidate)[1]) > 128:
            break
        bert_text = candidate
    bert_ids = bert_tok.encode(bert_text)[1]
    gpt_tok = ref.ByteBpe(os.path.join(gpt_dir, "vocab.json"), os.path.join(gpt_dir, "merges.txt"))
    gpt_text, n = "", 0
    for word in words:  # the longest prefix of TEXT that is at most 128 tokens
        candidate = (gpt_text + " " + word) if gpt_text else word
        if len(gpt_tok.encode(candidate)[1]) > 128:
            break
        gpt_text = candidate
    gpt_ids = gpt_tok.encode(gpt_text)[1]
    rows = {}
    best = lambda new, old, key: new if old is None or new[key] < old[key] else old  # noqa: E731
    bert_ours = bert_peer = gpt_ours = gpt_peer = None
    for _ in range(args.rounds):
        bert_ours = best(ours(args.cli, bert_dir, bert_text, 0, args.repeat), bert_ours, "median_ms")
        bert_peer = best(peer_bert(bert_dir, bert_ids, args.repeat), bert_peer, "median_ms")
        gpt_ours = best(ours(args.cli, gpt_dir, gpt_text, args.new_tokens, args.repeat), gpt_ours, "per_token_ms")
        gpt_peer = best(peer_gpt2(gpt_dir, gpt_ids, args.new_tokens, args.repeat), gpt_peer, "per_token_ms")
    rows["bert-base forward, %d tokens (ms)" % len(bert_ids)] = {
        "ours": bert_ours["median_ms"], "pytorch": bert_peer["median_ms"], "speedup": bert_peer["median_ms"] / bert_ours["median_ms"], "goal": 1.3}
    rows["gpt2 greedy, ms per token after %d tokens" % len(gpt_ids)] = {
        "ours": gpt_ours["per_token_ms"], "pytorch": gpt_peer["per_token_ms"],
        "speedup": gpt_peer["per_token_ms"] / gpt_ours["per_token_ms"], "goal": 3.0,
        "prompt_ours_ms": gpt_ours["prompt_ms"], "prompt_pytorch_ms": gpt_peer["prompt_ms"]}
    print(json.dumps({"threads": int(THREADS), "peer_torch_threads": torch.get_num_threads(),
                      "peer_openblas_threads": int(os.environ["OPENBLAS_NUM_THREADS"]), "new_tokens": args.new_tokens, "rows": rows,
                      "gemm_kernel": bert_ours.get("gemm_kernel")}, indent=1))


if __name__ == "__main__":
    main()
