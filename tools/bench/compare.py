#!/usr/bin/python3
"""The whole speed comparison in one command: every row of the performance table, our engine
(`attnlens-cli bench`) against our PyTorch peers written to transformers' / diffusers' semantics, one
thread each, every attention head captured on both sides, random weights in the real shapes.

  /usr/bin/python3 tools/bench/compare.py [--cli build/release/app/attnlens-cli] [--out /tmp/attnlens-bench]
      [--rounds 3] [--repeat 5] [--only vit-b16,deit-s16,greedy,beam4,unet] [--markdown docs/benchmarks.md]
      [--bf16] [--threads N] [--avx2]

Rows (each side's median over --repeat runs after a warm-up; the two sides alternate for --rounds rounds
and each keeps its best round, because a shared VM's speed drifts between runs):
  vit-b16   ViT-B/16 forward, 224x224          tools/bench/vit_peer.py        bench --image
  deit-s16  DeiT-S/16 forward                   tools/bench/vit_peer.py        bench --image
  greedy    opus-mt-shaped greedy, 32 -> 32 tokens, ms per token   marian_peer.py   bench --src
  beam4     the same with beam 4, ms per step                     marian_peer.py   bench --src --beam 4
  unet      UNet2DModel, ddpm-cifar10-32 shape, one forward   tools/bench/unet_bench.py (both sides, parity)
The checkpoints are written once to --out by make_vit_sized.py, make_opus_sized.py and unet_bench.py.
Also measured: the machine (CPU, vector extensions, load average before and after), the decoder's
weight-streaming floor (bytes a step must read / this core's read bandwidth, from torch.sum over 1 GiB).

--bf16 adds our fast mode (`--precision bf16`, where the CPU has it) as a third column, with the difference
from float32 that each run measures on its own input (max |delta logits|).

Writes OUT/compare.json and OUT/compare.md (the table), prints the table; --markdown also copies it there.
"""
import argparse
import json
import os
import subprocess
import sys
import time

# --threads N (default 1): both sides' teams — torch's and OpenBLAS's pools (sized before torch loads) and ours
# (`attnlens-cli --threads`, through ATTNLENS_THREADS) — read here, before any import reaches OpenBLAS.
THREADS = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv[:-1] else "1"
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "ATTNLENS_THREADS"):
    os.environ[_var] = THREADS
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
# The peers get OpenBLAS's best kernels for this CPU, whatever the shell says: measured on an AVX-512
# machine whose environment forced OPENBLAS_CORETYPE=Haswell, the ViT-B/16 peer took 683 ms instead of 427.
os.environ.pop("OPENBLAS_CORETYPE", None)
os.environ.pop("OPENBLAS_L2_SIZE", None)  # the development shell sets this too; the peer gets OpenBLAS's own
sys.path.insert(0, HERE)
import isa_env  # noqa: F401,E402  (--avx2)
import fast_blas  # noqa: F401,E402

PY = "/usr/bin/python3"
SENTENCE = "Der Hund läuft schnell über die Straße, weil er Katzen sieht."  # 32 source tokens (</s> included)
NEW_TOKENS = 32
GOALS = {"vit-b16": 1.2, "deit-s16": 1.3, "greedy": 3.0, "beam4": 3.0, "unet": 1.5}


def load():
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def run_json(cmd, timeout=1800, env=None):
    """Runs cmd (env: variables set for it); returns the last stdout line that parses as a JSON object (None on
    failure)."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    if p.returncode != 0:
        print(f"  exit {p.returncode}: {' '.join(cmd)}\n  {(p.stderr or p.stdout).strip()[:800]}")
        return None
    for line in reversed(p.stdout.strip().splitlines()):
        try:
            obj = json.loads(line)
            if isinstance(obj, dict):
                return obj
        except ValueError:
            continue
    print(f"  no JSON from {' '.join(cmd)}: {p.stdout.strip()[:500]}")
    return None


def read_bandwidth_gbs():
    code = ("import os,time,torch; torch.set_num_threads(1); x=torch.ones(256*1024*1024); x.sum(); b=1e9\n"
            "for _ in range(5):\n t=time.perf_counter(); x.sum(); b=min(b,time.perf_counter()-t)\n"
            "print(x.numel()*4/b/1e9)")
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=300)
    try:
        return float(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def decoder_step_bytes(folder):
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        c = json.load(f)
    d, ff, layers, v = c["d_model"], c["decoder_ffn_dim"], c["decoder_layers"], c["vocab_size"]
    # per layer: self q, k, v, out; cross q, out (cross keys/values are computed once); fc1, fc2; + lm_head
    return 4 * (layers * (6 * d * d + 2 * d * ff) + v * d)


def prepare(out, only):
    vit_dir = os.path.join(out, "vit")
    if ({"vit-b16", "deit-s16"} & only) and not os.path.isfile(os.path.join(vit_dir, "deit-s16", "model.safetensors")):
        subprocess.run([PY, os.path.join(HERE, "make_vit_sized.py"), vit_dir], check=True)
    opus = os.path.join(out, "opus-sized")
    if ({"greedy", "beam4"} & only) and not os.path.isfile(os.path.join(opus, "model.safetensors")):
        subprocess.run([PY, os.path.join(HERE, "make_opus_sized.py"), "--out", opus], check=True)
    return vit_dir, opus


def rows_for(args, vit_dir, opus):
    """name -> (peer command, ours command, key in peer JSON, key in ours JSON)."""
    cli, rep = args.cli, str(args.repeat)
    image = os.path.join(vit_dir, "bench.png")
    rows = {}
    for name in ("vit-b16", "deit-s16"):
        folder = os.path.join(vit_dir, name)
        rows[name] = ([PY, os.path.join(HERE, "vit_peer.py"), folder, image, rep],
                      [cli, "bench", "--model", folder, "--image", image, "--repeat", rep], "median_ms", "forward_ms")
    for name, beams in (("greedy", 1), ("beam4", 4)):
        rows[name] = ([PY, os.path.join(HERE, "marian_peer.py"), opus, SENTENCE, "--new-tokens", str(NEW_TOKENS),
                       "--beam", str(beams), "--repeat", rep],
                      [cli, "bench", "--model", opus, "--src", SENTENCE, "--new-tokens", str(NEW_TOKENS), "--beam",
                       str(beams), "--repeat", rep], "per_token_ms", "per_token_ms")
    return rows


def peer_envs():
    """The peer's thread layouts: one thread; with --threads N, the two ways torch's pool and OpenBLAS's can share
    N threads (both at N oversubscribe the cores). Neither is best everywhere — measured at 2 threads, ViT-B: torch 2 +
    OpenBLAS 2 490 ms, torch 2 + OpenBLAS 1 308, torch 1 + OpenBLAS 2 245; the U-Net: 189 / 97 / 291 — so each
    round runs the peer both ways and keeps the faster."""
    if THREADS == "1":
        return [None]
    return [{"OMP_NUM_THREADS": THREADS, "OPENBLAS_NUM_THREADS": "1"},
            {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": THREADS}]


def fastest(runs, key):
    """The run (a JSON object or None) with the smallest value of key."""
    runs = [r for r in runs if r and r.get(key) is not None]
    return min(runs, key=lambda r: r[key]) if runs else None


def measure(args, only):
    vit_dir, opus = prepare(args.out, only)
    rows = rows_for(args, vit_dir, opus)
    results = {}
    for name in ("vit-b16", "deit-s16", "greedy", "beam4", "unet"):
        if name not in only:
            continue
        best = {"peer": None, "ours": None, "bf16": None}
        detail = {"peer": [], "ours": [], "bf16": []}
        parity = None
        for r in range(args.rounds):
            if name == "unet":
                runs = [run_json([PY, os.path.join(HERE, "unet_bench.py"), "--out", os.path.join(args.out, "unet"),
                                  "--repeat", str(args.repeat), "--cli", args.cli, "--threads", THREADS], env=e)
                        for e in peer_envs()]
                peer, ours = fastest(runs, "pytorch_ms"), fastest(runs, "attnlens_ms")
                pairs = [("peer", peer and peer.get("pytorch_ms")), ("ours", ours and ours.get("attnlens_ms"))]
            else:
                peer_cmd, ours_cmd, pk, ok = rows[name]
                peer = fastest([run_json(peer_cmd, env=e) for e in peer_envs()], pk)
                ours = run_json(ours_cmd)
                pairs = [("peer", peer and peer.get(pk)), ("ours", ours and ours.get(ok))]
                if args.bf16:
                    fast = run_json(ours_cmd + ["--precision", "bf16"])
                    pairs.append(("bf16", fast and fast.get(ok)))
                    if fast and "parity" in fast:
                        parity = fast["parity"]
                if name in ("greedy", "beam4") and peer and ours:
                    detail.setdefault("tokens", []).append((peer.get("new_tokens"), ours.get("new_tokens")))
                    detail.setdefault("encode_ms", []).append((peer.get("encode_ms"), ours.get("encode_ms")))
                if ours and "gemm_kernel" in ours:
                    detail["gemm_kernel"] = ours["gemm_kernel"]
            for side, value in pairs:
                if value is not None:
                    detail[side].append(round(value, 3))
                    best[side] = value if best[side] is None else min(best[side], value)
            print(f"{name} round {r}: " + " ".join(f"{side} {value}" for side, value in pairs), flush=True)
        ratio = best["peer"] / best["ours"] if best["peer"] and best["ours"] else None
        results[name] = {"peer_ms": best["peer"], "ours_ms": best["ours"], "speedup": ratio, "goal": GOALS[name],
                         "rounds": detail}
        if best["bf16"]:
            results[name].update({"bf16_ms": best["bf16"], "bf16_speedup": best["peer"] / best["bf16"] if best["peer"] else None,
                                  "bf16_parity": parity})
    if {"greedy", "beam4"} & only:
        bw = read_bandwidth_gbs()
        step = decoder_step_bytes(opus)
        floor = step / (bw * 1e9) * 1000.0 if bw else None
        results["decoder_floor"] = {"bytes_per_step": step, "read_gbs": bw, "floor_ms": floor}
    return results


LABELS = {"vit-b16": "ViT-B/16 forward, 224×224", "deit-s16": "DeiT-S/16 forward, 224×224",
          "greedy": "opus-mt-shaped greedy, 32 → 32 tokens, per token", "beam4": "the same with beam 4, per step",
          "unet": "UNet2DModel, ddpm-cifar10-32 shape, one forward"}


def table(results, info):
    bf16 = any("bf16_ms" in r for r in results.values() if isinstance(r, dict))
    each = "one thread" if THREADS == "1" else f"{THREADS} threads"
    head = f"| work ({each} each, every head captured) | PyTorch peer | attnlens | speedup | goal |"
    rule = "|---|---|---|---|---|"
    if bf16:
        head += " attnlens bf16 (max \\|Δ logits\\| vs fp32) |"
        rule += "---|"
    lines = [head, rule]
    for name, label in LABELS.items():
        r = results.get(name)
        if not r:
            continue
        fmt = lambda v: f"{v:.1f} ms" if v is not None else "—"  # noqa: E731
        sp = f"**{r['speedup']:.2f}×**" if r["speedup"] else "—"
        line = f"| {label} | {fmt(r['peer_ms'])} | {fmt(r['ours_ms'])} | {sp} | ≥ {r['goal']}× |"
        if bf16:
            if r.get("bf16_ms"):
                p = r.get("bf16_parity") or {}
                line += (f" {fmt(r['bf16_ms'])} ({r['bf16_speedup']:.2f}×; {p.get('max_abs_logits', float('nan')):.2g}"
                         f" of {p.get('fp32_max_abs_logits', float('nan')):.2g}) |")
            else:
                line += " — (fp32 only) |"
        lines.append(line)
    fl = results.get("decoder_floor")
    if fl and fl["floor_ms"] and results.get("greedy", {}).get("ours_ms"):
        lines.append("")
        lines.append(f"Decoder step floor: {fl['bytes_per_step'] / 1e6:.0f} MB of weights per step at "
                     f"{fl['read_gbs']:.1f} GB/s (one core's read bandwidth) = {fl['floor_ms']:.1f} ms; greedy step "
                     f"= {results['greedy']['ours_ms'] / fl['floor_ms']:.2f}× the floor.")
    lines.append("")
    lines.append(f"Machine: {info['machine']['cpu']}, {info['machine']['cores']} cores "
                 f"({', '.join(info['machine']['flags'])}); load average {info['load_before']} before, "
                 f"{info['load_after']} after; {info['peer']}; {info['date']}. Each side: median of "
                 f"{info['repeat']} runs, best of {info['rounds']} alternating rounds.")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--out", default="/tmp/attnlens-bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="vit-b16,deit-s16,greedy,beam4,unet")
    ap.add_argument("--markdown")
    ap.add_argument("--bf16", action="store_true", help="also time our bf16 fast mode")
    ap.add_argument("--threads", type=int, default=1, help="threads on each side (read before the imports)")
    ap.add_argument("--avx2", action="store_true", help="both sides without AVX-512 (read before the imports)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    unknown = only - set(GOALS)
    if unknown:
        sys.exit(f"error: unknown rows {sorted(unknown)} (expected {', '.join(GOALS)})")
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"error: no attnlens-cli at {args.cli} (build the release preset first)")
    os.makedirs(args.out, exist_ok=True)
    before = load()
    results = measure(args, only)
    torch_version = subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                                   text=True).stdout.strip()
    info = {"machine": isa_env.machine(), "load_before": before, "load_after": load(), "rounds": args.rounds,
            "repeat": args.repeat, "peer": f"torch {torch_version} + OpenBLAS "
                                            f"({os.environ.get('OPENBLAS_CORETYPE', 'auto')} kernels)",
            "date": time.strftime("%Y-%m-%d")}
    md = table(results, info)
    with open(os.path.join(args.out, "compare.json"), "w", encoding="utf-8") as f:
        json.dump({"info": info, "results": results}, f, indent=2)
    with open(os.path.join(args.out, "compare.md"), "w", encoding="utf-8") as f:
        f.write(md)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(md)
    print(md)


if __name__ == "__main__":
    main()
