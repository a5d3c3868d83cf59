#!/usr/bin/python3
"""A modern decoder LLM's speed and memory against transformers' own Qwen2ForCausalLM, one thread each, every
attention head captured on both sides, random bf16 weights in the real shape of Qwen2.5-0.5B (issue 39's goals:
a 128-token prompt >= 2x faster, per generated token >= 3x faster, peak memory of `attnlens-cli text` <= 1.5 GB).

  TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/bench/llm_bench.py [--cli build/release/app/attnlens-cli]
      [--out /tmp/attnlens-llm-bench] [--repeat 3] [--new-tokens 16] [--rounds 2] [--peer-dtype bfloat16,float32] [--bf16]

The folder (--out/qwen2.5-0.5b-sized: hidden 896, 24 layers, 14 heads / 2 KV heads, head_dim 64, intermediate
4864, vocabulary 151936, tied, rope_theta 1e6, stored bfloat16 as the hub's copy is; weights N(0, 0.02), norms 1,
q/k/v biases N(0, 0.02); Qwen3's tokenizer.json from tests/data/tokenizers, which covers Qwen2.5's ids) is
written once. The prompt is the longest prefix of TEXT that is at most 128 tokens (`attnlens-cli tokenize`).
  ours   `attnlens-cli bench --model DIR --text T --new-tokens N` (prompt through the KV cache with every head
         captured and the last position's logits, then N greedy tokens, every head's new row captured), and the
         peak resident memory of `attnlens-cli text --model DIR --generate N T` (the whole command: load, run,
         JSON to stdout) as the kernel counts it (getrusage of the child);
  peer   transformers' Qwen2ForCausalLM (tag PEER_TAG from TRANSFORMERS_SRC, as tools/golden/make_llm_fixtures.py
         fetches it) loaded with from_pretrained in each --peer-dtype, eager attention, output_attentions=True and
         use_cache=True, logits_to_keep=1 (only the last position's logits, as generate() asks for them): the prompt
         in one call, then N calls of one token with the returned past_key_values; every step's attentions kept.
Each side keeps its best median over --rounds alternating rounds. stdout: one JSON object.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

os.environ.setdefault("ATTNLENS_THREADS", "1")  # the engine on one thread, as the peer (`attnlens-cli --threads`)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PEER_TAG = "v4.50.3"
CONFIG = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
          "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
          "vocab_size": 151936, "max_position_embeddings": 32768, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6,
          "hidden_act": "silu", "tie_word_embeddings": True, "use_sliding_window": False, "sliding_window": 32768,
          "max_window_layers": 21, "bos_token_id": 151643, "eos_token_id": 151643, "torch_dtype": "bfloat16"}
TEXT = ("The old lighthouse keeper climbed the spiral stairs every evening, counting each step as his father had "
        "taught him. Ships passed far out at sea, their lights blinking like slow stars, and he wrote their names in "
        "a worn leather book. One night a storm rolled in from the west, bending the grass flat against the cliffs, "
        "and the lamp flickered twice before it steadied. He wiped the glass, trimmed the wick and listened to the "
        "waves break on the rocks below, wondering whether anyone out there was watching the light as closely as "
        "he watched the sea. In the morning the fishermen came up the path with bread and news from the village, "
        "and he told them about the storm, the flickering lamp and the ship that had turned back toward the harbour.")


def make_folder(out):
    folder = os.path.join(out, "qwen2.5-0.5b-sized")
    if os.path.exists(os.path.join(folder, "model.safetensors")):
        return folder
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    sys.path.insert(0, os.path.join(HERE, "..", "golden"))
    import fast_blas  # noqa: F401
    import torch
    from safetensors_io import save_file
    os.makedirs(folder, exist_ok=True)
    c, g = CONFIG, torch.Generator().manual_seed(39)
    d, f, hd = c["hidden_size"], c["intermediate_size"], c["hidden_size"] // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * hd

    def randn(*shape):
        return (torch.randn(shape, generator=g) * 0.02).to(torch.bfloat16)
    w = {"model.embed_tokens.weight": randn(c["vocab_size"], d), "model.norm.weight": torch.ones(d, dtype=torch.bfloat16)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w.update({p + "input_layernorm.weight": torch.ones(d, dtype=torch.bfloat16),
                  p + "post_attention_layernorm.weight": torch.ones(d, dtype=torch.bfloat16),
                  p + "self_attn.q_proj.weight": randn(d, d), p + "self_attn.q_proj.bias": randn(d),
                  p + "self_attn.k_proj.weight": randn(kv, d), p + "self_attn.k_proj.bias": randn(kv),
                  p + "self_attn.v_proj.weight": randn(kv, d), p + "self_attn.v_proj.bias": randn(kv),
                  p + "self_attn.o_proj.weight": randn(d, d), p + "mlp.gate_proj.weight": randn(f, d),
                  p + "mlp.up_proj.weight": randn(f, d), p + "mlp.down_proj.weight": randn(d, f)})
    save_file(w, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(c, fh, indent=1)
    with tarfile.open(os.path.join(ROOT, "tests", "data", "tokenizers", "qwen3", "tokenizer.tar.xz")) as tar:
        for m in tar.getmembers():
            if os.path.basename(m.name) in ("tokenizer.json", "tokenizer_config.json"):
                m.name = os.path.basename(m.name)
                tar.extract(m, folder)
    return folder


def tokenize(cli, folder, text):
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        subprocess.run([cli, "tokenize", "--model", folder, "--json", tmp.name, text], check=True,
                       capture_output=True)
        with open(tmp.name) as fh:
            return json.load(fh)["ids"]


def prompt_of(cli, folder, limit):
    """The longest word prefix of TEXT (repeated as often as needed) of at most `limit` tokens, and its ids."""
    words = TEXT.split() * (limit // 100 + 2)
    lo, hi = 1, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(tokenize(cli, folder, " ".join(words[:mid]))) <= limit:
            lo = mid
        else:
            hi = mid - 1
    text = " ".join(words[:lo])
    return text, tokenize(cli, folder, text)


def ours(cli, folder, text, new_tokens, repeat, precision="fp32"):
    cmd = [cli, "bench", "--model", folder, "--text", text, "--new-tokens", str(new_tokens), "--repeat", str(repeat),
           "--precision", precision]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def ours_peak_mb(cli, folder, text, new_tokens):
    """Peak RSS of one `attnlens-cli text` run, measured in a fresh child so no other child's peak counts."""
    code = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    cmd = [sys.executable, "-c", code, cli, "text", "--model", folder, "--generate", str(new_tokens), text]
    return int(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout) / 1024


def peer(folder, ids, new_tokens, repeat, dtype):
    src = os.environ.get("TRANSFORMERS_SRC", "/tmp/llmgold")
    sys.path.insert(0, os.path.join(HERE, "..", "golden"))
    import make_llm_fixtures as mk
    hubs = sorted(d for d in os.listdir(src) if d.startswith("hub-"))
    tf = os.path.join(src, f"tf-{PEER_TAG}", "src")
    if not hubs or not os.path.isdir(os.path.join(tf, "transformers")):
        sys.exit(f"transformers {PEER_TAG} and huggingface_hub are needed under {src} (see make_llm_fixtures.py)")
    with tempfile.TemporaryDirectory(prefix="llm-bench-stubs-") as stubs:
        mk.write_stubs(stubs, hubs[-1][4:])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([stubs, os.path.join(src, hubs[-1], "src"), tf,
                                                           os.path.join(HERE, "..", "golden")]),
                   TRANSFORMERS_VERBOSITY="error", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
        arg = json.dumps({"folder": folder, "ids": ids, "new_tokens": new_tokens, "repeat": repeat, "dtype": dtype})
        run = subprocess.run([sys.executable, os.path.abspath(__file__), "--peer-worker", arg], env=env,
                             capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"the peer ({dtype}) failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def peer_worker(arg):
    a = json.loads(arg)
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    import fast_blas  # noqa: F401
    import make_llm_fixtures as mk
    mk.install_shims(PEER_TAG)
    import torch
    import transformers
    torch.set_num_threads(1)
    dtype = getattr(torch, a["dtype"])
    model = transformers.Qwen2ForCausalLM.from_pretrained(a["folder"], torch_dtype=dtype,
                                                          attn_implementation="eager").eval()
    ids = torch.tensor([a["ids"]])
    prompt, per_token = [], []
    with torch.no_grad():
        for i in range(a["repeat"] + 1):
            start = time.perf_counter()
            out = model(ids, use_cache=True, output_attentions=True, logits_to_keep=1)
            prompt_ms = (time.perf_counter() - start) * 1000
            kept, past = [out.attentions], out.past_key_values
            for _ in range(a["new_tokens"]):
                nxt = out.logits[0, -1].argmax().view(1, 1)
                out = model(nxt, past_key_values=past, use_cache=True, output_attentions=True, logits_to_keep=1)
                past = out.past_key_values
                kept.append(out.attentions)
            total = (time.perf_counter() - start) * 1000
            if i:
                prompt.append(prompt_ms)
                per_token.append((total - prompt_ms) / a["new_tokens"])
    print(json.dumps({"prompt_ms": statistics.median(prompt), "per_token_ms": statistics.median(per_token),
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main():
    if sys.argv[1:2] == ["--peer-worker"]:
        return peer_worker(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--out", default="/tmp/attnlens-llm-bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--peer-dtype", default="bfloat16,float32")
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--bf16", action="store_true", help="also time our bf16 fast mode (--precision bf16)")
    args = ap.parse_args()
    folder = make_folder(args.out)
    text, ids = prompt_of(args.cli, folder, 128)
    best = lambda new, old: new if old is None or new["per_token_ms"] < old["per_token_ms"] else old  # noqa: E731
    mine, fast, peers = None, None, {}
    for _ in range(args.rounds):
        mine = best(ours(args.cli, folder, text, args.new_tokens, args.repeat), mine)
        if args.bf16:
            fast = best(ours(args.cli, folder, text, args.new_tokens, args.repeat, "bf16"), fast)
        for dt in ([] if args.skip_peer else args.peer_dtype.split(",")):
            peers[dt] = best(peer(folder, ids, args.new_tokens, args.repeat, dt), peers.get(dt))
    result = {"model": "Qwen2.5-0.5B-shaped, random bf16 weights", "threads": 1, "prompt_tokens": len(ids),
              "new_tokens": args.new_tokens, "ours": {"prompt_ms": mine["prompt_ms"], "per_token_ms": mine["per_token_ms"],
                                                      "gemm_kernel": mine.get("gemm_kernel"),
                                                      "peak_mb_cli_text": ours_peak_mb(args.cli, folder, text, args.new_tokens)},
              "peer": {f"transformers {PEER_TAG} {dt}": p for dt, p in peers.items()}}
    if fast:
        result["ours_bf16"] = {"prompt_ms": fast["prompt_ms"], "per_token_ms": fast["per_token_ms"],
                               "parity": fast.get("parity")}
    for name, p in result["peer"].items():
        p["prompt_speedup"] = p["prompt_ms"] / mine["prompt_ms"]
        p["per_token_speedup"] = p["per_token_ms"] / mine["per_token_ms"]
        if fast:
            p["bf16_prompt_speedup"] = p["prompt_ms"] / fast["prompt_ms"]
            p["bf16_per_token_speedup"] = p["per_token_ms"] / fast["per_token_ms"]
    result["goals"] = {"prompt_speedup": 2.0, "per_token_speedup": 3.0, "peak_mb_cli_text": 1536}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
