#!/usr/bin/python3
"""Thread scaling of the engine (issue 45): the same `attnlens-cli bench` run at 1 and at N threads (`--threads`,
every subcommand's option), alternated for --rounds rounds, each setting keeping its best median, on random
weights in the real shapes, every attention head captured:

  vit-b16        ViT-B/16 forward, 224x224 (make_vit_sized.py's folder)                     bench --image
  bert-base      BERT-base forward over 128 tokens (text_bench.py's bert-base-sized folder)    bench --text
  qwen-prefill   Qwen2.5-0.5B-shaped prefill of 512 tokens, bf16 weights (llm_bench.py's folder)
                                                                           bench --text (prompt_ms)
  unet           UNet2DModel, ddpm-cifar10-32 shape, one step (unet_bench.py's folder)         bench --sample

  /usr/bin/python3 tools/bench/thread_bench.py [--cli build/release/app/attnlens-cli] [--out /tmp/attnlens-thread-bench]
      [--threads 2] [--repeat 5] [--rounds 2] [--only vit-b16,bert-base,qwen-prefill,unet] [--json FILE]

The folders are written once (the makers need torch, as the other benches). stdout: a Markdown table (ms at 1
thread, ms at N, speed-up) with the machine's CPU model, cores and load average before and after.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ROWS = ("vit-b16", "bert-base", "qwen-prefill", "unet")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def ensure_folders(out, rows):
    """Each row's model folder and input (written by the other benches' makers), as {row: (args, key)}."""
    os.makedirs(out, exist_ok=True)
    sys.path.insert(0, HERE)
    jobs = {}
    if "vit-b16" in rows:
        vit = os.path.join(out, "vit")
        if not os.path.isfile(os.path.join(vit, "vit-b16", "model.safetensors")):
            subprocess.run([sys.executable, os.path.join(HERE, "make_vit_sized.py"), vit], check=True)
        jobs["vit-b16"] = (["--model", os.path.join(vit, "vit-b16"), "--image", os.path.join(vit, "bench.png")],
                           "forward_ms")
    if "bert-base" in rows:
        import text_bench
        folder = text_bench.make_bert(out)
        words = text_bench.TEXT.split()
        jobs["bert-base"] = (["--model", folder, "--text", " ".join(words[:126])], "median_ms")
    if "qwen-prefill" in rows:
        import llm_bench
        folder = llm_bench.make_folder(out)
        text = " ".join([llm_bench.TEXT] * 8)
        ids = llm_bench.tokenize(args_cli, folder, text)
        if len(ids) < 512:
            raise SystemExit(f"the prompt has {len(ids)} tokens, fewer than 512")
        words = text.split()
        lo, hi = 1, len(words)  # the longest word prefix of at most 512 tokens
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if len(llm_bench.tokenize(args_cli, folder, " ".join(words[:mid]))) <= 512:
                lo = mid
            else:
                hi = mid - 1
        jobs["qwen-prefill"] = (["--model", folder, "--text", " ".join(words[:lo]), "--new-tokens", "1"],
                                "prompt_ms")
    if "unet" in rows:
        import unet_bench
        folder = os.path.join(out, unet_bench.SHAPE)
        if not os.path.isfile(os.path.join(folder, "diffusion_pytorch_model.safetensors")):
            unet_bench.write_fixture(out)
        jobs["unet"] = (["--model", folder, "--sample", os.path.join(out, "sample.npy"), "--timestep", "500"],
                        "median_ms")
    return jobs


def run(cli, job, threads, repeat):
    argv, key = job
    r = subprocess.run([cli, "bench", *argv, "--repeat", str(repeat), "--threads", str(threads)], check=True,
                       capture_output=True, text=True)
    j = json.loads(r.stdout.strip().splitlines()[-1])
    if j.get("threads") != threads:
        raise SystemExit(f"asked for {threads} threads, the engine reports {j.get('threads')}")
    return float(j[key])


def main():
    global args_cli
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--out", default="/tmp/attnlens-thread-bench")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default=",".join(ROWS))
    ap.add_argument("--json")
    args = ap.parse_args()
    args_cli = args.cli
    rows = [r for r in args.only.split(",") if r]
    unknown = set(rows) - set(ROWS)
    if unknown:
        raise SystemExit(f"unknown rows {sorted(unknown)}; known: {', '.join(ROWS)}")
    jobs = ensure_folders(args.out, rows)
    load_before = os.getloadavg()
    results = {}
    for row in rows:
        best = {1: float("inf"), args.threads: float("inf")}
        for _ in range(args.rounds):
            for t in (1, args.threads):
                best[t] = min(best[t], run(args.cli, jobs[row], t, args.repeat))
        results[row] = {"one_ms": best[1], "n_ms": best[args.threads], "speedup": best[1] / best[args.threads]}
        print(f"{row}: {best[1]:.1f} ms -> {best[args.threads]:.1f} ms", file=sys.stderr)
    machine = {"cpu": cpu_model(), "logical_cpus": os.cpu_count(), "load_before": load_before,
               "load_after": os.getloadavg()}
    print(f"{machine['cpu']}, {machine['logical_cpus']} logical CPUs, load {load_before[0]:.2f} -> "
          f"{machine['load_after'][0]:.2f}\n")
    print(f"| one run, every head captured | 1 thread | {args.threads} threads | speed-up |")
    print("|---|---|---|---|")
    for row, r in results.items():
        print(f"| {row} | {r['one_ms']:.1f} ms | {r['n_ms']:.1f} ms | **{r['speedup']:.2f}x** |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "machine": machine, "rows": results}, f, indent=1)


args_cli = None

if __name__ == "__main__":
    main()
