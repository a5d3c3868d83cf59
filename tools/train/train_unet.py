#!/usr/bin/env python3
"""Train the built-in diffusion model: a class-conditional DDPM on Fashion-MNIST.

The network is tools/golden/unet_reference.py's UNet2D, which carries diffusers' UNet2DModel
parameter names and layout, so the exported folder is a diffusers pipeline folder
(model_index.json, unet/, scheduler/) that diffusers' DDPMPipeline / UNet2DModel would load.

Run with /usr/bin/python3 (Debian's torch). Resumable: the work directory holds checkpoints
(model, EMA, optimizer, step, RNG states, the training log); run the same command again to go on.

  tools/train/train_unet.py --work /tmp/unet-work --minutes 150 --export resources/models/ddpm-fashion-tiny
  tools/train/train_unet.py --work /tmp/unet-work --export-only --export resources/models/ddpm-fashion-tiny
  tools/train/train_unet.py --work /tmp/unet-work --init-from resources/models/ddpm-fashion-tiny ...
"""
import argparse
import json
import math
import os
import sys
import time

# One thread means one: OpenBLAS (behind torch's matrix products) otherwise starts a thread per core
# whatever torch.set_num_threads says (measured: 1.4 cores busy). Set before numpy / torch load it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (OPENBLAS_CORETYPE before numpy / torch load OpenBLAS)
import numpy as np  # noqa: E402
import torch  # noqa: E402

from fashion_data import CLASSES, load_split  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
import safetensors_io as st_io  # noqa: E402
import unet_reference  # noqa: E402
from unet_reference import Scheduler, UNet2D  # noqa: E402

unet_reference.LOOP_MATMUL = True  # see there: bmm is slow in Debian's torch 1.13

UNET_CONFIG = {
    "_class_name": "UNet2DModel", "_diffusers_version": "0.25.0",
    "sample_size": 28, "in_channels": 1, "out_channels": 1, "center_input_sample": False,
    "time_embedding_type": "positional", "freq_shift": 0, "flip_sin_to_cos": True,
    "down_block_types": ["DownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D"],
    "up_block_types": ["AttnUpBlock2D", "AttnUpBlock2D", "UpBlock2D"],
    "block_out_channels": [32, 64, 64], "layers_per_block": 1, "mid_block_scale_factor": 1,
    "downsample_padding": 1, "downsample_type": "conv", "upsample_type": "conv", "dropout": 0.0,
    "act_fn": "silu", "attention_head_dim": 32, "norm_num_groups": 8, "attn_norm_num_groups": None,
    "norm_eps": 1e-5, "resnet_time_scale_shift": "default", "add_attention": True,
    "class_embed_type": None, "num_class_embeds": 10, "num_train_timesteps": None,
    # Not read by diffusers (it ignores unknown keys): the class names, for Attention Lens.
    "id2label": {str(i): c for i, c in enumerate(CLASSES)},
}
SCHEDULER_CONFIG = {
    "_class_name": "DDPMScheduler", "_diffusers_version": "0.25.0",
    "num_train_timesteps": 1000, "beta_start": 0.0001, "beta_end": 0.02, "beta_schedule": "squaredcos_cap_v2",
    "trained_betas": None, "variance_type": "fixed_small", "clip_sample": True, "clip_sample_range": 1.0,
    "prediction_type": "epsilon", "thresholding": False, "dynamic_thresholding_ratio": 0.995,
    "sample_max_value": 1.0, "timestep_spacing": "leading", "steps_offset": 0, "rescale_betas_zero_snr": False,
}
MODEL_INDEX = {"_class_name": "DDPMPipeline", "_diffusers_version": "0.25.0",
               "scheduler": ["diffusers", "DDPMScheduler"], "unet": ["diffusers", "UNet2DModel"]}


def to_model_space(x_u8):
    """uint8 [N, 28, 28] -> float32 [N, 1, 28, 28] in [-1, 1]."""
    return torch.from_numpy(x_u8).float().div(127.5).sub(1.0)[:, None]


def lr_at(step, warmup, base):
    return base * min(1.0, (step + 1) / warmup)


def save_checkpoint(work, state):
    tmp = os.path.join(work, "checkpoint.pt.tmp")
    torch.save(state, tmp)
    os.replace(tmp, os.path.join(work, "checkpoint.pt"))


def export(ema_sd, record, out_dir, card_extra=""):
    os.makedirs(os.path.join(out_dir, "unet"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "scheduler"), exist_ok=True)
    with open(os.path.join(out_dir, "model_index.json"), "w", encoding="utf-8") as f:
        json.dump(MODEL_INDEX, f, indent=2)
    with open(os.path.join(out_dir, "unet", "config.json"), "w", encoding="utf-8") as f:
        json.dump(UNET_CONFIG, f, indent=2)
    with open(os.path.join(out_dir, "scheduler", "scheduler_config.json"), "w", encoding="utf-8") as f:
        json.dump(SCHEDULER_CONFIG, f, indent=2)
    st_io.save_file({k: v.float() for k, v in ema_sd.items()},
                    os.path.join(out_dir, "unet", "diffusion_pytorch_model.safetensors"),
                    metadata={"format": "pt", st_io.TRAINING_RECORD_KEY: json.dumps(record)})
    with open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8") as f:
        f.write(model_card(record, card_extra))


def model_card(rec, extra):
    nparams = rec.get("parameters", 0)
    lines = [
        "# ddpm-fashion-tiny — Attention Lens' built-in diffusion model",
        "",
        "A class-conditional DDPM trained on Fashion-MNIST by `tools/train/train_unet.py`, in diffusers'",
        "pipeline layout (`model_index.json`, `unet/`, `scheduler/`; diffusers v0.25 `UNet2DModel` +",
        "`DDPMScheduler` semantics). Generate with `attnlens-cli diffuse --class C --seed S`.",
        "",
        "## Data",
        "Fashion-MNIST (Debian's `dataset-fashion-mnist`, MIT licence, Zalando Research): the 60 000",
        "training images, 28×28 grey, scaled to [-1, 1], randomly flipped left-right. Classes:",
        ", ".join(f"{i} {c}" for i, c in enumerate(CLASSES)) + ".",
        "",
        "## Architecture",
        f"UNet2DModel, {nparams:,} parameters: block_out_channels {UNET_CONFIG['block_out_channels']},",
        f"layers_per_block {UNET_CONFIG['layers_per_block']}, down {UNET_CONFIG['down_block_types']},",
        f"up {UNET_CONFIG['up_block_types']}, attention_head_dim {UNET_CONFIG['attention_head_dim']}",
        "(2 heads at 64 channels), GroupNorm 8 groups, class embedding (10 classes) added to the time",
        "embedding. Spatial self-attention at 14×14 (contracting and expansive paths), 7×7 (contracting,",
        "bottleneck, expansive): 7 attention layers.",
        f"Scheduler: DDPM, 1000 steps, `squaredcos_cap_v2` betas, epsilon prediction, clipped x̂0.",
        "",
        "## Training",
        f"AdamW (lr {rec.get('lr')}, weight decay 0, {rec.get('warmup')} warm-up steps), batch "
        f"{rec.get('batch')}, MSE on the noise, EMA of the weights (decay {rec.get('ema_decay')}) exported.",
        f"One CPU thread (Debian's torch 1.13 + OpenBLAS). Steps: {rec.get('step', 0):,} "
        f"({rec.get('step', 0) * rec.get('batch', 0) / 60000:.1f} epochs), "
        f"{rec.get('seconds', 0) / 60:.0f} minutes of training in all.",
        "",
        "| step | epoch | minutes | loss (mean of the last 200 steps) |",
        "|---:|---:|---:|---:|",
    ]
    for row in rec.get("log", [])[-40:]:
        lines.append(f"| {row['step']} | {row['epoch']:.2f} | {row['minutes']:.0f} | {row['loss']:.4f} |")
    lines += ["", extra] if extra else []
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help="work directory (checkpoints; resumed when present)")
    ap.add_argument("--minutes", type=float, default=60.0, help="training time of this run")
    ap.add_argument("--export", help="write the pipeline folder here at the end (and at checkpoints)")
    ap.add_argument("--export-only", action="store_true", help="export the checkpoint and stop")
    ap.add_argument("--init-from", help="start from an exported folder (when the work dir holds no checkpoint)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--ema-decay", type=float, default=0.999)
    ap.add_argument("--checkpoint-minutes", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    os.makedirs(args.work, exist_ok=True)
    model = UNet2D(UNET_CONFIG)
    ema = UNet2D(UNET_CONFIG)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    ckpt_path = os.path.join(args.work, "checkpoint.pt")
    record = {"lr": args.lr, "warmup": args.warmup, "batch": args.batch, "ema_decay": args.ema_decay,
              "step": 0, "seconds": 0.0, "log": [], "parameters": sum(p.numel() for p in model.parameters())}
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    if os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        ema.load_state_dict(ck["ema"])
        opt.load_state_dict(ck["opt"])
        record = ck["record"]
        rng = np.random.default_rng()
        rng.bit_generator.state = ck["np_rng"]
        torch.set_rng_state(ck["torch_rng"])
        print(f"resumed at step {record['step']}", flush=True)
    elif args.init_from:
        path = os.path.join(args.init_from, "unet", "diffusion_pytorch_model.safetensors")
        sd = st_io.load_torch(path)
        model.load_state_dict(sd)
        ema.load_state_dict(sd)
        record = json.loads(st_io.load_metadata(path)[st_io.TRAINING_RECORD_KEY])
        record["restarts"] = record.get("restarts", 0) + 1  # optimizer state starts afresh
        print(f"initialised from {args.init_from} (step {record['step']})", flush=True)
    else:
        ema.load_state_dict(model.state_dict())
    for p in ema.parameters():
        p.requires_grad_(False)

    def do_export():
        if args.export:
            export(ema.state_dict(), record, args.export)

    if args.export_only:
        do_export()
        return

    x_u8, y = load_split("train")
    sched = Scheduler("ddpm", SCHEDULER_CONFIG)
    abar = sched.alphas_cumprod
    start = time.time()
    last_ckpt = start
    losses = []
    n = len(x_u8)
    order = rng.permutation(n)
    pos = 0
    model.train()
    while time.time() - start < args.minutes * 60:
        if pos + args.batch > n:
            order, pos = rng.permutation(n), 0
        idx = order[pos:pos + args.batch]
        pos += args.batch
        xb = x_u8[idx]
        flip = rng.random(len(idx)) < 0.5
        xb = np.where(flip[:, None, None], xb[:, :, ::-1], xb)
        x0 = to_model_space(np.ascontiguousarray(xb))
        cls = torch.from_numpy(y[idx])
        t = torch.randint(0, 1000, (len(idx),))
        noise = torch.randn_like(x0)
        a = abar[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        for g in opt.param_groups:
            g["lr"] = lr_at(record["step"], args.warmup, args.lr)
        loss = torch.nn.functional.mse_loss(model(xt, t, cls), noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            d = min(args.ema_decay, (1 + record["step"]) / (10 + record["step"]))
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.mul_(d).add_(pm.detach(), alpha=1 - d)
        record["step"] += 1
        losses.append(loss.item())
        if record["step"] % 200 == 0:
            elapsed = record["seconds"] + time.time() - start
            row = {"step": record["step"], "epoch": record["step"] * args.batch / n,
                   "minutes": elapsed / 60, "loss": float(np.mean(losses[-200:]))}
            record["log"].append(row)
            print(json.dumps(row), flush=True)
        if time.time() - last_ckpt > args.checkpoint_minutes * 60:
            seconds = record["seconds"]
            record["seconds"] = seconds + time.time() - start
            save_checkpoint(args.work, {"model": model.state_dict(), "ema": ema.state_dict(),
                                        "opt": opt.state_dict(), "record": record,
                                        "np_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()})
            do_export()
            record["seconds"] = seconds
            last_ckpt = time.time()
    record["seconds"] += time.time() - start
    save_checkpoint(args.work, {"model": model.state_dict(), "ema": ema.state_dict(), "opt": opt.state_dict(),
                                "record": record, "np_rng": rng.bit_generator.state,
                                "torch_rng": torch.get_rng_state()})
    do_export()
    print(f"done: step {record['step']}, {record['seconds'] / 60:.1f} min in all", flush=True)


if __name__ == "__main__":
    main()
