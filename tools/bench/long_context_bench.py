#!/usr/bin/python3
"""Issue 40's long-context numbers: a Qwen2.5-0.5B-shaped bf16 folder (tools/bench/llm_bench.py's, written once)
and a 4 096-token prompt, the attention kept on demand (every head of it would be 22.5 GB captured).

  /usr/bin/python3 tools/bench/long_context_bench.py [--cli build/release/app/attnlens-cli]
      [--gui build/release/app/attnlens] [--out /tmp/attnlens-llm-bench] [--tokens 4096]

The prompt is the longest word prefix of llm_bench's paragraph, repeated, that is at most --tokens tokens
(`attnlens-cli tokenize`).
  core   `attnlens-cli bench --text T --repeat 1 --warmup 0`: the prompt through the KV cache as the Text page runs
         it (every head kept, the last position's logits), attention_mb (what the kept attention holds) and
         head_map_ms (median time to make one (layer, head) map [T, T] from it); the command's peak resident
         memory (getrusage of the child);
  gui    `attnlens --bench-ui --page 4` offscreen on the same folder and text: run until its result, then until its
         first map is shown, a second's look at it, (layer, head) switch (median and slowest of 10), zoom step, pan
         step and hover, each until the matrix is repainted; the longest GUI stall while the run was on the worker;
         the window's peak resident memory.
stdout: one JSON object, with issue 40's goals beside.
"""
import argparse
import json
import os
import re
import subprocess
import sys

os.environ.setdefault("ATTNLENS_THREADS", "1")  # the engine on one thread, as the peer (`attnlens-cli --threads`)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import llm_bench  # noqa: E402

PEAK = ("import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stderr.write(r.stderr)\n"
        "print(r.stdout)\n"
        "print('PEAK_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(r.returncode)\n")


def with_peak(cmd, env=None):
    """stdout of cmd and its peak resident memory in MB, measured in a fresh child."""
    r = subprocess.run([sys.executable, "-c", PEAK] + cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed: " + " ".join(cmd[:4]) + " …\n" + r.stderr[-2000:])
    out, peak = r.stdout.rsplit("PEAK_KB", 1)
    return out, int(peak) / 1024


def long_prompt(cli, folder, limit):
    text, ids = llm_bench.prompt_of(cli, folder, limit)
    return text, len(ids)


def gui_numbers(stdout):
    found = {}
    for key, pattern in {"switch_ms": r"switch \(layer, head\).*median\s+([\d.]+)",
                         "switch_max_ms": r"switch \(layer, head\).*max\s+([\d.]+)",
                         "zoom_ms": r"zoom step.*median\s+([\d.]+)",
                         "pan_ms": r"pan step.*median\s+([\d.]+)",
                         "hover_ms": r"hover a row.*median\s+([\d.]+)",
                         "run_result_ms": r"load \+ run -> result\s+([\d.]+)",
                         "first_map_ms": r"result -> its map shown\s+([\d.]+)",
                         "longest_stall_ms": r"longest GUI stall:\s+([\d.]+)"}.items():
        m = re.search(pattern, stdout)
        if m:
            found[key] = float(m.group(1))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--gui", default=os.path.join(ROOT, "build", "release", "app", "attnlens"))
    ap.add_argument("--out", default="/tmp/attnlens-llm-bench")
    ap.add_argument("--tokens", type=int, default=4096)
    args = ap.parse_args()
    folder = llm_bench.make_folder(args.out)
    text, tokens = long_prompt(args.cli, folder, args.tokens)
    out, peak = with_peak([args.cli, "bench", "--model", folder, "--text", text, "--repeat", "1", "--warmup", "0"])
    core = json.loads(out)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out, gui_peak = with_peak([args.gui, "--bench-ui", "--page", "4", "--size", "1400x900", "--model", folder,
                               "--input", text], env=env)
    weights_mb = os.path.getsize(os.path.join(folder, "model.safetensors")) / 2**20
    result = {"tokens": tokens, "weights_mb": weights_mb,
              "core": {"prefill_ms": core["median_ms"], "attention_mb": core.get("attention_mb"),
                       "attention_on_demand": core.get("attention_on_demand"),
                       "head_map_ms": core.get("head_map_ms"), "peak_mb": peak},
              "gui": dict(gui_numbers(out), peak_mb=gui_peak),
              "goals": {"peak_mb": weights_mb + 2048, "switch_ms": 150, "switch_max_ms": 150, "zoom_ms": 16, "pan_ms": 16, "hover_ms": 16,
                        "longest_stall_ms": 100}}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
