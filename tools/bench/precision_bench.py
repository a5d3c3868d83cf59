#!/usr/bin/python3
"""bf16 "fast mode" per family (issue 45): the same `attnlens-cli bench` run with `--precision fp32` and with
`--precision bf16`, alternated for --rounds rounds, each keeping its best, on random weights in the real shapes,
every attention head captured; the bf16 run's "parity" (bf16 against float32 on the benchmark's own input:
core/analysis/precision_parity) gives max |Δ logits| (a U-Net: |Δ noise|) and max |Δ attention|.

  vit-b16        ViT-B/16 forward, 224x224                                   bench --image         forward_ms
  bert-base      BERT-base forward over 128 tokens (float32 checkpoint)      bench --text          median_ms
  gpt2-token     GPT-2 greedy, per generated token over a 128-token prompt    bench --text --new-tokens  per_token_ms
  qwen-prefill   Qwen2.5-0.5B-shaped prefill of 512 tokens (bf16 checkpoint, multiplied as stored)  prompt_ms
  qwen-token     the same, per generated token after that prompt (decoding stays on the exact kernel)  per_token_ms
  unet           UNet2DModel, ddpm-cifar10-32 shape, one step (convolutions and linear layers)  median_ms

  /usr/bin/python3 tools/bench/precision_bench.py [--cli build/release/app/attnlens-cli]
      [--out /tmp/attnlens-thread-bench] [--threads 1] [--repeat 5] [--rounds 2] [--only ROW,...] [--json FILE]

The folders are thread_bench.py's (written once; gpt2-sized by text_bench.py). stdout: a Markdown table (fp32 ms,
bf16 ms, speed-up, max |Δ|, the output's scale, max |Δ attention|, same result) with the CPU and oneDNN's ISA.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import thread_bench  # noqa: E402  (the folders)

ROWS = ("vit-b16", "bert-base", "gpt2-token", "qwen-prefill", "qwen-token", "unet")


def jobs_for(cli, out, rows):
    thread_bench.args_cli = cli
    base = {"vit-b16", "bert-base", "qwen-prefill", "unet"}
    wanted = set(rows) | ({"qwen-prefill"} if "qwen-token" in rows else set())
    jobs = thread_bench.ensure_folders(out, [r for r in thread_bench.ROWS if r in (wanted & base)])
    if "qwen-token" in rows:
        argv, _ = jobs["qwen-prefill"]
        jobs["qwen-token"] = (argv[:-1] + ["16"], "per_token_ms")
    if "gpt2-token" in rows:
        import text_bench
        folder = text_bench.make_gpt2(out)
        words = text_bench.TEXT.split()
        jobs["gpt2-token"] = (["--model", folder, "--text", " ".join(words[:100]), "--new-tokens", "32"],
                              "per_token_ms")
    return {r: jobs[r] for r in rows}


def run(cli, job, precision, threads, repeat):
    argv, key = job
    r = subprocess.run([cli, "bench", *argv, "--repeat", str(repeat), "--threads", str(threads), "--precision",
                        precision], check=True, capture_output=True, text=True)
    j = json.loads(r.stdout.strip().splitlines()[-1])
    if j.get("precision") != precision:
        raise SystemExit(f"asked for {precision}, the engine reports {j.get('precision')}")
    return float(j[key]), j


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--out", default="/tmp/attnlens-thread-bench")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default=",".join(ROWS))
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = [r for r in args.only.split(",") if r]
    unknown = set(rows) - set(ROWS)
    if unknown:
        raise SystemExit(f"unknown rows {sorted(unknown)}; known: {', '.join(ROWS)}")
    jobs = jobs_for(args.cli, args.out, rows)
    results, isa = {}, ""
    load_before = os.getloadavg()
    for row in rows:
        best = {"fp32": float("inf"), "bf16": float("inf")}
        parity = {}
        for _ in range(args.rounds):
            for precision in ("fp32", "bf16"):
                ms, j = run(args.cli, jobs[row], precision, args.threads, args.repeat)
                best[precision] = min(best[precision], ms)
                if precision == "bf16":
                    parity, isa = j.get("parity", {}), j.get("onednn_isa", "")
        results[row] = {"fp32_ms": best["fp32"], "bf16_ms": best["bf16"], "speedup": best["fp32"] / best["bf16"],
                        "parity": parity}
        print(f"{row}: {best['fp32']:.2f} ms -> {best['bf16']:.2f} ms", file=sys.stderr)
    cpu = thread_bench.cpu_model()
    print(f"{cpu}, oneDNN {isa}, {args.threads} thread(s), load {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}\n")
    print("| every head captured | fp32 | bf16 | speed-up | max \\|Δ\\| (output up to) | max \\|Δ attention\\| "
          "| same result |")
    print("|---|---|---|---|---|---|---|")
    for row, r in results.items():
        p = r["parity"]
        att = p.get("max_abs_attention")
        attention = "n/a" if att is None else f"{att:.3g}"
        same = ("—" if not p.get("fp32_result") and not p.get("result")
                else ("yes" if p.get("same_result") else f"no ({p.get('fp32_result')} / {p.get('result')})"))
        print(f"| {row} | {r['fp32_ms']:.2f} ms | {r['bf16_ms']:.2f} ms | **{r['speedup']:.2f}x** | "
              f"{p.get('max_abs_logits', float('nan')):.3g} {p.get('compared', '')} "
              f"({p.get('fp32_max_abs_logits', float('nan')):.3g}) | {attention} | {same} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "cpu": cpu, "onednn_isa": isa, "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
