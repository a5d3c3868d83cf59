"""Tiny seeded diffusers-layout U-Net fixtures and goldens for the C++ diffusion engine tests.

    /usr/bin/python3 tools/golden/make_unet_fixtures.py   # rewrites tests/data/unet/

Deterministic: every fixture has its own torch seed and the run is single-threaded, so rerunning
reproduces the same bytes. The reference is unet_reference.py (diffusers v0.25 UNet2DModel and
DDPM / DDIM schedulers, independent of the C++ code). Weights are random (conv / linear ~ 0.2 randn,
to_q / to_k ~ 0.5 randn so attention rows are peaked, GroupNorm weight 1 + 0.1 randn, biases
0.1 randn, class embedding 0.5 randn).

Models (diffusers layout; config.json written with every UNet2DModel key, sorted, like diffusers):
  bare-head8          bare UNet folder (config.json + diffusion_pytorch_model.safetensors, F32):
                      3 -> 3 channels, 8x8, block_out_channels [16, 32], DownBlock2D / AttnDownBlock2D,
                      attention_head_dim 8 (4 heads at 32 channels), google/ddpm-cifar10-32's
                      norm_eps 1e-6, flip_sin_to_cos false, freq_shift 1, downsample_padding 0
  bare-head8-f16      the same config, the same weights rounded to float16 and stored as F16; its
                      goldens use the rounded weights widened to float32 (and the same samples)
  cond-pipeline       DDPMPipeline folder: model_index.json, unet/{config.json,
                      diffusion_pytorch_model.safetensors}, scheduler/scheduler_config.json
                      (DDPMScheduler, squaredcos_cap_v2). UNet 1 -> 1 channel, 8x8, [8, 16, 16],
                      attention_head_dim null (one head), num_class_embeds 3, mid_block_scale_factor
                      sqrt(2), extra config key "id2label"
  center-scaleshift   bare folder, 2 -> 2 channels, 4x4, [8, 8], layers_per_block 2, attention in the
                      first down / last up block (head dim 4: 2 heads), center_input_sample true,
                      resnet_time_scale_shift "scale_shift", attn_norm_num_groups 2

Goldens, in every model folder:
  golden.safetensors  for T in 0, 500, 999: "t{T}.sample" [C,H,W] (the input, randn),
                      "t{T}.noise_pred" [C,H,W] and, per attention layer in execution order,
                      "t{T}.attn.{name}" [heads,N,N] (name: diffusers module path, e.g.
                      down_blocks.1.attentions.0, mid_block.attentions.0, up_blocks.0.attentions.1;
                      N = h*w tokens, token = y*w + x). __metadata__["golden"] is JSON:
                      {"timesteps": [0, 500, 999], "class_label": 2 or null,
                       "attentions": [{"name", "heads", "spatial": [h, w]}, ...]}
  sample_t500.npy     t500's sample as float32 [1,C,H,W] (for the CLI tests)

Trajectories (cond-pipeline/trajectories/, class label 1), the pipelines' loop exactly:
x = init_noise; for t in timesteps: x, x0 = scheduler.step(unet(x, t, 1), t, x, noise_i, eta):
  init_noise.npy      [1,1,8,8] float32
  noise/step_NNN.npy  [1,1,8,8] float32, the variance noise of loop step NNN (000..019)
  trajectories.safetensors
    ddim20.final [1,8,8]   DDIMScheduler from the pipeline's scheduler config, 20 steps, eta 0
    ddim20.image [8,8,1]   the pipeline's uint8 image of ddim20.final as float32 0..255:
                           round(clamp(x/2 + 0.5, 0, 1) * 255), HWC
    ddim10eta.final        DDIM, 10 steps, eta 0.5, noise of loop step i = noise/step_{i:03d}.npy
    ddpm10.final           DDPMScheduler, 10 steps, same noise files (none added at t == 0)
    ddpm10.x0.step0, ddpm10.x0.step9   predicted x0 at loop steps 0 and 9 [1,8,8]
    ddpm10.xt.step5        the sample fed to the U-Net at loop step 5 [1,8,8]
  __metadata__["golden"]: {"ddim20": {"timesteps", "eta"}, "ddim10eta": {...}, "ddpm10": {...},
                           "class_label": 1}
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import save_file  # noqa: E402
from unet_reference import UNet2D, Scheduler, full_config, load_folder  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "unet")
TIMESTEPS = [0, 500, 999]
DIFFUSERS_VERSION = "0.25.0"
QK_STD = 0.5


def unet_config(**kw):
    """Every UNet2DModel config key, diffusers' defaults overridden by kw (extra keys kept)."""
    c = full_config(kw)
    c.update(kw)
    return {"_class_name": "UNet2DModel", "_diffusers_version": DIFFUSERS_VERSION, **c}


def scheduler_config(**kw):
    c = {"num_train_timesteps": 1000, "beta_start": 0.0001, "beta_end": 0.02, "beta_schedule": "linear",
         "trained_betas": None, "variance_type": "fixed_small", "clip_sample": True,
         "prediction_type": "epsilon", "thresholding": False, "dynamic_thresholding_ratio": 0.995,
         "clip_sample_range": 1.0, "sample_max_value": 1.0, "timestep_spacing": "leading",
         "steps_offset": 0, "rescale_betas_zero_snr": False}
    c.update(kw)
    return {"_class_name": "DDPMScheduler", "_diffusers_version": DIFFUSERS_VERSION, **c}


def write_json(path, obj):
    """diffusers' to_json_string: sorted keys, indent 2, trailing newline."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def random_weights(model, gen):
    """Random values for every parameter, in state-dict order."""
    norms = set()
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.GroupNorm):
            norms.add(name)
    sd = {}
    for name, p in model.state_dict().items():
        module, kind = name.rsplit(".", 1)
        r = torch.randn(p.shape, generator=gen)
        if module in norms:
            v = 1.0 + 0.1 * r if kind == "weight" else 0.1 * r
        elif kind == "bias":
            v = 0.1 * r
        elif module.endswith(("to_q", "to_k")):
            v = QK_STD * r
        elif module == "class_embedding":
            v = 0.5 * r
        else:
            v = 0.2 * r
        sd[name] = v.float().contiguous()
    return sd


def build(config, seed):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = UNet2D(config)
    sd = random_weights(model, gen)
    model.load_state_dict(sd, strict=True)
    model.eval()
    return model, sd


def write_unet(folder, config, sd, dtype=torch.float32):
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "config.json"), config)
    save_file({k: v.to(dtype) for k, v in sd.items()}, os.path.join(folder, "diffusion_pytorch_model.safetensors"),
              {"format": "pt"})


def spatial_of(model):
    """(name -> (h, w)) of each attention layer's input, via forward pre-hooks on one call."""
    seen, hooks = {}, []
    for name, m in model.attention_modules():
        hooks.append(m.register_forward_pre_hook(
            lambda mod, args, name=name: seen.__setitem__(name, tuple(args[0].shape[-2:]))))
    return seen, hooks


def goldens(model, folder, samples, class_label):
    """golden.safetensors + sample_t500.npy for the samples {T: [1,C,H,W]}."""
    tensors, attn_meta = {}, None
    labels = None if class_label is None else torch.tensor([class_label], dtype=torch.long)
    seen, hooks = spatial_of(model)
    with torch.no_grad():
        for t in TIMESTEPS:
            x = samples[t]
            out, caps = model.forward_captured(x, t, labels)
            tensors[f"t{t}.sample"] = x[0]
            tensors[f"t{t}.noise_pred"] = out[0]
            for name, w in caps:
                tensors[f"t{t}.attn.{name}"] = w[0]
            meta = [{"name": name, "heads": int(w.shape[1]), "spatial": list(seen[name])} for name, w in caps]
            assert attn_meta is None or attn_meta == meta
            attn_meta = meta
    for h in hooks:
        h.remove()
    md = {"timesteps": TIMESTEPS, "class_label": class_label, "attentions": attn_meta}
    save_file({k: v.float().contiguous() for k, v in tensors.items()}, os.path.join(folder, "golden.safetensors"),
              {"format": "pt", "golden": json.dumps(md)})
    np.save(os.path.join(folder, "sample_t500.npy"), samples[500].numpy().astype(np.float32))
    return tensors, md


def random_samples(config, seed):
    gen = torch.Generator().manual_seed(seed)
    c, s = config["in_channels"], config["sample_size"]
    return {t: torch.randn(1, c, s, s, generator=gen) for t in TIMESTEPS}


def run_loop(model, sched, steps, x, label, noises, eta=0.0, record=None):
    ts = sched.set_timesteps(steps)
    labels = torch.tensor([label], dtype=torch.long)
    with torch.no_grad():
        for i, t in enumerate(ts):
            if record is not None:
                record[("xt", i)] = x.clone()
            out = model(x, t, labels)
            x, x0 = sched.step(out, t, x, noises[i], eta)
            if record is not None:
                record[("x0", i)] = x0.clone()
    return x, ts


SCHEDULER_VARIANTS = [  # (name, ddpm|ddim, steps, eta, scheduler_config overrides)
    ("ddpm_linear_large_sample", "ddpm", 6, 0.0,
     {"beta_schedule": "linear", "variance_type": "fixed_large", "prediction_type": "sample", "clip_sample": False}),
    ("ddpm_scaled_v_trailing", "ddpm", 6, 0.0,
     {"beta_schedule": "scaled_linear", "beta_start": 0.00085, "beta_end": 0.012, "prediction_type": "v_prediction",
      "timestep_spacing": "trailing"}),
    ("ddim_linspace_v_alpha0", "ddim", 6, 0.3,
     {"timestep_spacing": "linspace", "set_alpha_to_one": False, "prediction_type": "v_prediction",
      "clip_sample_range": 0.5}),
    ("ddim_offset_sample", "ddim", 7, 0.0,
     {"steps_offset": 1, "prediction_type": "sample", "beta_schedule": "linear", "clip_sample": False}),
]


def trajectories(model, sched_cfg, folder, seed, label=1):
    d = os.path.join(folder, "trajectories")
    os.makedirs(os.path.join(d, "noise"), exist_ok=True)
    gen = torch.Generator().manual_seed(seed)
    c, s = model.config["in_channels"], model.config["sample_size"]
    init = torch.randn(1, c, s, s, generator=gen)
    noises = [torch.randn(1, c, s, s, generator=gen) for _ in range(20)]
    np.save(os.path.join(d, "init_noise.npy"), init.numpy())
    for i, n in enumerate(noises):
        np.save(os.path.join(d, "noise", f"step_{i:03d}.npy"), n.numpy())
    t, md = {}, {"class_label": label}

    x, ts = run_loop(model, Scheduler("ddim", sched_cfg), 20, init, label, noises)
    t["ddim20.final"] = x[0]
    t["ddim20.image"] = ((x / 2 + 0.5).clamp(0, 1).permute(0, 2, 3, 1)[0] * 255).round()
    md["ddim20"] = {"scheduler": "DDIMScheduler", "steps": 20, "timesteps": ts, "eta": 0.0}

    x, ts = run_loop(model, Scheduler("ddim", sched_cfg), 10, init, label, noises, eta=0.5)
    t["ddim10eta.final"] = x[0]
    md["ddim10eta"] = {"scheduler": "DDIMScheduler", "steps": 10, "timesteps": ts, "eta": 0.5,
                       "noise": "noise/step_{i:03d}.npy"}

    rec = {}
    x, ts = run_loop(model, Scheduler("ddpm", sched_cfg), 10, init, label, noises, record=rec)
    t["ddpm10.final"] = x[0]
    t["ddpm10.x0.step0"] = rec[("x0", 0)][0]
    t["ddpm10.x0.step9"] = rec[("x0", 9)][0]
    t["ddpm10.xt.step5"] = rec[("xt", 5)][0]
    md["ddpm10"] = {"scheduler": "DDPMScheduler", "steps": 10, "timesteps": ts,
                    "noise": "noise/step_{i:03d}.npy"}

    # Scheduler variants over the same U-Net and noise: the other prediction types, variances, beta
    # schedules, spacings, steps_offset, set_alpha_to_one and clipping settings.
    md["variants"] = {}
    for name, kind, steps, eta, overrides in SCHEDULER_VARIANTS:
        cfg = dict(sched_cfg, **overrides)
        x, ts = run_loop(model, Scheduler(kind, cfg), steps, init, label, noises, eta=eta)
        t[f"variant.{name}.final"] = x[0]
        md["variants"][name] = {"kind": kind, "steps": steps, "eta": eta, "config": cfg, "timesteps": ts}
    save_file({k: v.float().contiguous() for k, v in t.items()}, os.path.join(d, "trajectories.safetensors"),
              {"format": "pt", "golden": json.dumps(md)})
    return t


def sanity(tag, tensors, md):
    print(f"{tag}:")
    for t in md["timesteps"]:
        npred = tensors[f"t{t}.noise_pred"]
        print(f"  t{t}: noise_pred std {npred.std().item():.3f} max|.| {npred.abs().max().item():.3f}")
        for a in md["attentions"]:
            w = tensors[f"t{t}.attn.{a['name']}"]
            err = (w.sum(-1) - 1).abs().max().item()
            assert err < 1e-5, (tag, t, a["name"], err)
            n = w.shape[-1]
            print(f"    {a['name']:26s} heads {a['heads']} {a['spatial']}  row-sum err {err:.1e}  "
                  f"mean max-prob {w.max(-1).values.mean().item():.3f} (uniform {1 / n:.3f})")


def check_reload(folder, tensors, md):
    """Reload the written folder and recompute: must be bit-identical to what was stored."""
    model, _ = load_folder(folder)
    labels = None if md["class_label"] is None else torch.tensor([md["class_label"]], dtype=torch.long)
    with torch.no_grad():
        for t in md["timesteps"]:
            out, caps = model.forward_captured(tensors[f"t{t}.sample"][None], t, labels)
            assert torch.equal(out[0], tensors[f"t{t}.noise_pred"]), folder
            for name, w in caps:
                assert torch.equal(w[0], tensors[f"t{t}.attn.{name}"]), (folder, name)


def main():
    torch.set_num_threads(1)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)

    # 1 / 2: bare-head8 (F32) and bare-head8-f16.
    head8_cfg = unet_config(
        sample_size=8, in_channels=3, out_channels=3, block_out_channels=[16, 32], layers_per_block=1,
        down_block_types=["DownBlock2D", "AttnDownBlock2D"], up_block_types=["AttnUpBlock2D", "UpBlock2D"],
        attention_head_dim=8, norm_num_groups=4, norm_eps=1e-6, flip_sin_to_cos=False, freq_shift=1,
        downsample_padding=0)
    model, sd = build(head8_cfg, 101)
    samples = random_samples(head8_cfg, 102)
    d = os.path.join(OUT, "bare-head8")
    write_unet(d, head8_cfg, sd)
    results = {"bare-head8": (d, *goldens(model, d, samples, None))}

    sd16 = {k: v.half().float() for k, v in sd.items()}
    model.load_state_dict(sd16, strict=True)
    d = os.path.join(OUT, "bare-head8-f16")
    write_unet(d, head8_cfg, sd16, torch.float16)
    results["bare-head8-f16"] = (d, *goldens(model, d, samples, None))

    # 3: cond-pipeline.
    cond_cfg = unet_config(
        sample_size=8, in_channels=1, out_channels=1, block_out_channels=[8, 16, 16], layers_per_block=1,
        down_block_types=["DownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D"],
        up_block_types=["AttnUpBlock2D", "AttnUpBlock2D", "UpBlock2D"], attention_head_dim=None,
        norm_num_groups=4, norm_eps=1e-5, num_class_embeds=3, mid_block_scale_factor=math.sqrt(2),
        flip_sin_to_cos=True, freq_shift=0, downsample_padding=1,
        id2label={"0": "circle", "1": "square", "2": "cross"})
    sched_cfg = scheduler_config(num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2",
                                 variance_type="fixed_small", clip_sample=True, clip_sample_range=1.0,
                                 prediction_type="epsilon", timestep_spacing="leading", steps_offset=0)
    model, sd = build(cond_cfg, 301)
    d = os.path.join(OUT, "cond-pipeline")
    write_json(os.path.join(d, "model_index.json"),
               {"_class_name": "DDPMPipeline", "_diffusers_version": DIFFUSERS_VERSION,
                "scheduler": ["diffusers", "DDPMScheduler"], "unet": ["diffusers", "UNet2DModel"]})
    write_unet(os.path.join(d, "unet"), cond_cfg, sd)
    write_json(os.path.join(d, "scheduler", "scheduler_config.json"), sched_cfg)
    results["cond-pipeline"] = (d, *goldens(model, d, random_samples(cond_cfg, 302), 2))
    traj = trajectories(model, sched_cfg, d, 303)

    # 4: center-scaleshift.
    cs_cfg = unet_config(
        sample_size=4, in_channels=2, out_channels=2, block_out_channels=[8, 8], layers_per_block=2,
        down_block_types=["AttnDownBlock2D", "DownBlock2D"], up_block_types=["UpBlock2D", "AttnUpBlock2D"],
        attention_head_dim=4, norm_num_groups=2, center_input_sample=True,
        resnet_time_scale_shift="scale_shift", attn_norm_num_groups=2, add_attention=True)
    model, sd = build(cs_cfg, 401)
    d = os.path.join(OUT, "center-scaleshift")
    write_unet(d, cs_cfg, sd)
    results["center-scaleshift"] = (d, *goldens(model, d, random_samples(cs_cfg, 402), None))

    with open(os.path.join(OUT, "README.md"), "w", encoding="utf-8") as f:
        f.write(README)

    # Sanity checks.
    for tag, (d, tensors, md) in results.items():
        sanity(tag, tensors, md)
        check_reload(d, tensors, md)
    print("trajectories:")
    for k, v in traj.items():
        assert torch.isfinite(v).all(), k
        print(f"  {k:18s} {list(v.shape)} min {v.min().item():8.3f} max {v.max().item():8.3f}")
    total = 0
    for dp, _, fs in sorted(os.walk(OUT)):
        for fn in sorted(fs):
            p = os.path.join(dp, fn)
            total += os.path.getsize(p)
            if "noise" not in os.path.basename(dp):
                print(f"  {os.path.relpath(p, OUT):60s} {os.path.getsize(p):8d}")
    print(f"wrote {OUT} ({total / 1024:.0f} KiB)")


README = """# U-Net (diffusers) fixtures

Tiny random-weight diffusers-layout U-Nets and their goldens, written by
`tools/golden/make_unet_fixtures.py` (deterministic: rerunning it reproduces these files byte for
byte; its module docstring documents the layout). The goldens come from
`tools/golden/unet_reference.py`, an independent PyTorch implementation of diffusers v0.25
UNet2DModel and the DDPM / DDIM schedulers.

| folder | what it is |
|---|---|
| `bare-head8/` | bare UNet folder (config.json + diffusion_pytorch_model.safetensors, F32): 3 -> 3 channels, 8x8, block_out_channels [16, 32], attention at 32 channels with head dim 8 (4 heads), google/ddpm-cifar10-32's norm_eps / flip_sin_to_cos / freq_shift / downsample_padding |
| `bare-head8-f16/` | the same config and weights stored as F16; goldens use the F16-rounded weights widened to float32, same input samples |
| `cond-pipeline/` | DDPMPipeline folder (model_index.json, unet/, scheduler/ with a squaredcos_cap_v2 DDPMScheduler): 1 channel, 8x8, [8, 16, 16], one attention head, 3 classes (id2label circle / square / cross), mid_block_scale_factor sqrt(2) |
| `center-scaleshift/` | bare folder, 2 channels, 4x4, layers_per_block 2, center_input_sample, resnet_time_scale_shift scale_shift, attn_norm_num_groups 2 |

Each folder has `golden.safetensors` (for t = 0, 500, 999: `t{T}.sample` [C,H,W], `t{T}.noise_pred`
[C,H,W], `t{T}.attn.{module path}` [heads,N,N]; `__metadata__["golden"]` lists the timesteps, the class
label and the attention layers in execution order with heads and [h, w]) and `sample_t500.npy`
(float32 [1,C,H,W]). cond-pipeline goldens use class label 2.

`cond-pipeline/trajectories/` holds denoising-loop goldens for class label 1: `init_noise.npy`,
`noise/step_NNN.npy` (the variance noise of loop step NNN) and `trajectories.safetensors`
(DDIM 20 steps eta 0 with the pipeline's uint8 image, DDIM 10 steps eta 0.5, DDPM 10 steps with
intermediate x0 / x_t).
"""


if __name__ == "__main__":
    main()
