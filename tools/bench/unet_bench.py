#!/usr/bin/python3
"""U-Net forward timing: the C++ engine against PyTorch on google/ddpm-cifar10-32's shape (NOT committed;
written to /tmp).

    /usr/bin/python3 tools/bench/unet_bench.py [--out /tmp/attnlens-unet-bench] [--repeat 10] [--warmup 2]
        [--threads 1] [--timestep 500] [--cli build/release/app/attnlens-cli]

Writes OUT/ddpm-cifar10-32, a bare diffusers UNet2DModel folder (config.json +
diffusion_pytorch_model.safetensors, F32) with google/ddpm-cifar10-32's exact config and random
weights (unet_reference.UNet2D's default torch init under torch.manual_seed(0); 35.7 M parameters),
and OUT/sample.npy (float32 [1,3,32,32] randn, seed 0). Then, in this one process:

  1. parity: the PyTorch forward (unet_reference, reloaded from the written folder) against
     `attnlens-cli unet --model OUT/ddpm-cifar10-32 --sample OUT/sample.npy --timestep T --json OUT/unet.json`:
     max |delta| of noise_pred and of every attention layer's weights;
  2. PyTorch timings, torch.no_grad(), eval(), --threads threads: forward_captured (every attention
     captured, as the engine does) with batched matmuls (bmm, as diffusers runs it) and with
     unet_reference.LOOP_MATMUL (one plain matmul per head: faster on Debian's torch 1.13), and the
     plain forward without capture for reference. pytorch_ms = the faster captured median;
  3. `attnlens-cli bench --model OUT/ddpm-cifar10-32 --sample OUT/sample.npy --timestep T --repeat N
     --warmup W` on --threads threads (ATTNLENS_THREADS), and one JSON summary line:
     {"task": "unet", "shape": "ddpm-cifar10-32", "params", "threads", "pytorch_ms", "pytorch_bmm_ms",
      "pytorch_loop_ms", "pytorch_nocapture_ms", "attnlens_ms", "speedup": pytorch_ms / attnlens_ms}.
A missing CLI or a failing CLI command is reported and skipped; its fields are then null.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# --threads N reaches torch's pool only; OpenBLAS (the pthreads build) keeps its own, sized here before
# torch loads it (left alone it used both cores: a ViT-B forward measured 490 vs 341 ms).
_threads = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv[:-1] else "1"
os.environ.setdefault("OPENBLAS_NUM_THREADS", _threads)
os.environ.setdefault("OMP_NUM_THREADS", _threads)
os.environ.setdefault("ATTNLENS_THREADS", _threads)  # and our engine's team (`attnlens-cli --threads`)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "train"))
import fast_blas  # noqa: E402,F401  (first: sets OPENBLAS_CORETYPE before numpy / torch load OpenBLAS)

sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import unet_reference as ref  # noqa: E402
from safetensors_io import save_file  # noqa: E402

SHAPE = "ddpm-cifar10-32"
# google/ddpm-cifar10-32's unet config (the hub folder's config.json)
CONFIG = {
    "_class_name": "UNet2DModel", "_diffusers_version": "0.25.0", "act_fn": "silu", "attention_head_dim": None,
    "block_out_channels": [128, 256, 256, 256], "center_input_sample": False,
    "down_block_types": ["DownBlock2D", "AttnDownBlock2D", "DownBlock2D", "DownBlock2D"],
    "downsample_padding": 0, "flip_sin_to_cos": False, "freq_shift": 1, "in_channels": 3, "layers_per_block": 2,
    "mid_block_scale_factor": 1, "norm_eps": 1e-06, "norm_num_groups": 32, "out_channels": 3, "sample_size": 32,
    "time_embedding_type": "positional", "up_block_types": ["UpBlock2D", "UpBlock2D", "AttnUpBlock2D", "UpBlock2D"],
}
EXPECTED_PARAMS = 35.7e6


def write_fixture(out):
    folder = os.path.join(out, SHAPE)
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    model = ref.UNet2D(CONFIG)
    params = sum(p.numel() for p in model.parameters())
    print(f"UNet2D({SHAPE}): {params / 1e6:.2f} M parameters")
    if abs(params - EXPECTED_PARAMS) > 0.05e6:
        raise SystemExit(f"parameter count {params} is not ~35.7 M: the config or unet_reference changed")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")
    save_file({k: v.float() for k, v in model.state_dict().items()},
              os.path.join(folder, "diffusion_pytorch_model.safetensors"))
    sample = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(os.path.join(out, "sample.npy"), sample)
    print("wrote", folder, "and", os.path.join(out, "sample.npy"))
    return folder, params


def run_cli(cmd, timeout):
    print("$", " ".join(cmd))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  (timed out after {timeout} s; skipped)")
        return None
    if p.returncode != 0:
        print(f"  exit {p.returncode}: {(p.stderr or p.stdout).strip()}")
        return None
    if p.stderr.strip():
        print("  stderr:", p.stderr.strip())
    return p.stdout


def parity(cli, folder, sample_path, out, model, x, t):
    json_path = os.path.join(out, "unet.json")
    if os.path.exists(json_path):
        os.remove(json_path)
    if run_cli([cli, "unet", "--model", folder, "--sample", sample_path, "--timestep", str(t), "--json", json_path],
               600) is None:
        return
    with open(json_path, encoding="utf-8") as f:
        got = json.load(f)
    ref.LOOP_MATMUL = False
    with torch.no_grad():
        pred, caps = model.forward_captured(x, t)
    d = np.abs(np.asarray(got["noise_pred"], np.float32) - pred[0].numpy())
    print(f"parity  noise_pred {list(pred.shape[1:])}: max |delta| {d.max():.3e}  (max |value| "
          f"{pred.abs().max().item():.3f})")
    theirs = got.get("attentions", [])
    if len(theirs) != len(caps):
        print(f"parity  attention layers: C++ {len(theirs)}, PyTorch {len(caps)}  MISMATCH")
    by_path = {a.get("path", a.get("name")): a for a in theirs}
    worst = 0.0
    for i, (name, w) in enumerate(caps):
        a = by_path.get(name) or (theirs[i] if i < len(theirs) else None)
        if a is None:
            print(f"parity  {name}: missing in the C++ output")
            continue
        cw = np.asarray(a["weights"], np.float32)
        if cw.shape != tuple(w.shape[1:]):
            print(f"parity  {name}: shape C++ {list(cw.shape)} vs PyTorch {list(w.shape[1:])}  MISMATCH")
            continue
        dw = float(np.abs(cw - w[0].numpy()).max())
        worst = max(worst, dw)
        print(f"parity  {name} (C++ name {a.get('name')!r}) {list(cw.shape)}: max |delta| {dw:.3e}")
    print(f"parity  all attention weights: max |delta| {worst:.3e}")


def timed(fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    ms = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - start) * 1e3)
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="/tmp/attnlens-unet-bench")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timestep", type=int, default=500)
    ap.add_argument("--cli", default=os.path.normpath(os.path.join(ROOT, "build", "release", "app", "attnlens-cli")))
    args = ap.parse_args()

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))  # torch's pool: --threads, or as compare.py sets it
    os.makedirs(args.out, exist_ok=True)
    folder, params = write_fixture(args.out)
    sample_path = os.path.join(args.out, "sample.npy")
    model, _ = ref.load_folder(folder)  # the written folder, read back: what the engine reads
    model.eval()
    x = torch.from_numpy(np.load(sample_path))
    t = args.timestep
    have_cli = os.path.isfile(args.cli) and os.access(args.cli, os.X_OK)
    if not have_cli:
        print(f"note: no CLI at {args.cli}; parity and the engine timing are skipped")

    if have_cli:
        parity(args.cli, folder, sample_path, args.out, model, x, t)

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE')}, warmup {args.warmup}, repeat {args.repeat}")
    results = {}
    with torch.no_grad():
        for label, loop, capture in (("bmm", False, True), ("loop", True, True), ("nocapture", False, False)):
            ref.LOOP_MATMUL = loop
            fn = (lambda: model.forward_captured(x, t)) if capture else (lambda: model(x, t))
            results[label] = r = timed(fn, args.warmup, args.repeat)
            print(f"pytorch {label:9s} median {r['median_ms']:8.1f} ms  min {r['min_ms']:8.1f}  max {r['max_ms']:8.1f}")
    ref.LOOP_MATMUL = False

    attnlens_ms = None
    if have_cli:
        stdout = run_cli([args.cli, "bench", "--model", folder, "--sample", sample_path, "--timestep", str(t),
                          "--repeat", str(args.repeat), "--warmup", str(args.warmup)], 1800)
        if stdout is not None:
            line = next((ln for ln in reversed(stdout.splitlines()) if ln.strip().startswith("{")), None)
            try:
                got = json.loads(line)
                attnlens_ms = float(got["median_ms"])
                print("attnlens", line.strip())
            except (TypeError, ValueError, KeyError) as e:
                print(f"  could not read median_ms from the CLI's output ({e}): {stdout.strip()[:500]}")

    bmm, loop = results["bmm"]["median_ms"], results["loop"]["median_ms"]
    pytorch_ms = min(bmm, loop)
    summary = {"task": "unet", "shape": SHAPE, "params": params, "threads": args.threads,
               "pytorch_ms": round(pytorch_ms, 2), "pytorch_bmm_ms": round(bmm, 2), "pytorch_loop_ms": round(loop, 2),
               "pytorch_nocapture_ms": round(results["nocapture"]["median_ms"], 2),
               "attnlens_ms": None if attnlens_ms is None else round(attnlens_ms, 2),
               "speedup": None if not attnlens_ms else round(pytorch_ms / attnlens_ms, 3)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
