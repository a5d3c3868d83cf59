"""Tiny Stable-Diffusion-layout U-Nets (issue 41) with goldens from diffusers' OWN UNet2DConditionModel (v0.25.0 on
Debian's torch 1.13), for the C++ text-to-image tests.

    DIFFUSERS_SRC=/tmp/llmgold /usr/bin/python3 tools/golden/make_t2i_fixtures.py
    # rewrites tests/data/t2i/tiny-pipe/unet and tests/data/t2i/unet-linear-fp16

No PyPI here: diffusers comes from the `fetch` tool (github:huggingface/diffusers), huggingface_hub likewise (v0.20.3:
diffusers 0.25 imports its cached_download, gone from later hubs), unpacked with git archive:
    G=<fetched diffusers git dir>; mkdir -p /tmp/llmgold/diffusers-v0.25.0
    git --git-dir=$G archive v0.25.0 src/diffusers | tar -x -C /tmp/llmgold/diffusers-v0.25.0
    H=<fetched hub git dir>; mkdir -p /tmp/llmgold/hub-0.20.3
    git --git-dir=$H archive v0.20.3 src/huggingface_hub | tar -x -C /tmp/llmgold/hub-0.20.3
(tf-v4.33.3 as make_llm_fixtures.py says: diffusers imports transformers when present). The compiled safetensors and
tokenizers packages are replaced by make_llm_fixtures.py's stand-ins; the fetched code is never edited.

U-Nets (seeded random weights: Linear / conv ~ randn / sqrt(fan_in), to_q / to_k x QK_GAIN so rows are peaked, norms
1 + 0.1 randn, biases 0.1 randn), written by UNet2DConditionModel.save_pretrained(safe_serialization=True):
  tiny-pipe/unet      SD 1.x layout: 4 -> 4 channels, 8x8, block_out_channels [16, 32, 32], CrossAttnDownBlock2D x2 +
                      DownBlock2D, UpBlock2D + CrossAttnUpBlock2D x2, layers_per_block 2, attention_head_dim [2, 4, 4]
                      (= heads, as diffusers reads it), norm_num_groups 8, cross_attention_dim 32 (the tiny-pipe
                      text encoder's width), proj_in / proj_out 1x1 convs, float32
  unet-linear-fp16    SD 2.x traits: use_linear_projection, upcast_attention, transformer_layers_per_block 2,
                      layers_per_block [1, 2], attention_head_dim [2, 4], cross_attention_dim 24, mid_block_type
                      null, flip_sin_to_cos false, freq_shift 1, norm_eps 1e-6, stored float16 (the goldens use the
                      rounded weights in float32)
Goldens (golden.safetensors in each folder; __metadata__["golden"] JSON {"timesteps", "attentions": [{"name",
"heads", "spatial": [h, w], "cross"}, ...]}): "encoder_hidden_states" [77, D] (0.5 randn), per T in 1, 500, 981:
"t{T}.sample" [4, 8, 8] (randn), "t{T}.noise_pred" [4, 8, 8] and "t{T}.attn.{name}" [heads, q, k] for every
attention module in execution order (name: the diffusers module path, ...transformer_blocks.0.attn1 / attn2;
probabilities as diffusers' Attention.get_attention_scores returns them). sample_t500.npy [1, 4, 8, 8] and
encoder_hidden_states.npy [1, 77, D] for the CLI tests.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "t2i")
DIFFUSERS = "v0.25.0"
HUB = "hub-0.20.3"
TAG = "v4.33.3"
TIMESTEPS = [1, 500, 981]
QK_GAIN = 1.5  # to_q / to_k scale: peaked rows, yet float32 rounding stays far below the tests' 1e-4
MAX_ROUNDING = 3e-5  # diffusers' own float32 vs float64 on the same weights, checked per golden

UNETS = {  # folder: (config, stored dtype, seed)
    "tiny-pipe/unet": (dict(sample_size=8, in_channels=4, out_channels=4, block_out_channels=[16, 32, 32],
                            down_block_types=["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
                            up_block_types=["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"],
                            layers_per_block=2, attention_head_dim=[2, 4, 4], norm_num_groups=8,
                            cross_attention_dim=32), "float32", 51),
    "unet-linear-fp16": (dict(sample_size=8, in_channels=4, out_channels=4, block_out_channels=[16, 32],
                              down_block_types=["CrossAttnDownBlock2D", "DownBlock2D"],
                              up_block_types=["UpBlock2D", "CrossAttnUpBlock2D"], layers_per_block=[1, 2],
                              attention_head_dim=[2, 4], transformer_layers_per_block=2, norm_num_groups=8,
                              cross_attention_dim=24, use_linear_projection=True, upcast_attention=True,
                              mid_block_type=None, flip_sin_to_cos=False, freq_shift=1, norm_eps=1e-6),
                         "float16", 52),
}


def randomize(torch, model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            r = torch.randn(p.shape, generator=g)
            if p.dim() == 1 and "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * r)
            elif p.dim() == 1:
                p.copy_(0.1 * r)
            else:
                fan_in = p[0].numel()
                scale = QK_GAIN if (".to_q." in name or ".to_k." in name) else 1.0
                p.copy_(scale * r / fan_in ** 0.5)


def capture_attention(model):
    """Records every Attention module's probabilities, named by module path, in execution order."""
    import torch
    from diffusers.models.attention_processor import Attention
    record = []
    for name, module in model.named_modules():
        if isinstance(module, Attention):
            orig = module.get_attention_scores

            def scores(query, key, attention_mask=None, _orig=orig, _name=name, _heads=module.heads):
                # Without a mask, get_attention_scores hands torch.empty(...) to baddbmm with beta 0, and on this
                # torch that uninitialised memory's NaNs sometimes reach the scores (seen: one timestep's maps
                # all NaN). A zero mask takes the beta = 1 path: the same scores + 0.
                if attention_mask is None:
                    attention_mask = torch.zeros(query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype)
                probs = _orig(query, key, attention_mask)
                record.append((_name, probs.reshape(-1, _heads, probs.shape[1], probs.shape[2])))  # [batch, ...]
                return probs
            module.get_attention_scores = scores
    return record


def finite(x):
    if x != x or x in (float("inf"), float("-inf")):
        sys.exit(f"a float64 reference is not finite ({x})")
    return x


def check_finite(tensors, what):
    for k, v in tensors.items():
        if not bool(v.isfinite().all()):
            sys.exit(f"{what}: {k} holds non-finite values")


def write_unet(torch, diffusers, folder, config, dtype, seed):
    import numpy as np
    from safetensors_io import save_file
    model = diffusers.UNet2DConditionModel(**config).eval()
    randomize(torch, model, seed)
    model.to(getattr(torch, dtype))
    path = os.path.join(OUT, folder)
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path, safe_serialization=True)
    m = diffusers.UNet2DConditionModel.from_pretrained(path).float().eval()
    record = capture_attention(m)
    g = torch.Generator().manual_seed(seed + 1000)
    enc = 0.5 * torch.randn(1, 77, config["cross_attention_dim"], generator=g)
    m64 = diffusers.UNet2DConditionModel.from_pretrained(path).double().eval()
    tensors, layers, rounding = {"encoder_hidden_states": enc[0].contiguous()}, [], 0.0
    for t in TIMESTEPS:
        x = torch.randn(1, 4, 8, 8, generator=g)
        with torch.no_grad():
            exact = m64(x.double(), torch.tensor([t]), enc.double()).sample
        record.clear()
        with torch.no_grad():
            out = m(x, torch.tensor([t]), enc).sample
        rounding = max(rounding, finite((out.double() - exact).abs().max().item()))
        tensors[f"t{t}.sample"] = x[0].contiguous()
        tensors[f"t{t}.noise_pred"] = out[0].contiguous()
        layers = []
        for name, probs in record:
            probs = probs[0]
            tensors[f"t{t}.attn.{name}"] = probs.contiguous()
            q = probs.shape[1]
            side = int(round(q ** 0.5))
            layers.append({"name": name, "heads": probs.shape[0], "spatial": [side, side], "cross": name.endswith("attn2")})
        if t == 500:
            np.save(os.path.join(path, "sample_t500.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(path, "encoder_hidden_states.npy"), enc.numpy().astype(np.float32))
    check_finite(tensors, folder)
    meta = {"reference": f"diffusers {DIFFUSERS} UNet2DConditionModel (torch {torch.__version__.split('+')[0]})",
            "stored_dtype": dtype, "timesteps": TIMESTEPS, "attentions": layers}
    save_file(tensors, os.path.join(path, "golden.safetensors"), {"golden": json.dumps(meta)})
    size = sum(os.path.getsize(os.path.join(path, fn)) for fn in os.listdir(path))
    print(f"{folder}: {len(layers)} attention layers, {size / 1000:.1f} kB, float32 rounding {rounding:.1e}")
    if rounding > MAX_ROUNDING:
        sys.exit(f"{folder}: diffusers' float32 is {rounding:.1e} from its float64: too ill-conditioned a golden")


def write_vae(torch, diffusers, folder, seed):
    from safetensors_io import save_file
    model = diffusers.AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=[8, 16],
                                    down_block_types=["DownEncoderBlock2D"] * 2, up_block_types=["UpDecoderBlock2D"] * 2,
                                    layers_per_block=1, norm_num_groups=4, sample_size=16).eval()
    randomize(torch, model, seed)
    path = os.path.join(OUT, folder)
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path, safe_serialization=True)
    m = diffusers.AutoencoderKL.from_pretrained(path).eval()
    m64 = diffusers.AutoencoderKL.from_pretrained(path).double().eval()
    g = torch.Generator().manual_seed(seed + 1000)
    tensors, rounding = {}, 0.0
    for i in range(2):
        z = torch.randn(1, 4, 8, 8 + 4 * i, generator=g)
        with torch.no_grad():
            out = m.decode(z).sample
            rounding = max(rounding, finite((out.double() - m64.decode(z.double()).sample).abs().max().item()))
        tensors[f"case{i}.latents"] = z[0].contiguous()
        tensors[f"case{i}.decoded"] = out[0].contiguous()
    meta = {"reference": f"diffusers {DIFFUSERS} AutoencoderKL.decode (torch {torch.__version__.split('+')[0]})"}
    save_file(tensors, os.path.join(path, "golden.safetensors"), {"golden": json.dumps(meta)})
    print(f"{folder}: float32 rounding {rounding:.1e}")
    if rounding > MAX_ROUNDING:
        sys.exit(f"{folder}: too ill-conditioned a golden")


SD15_SCHEDULER = {"_class_name": "PNDMScheduler", "_diffusers_version": "0.6.0", "beta_end": 0.012,
                  "beta_schedule": "scaled_linear", "beta_start": 0.00085, "num_train_timesteps": 1000,
                  "set_alpha_to_one": False, "skip_prk_steps": True, "steps_offset": 1, "trained_betas": None,
                  "clip_sample": False}
SD2_SCHEDULER = {"_class_name": "DDIMScheduler", "_diffusers_version": "0.8.0", "beta_end": 0.012,
                 "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": False,
                 "num_train_timesteps": 1000, "prediction_type": "v_prediction", "set_alpha_to_one": False,
                 "skip_prk_steps": True, "steps_offset": 1, "trained_betas": None}
SCHEDULER_CASES = [  # (name, config, class, steps, extra config for the class)
    ("sd15-pndm10", SD15_SCHEDULER, "PNDMScheduler", 10, {}),
    ("sd15-pndm25", SD15_SCHEDULER, "PNDMScheduler", 25, {}),
    ("sd15-ddim10", SD15_SCHEDULER, "DDIMScheduler", 10, {}),
    ("sd15-euler10", SD15_SCHEDULER, "EulerDiscreteScheduler", 10, {}),
    ("sd15-euler-leading7", SD15_SCHEDULER, "EulerDiscreteScheduler", 7, {"timestep_spacing": "leading"}),
    ("sd15-dpm10", SD15_SCHEDULER, "DPMSolverMultistepScheduler", 10, {}),
    ("sd15-dpm20", SD15_SCHEDULER, "DPMSolverMultistepScheduler", 20, {}),
    ("sd15-dpm-heun-trailing12", SD15_SCHEDULER, "DPMSolverMultistepScheduler", 12,
     {"solver_type": "heun", "timestep_spacing": "trailing"}),
    ("sd15-dpm1-leading9", SD15_SCHEDULER, "DPMSolverMultistepScheduler", 9,
     {"algorithm_type": "dpmsolver", "solver_order": 1, "timestep_spacing": "leading"}),
    ("sd2v-ddim10", SD2_SCHEDULER, "DDIMScheduler", 10, {}),
    ("sd2v-pndm10", SD2_SCHEDULER, "PNDMScheduler", 10, {}),
    ("sd2v-euler10", SD2_SCHEDULER, "EulerDiscreteScheduler", 10, {}),
    ("sd2v-dpm10", SD2_SCHEDULER, "DPMSolverMultistepScheduler", 10, {}),
    ("sd2v-euler-trailing6", SD2_SCHEDULER, "EulerDiscreteScheduler", 6, {"timestep_spacing": "trailing"}),
]


def write_schedulers(torch, diffusers):
    """Trajectories of each scheduler driven by a stand-in model: out_i = 0.3 * scale_model_input(x) + 0.7 * n_i."""
    from safetensors_io import save_file
    path = os.path.join(OUT, "schedulers")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for name, config, _, _, _ in SCHEDULER_CASES:
        with open(os.path.join(path, config["_class_name"] + ("-v" if "v_prediction" in json.dumps(config) else "") +
                               ".json"), "w") as f:
            json.dump(config, f, indent=2, sort_keys=True)
    g = torch.Generator().manual_seed(71)
    noise = torch.randn(30, 4, 4, 4, generator=g)
    x0 = torch.randn(4, 4, 4, generator=g)
    tensors, cases = {"noise": noise, "x0": x0}, []
    for name, config, cls, steps, extra in SCHEDULER_CASES:
        s = getattr(diffusers, cls).from_config(dict(config, **extra))
        s.set_timesteps(steps)
        x = x0[None] * s.init_noise_sigma
        xs = [x[0].clone()]
        for i, t in enumerate(s.timesteps):
            out = 0.3 * s.scale_model_input(x, t) + 0.7 * noise[i][None]
            x = s.step(out, t, x).prev_sample
            xs.append(x[0].clone())
        tensors[f"{name}.samples"] = torch.stack(xs).float().contiguous()
        cases.append({"name": name, "config": config["_class_name"] + ("-v" if "v_prediction" in json.dumps(config)
                                                                          else "") + ".json",
                      "class": cls, "extra": extra, "steps": steps, "timesteps": [float(t) for t in s.timesteps],
                      "init_noise_sigma": float(s.init_noise_sigma)})
    meta = {"reference": f"diffusers {DIFFUSERS} schedulers (torch {torch.__version__.split('+')[0]})", "cases": cases}
    save_file(tensors, os.path.join(path, "golden.safetensors"), {"golden": json.dumps(meta)})
    print(f"schedulers: {len(cases)} trajectories")


PIPELINE_CASES = [  # (name, scheduler class or None = the folder's, steps, guidance, prompt, negative, h, w)
    ("pndm5", None, 5, 7.5, "a sneaker above a bag, a dress on the right.", "", 16, 16),
    ("euler4-wide", "EulerDiscreteScheduler", 4, 3.0, "A photo of a cat sitting on a red chair", "blurry", 16, 24),
    ("dpm6-unguided", "DPMSolverMultistepScheduler", 6, 1.0, "an oil painting of a lighthouse at night", "", 16, 16),
    ("ddim3-long", "DDIMScheduler", 3, 5.0,
     " ".join(["portrait of an astronaut riding a horse on the moon"] * 9), "low quality", 16, 16),
]


def write_pipeline(torch, diffusers, transformers):
    """model_index.json + scheduler/ for tiny-pipe (its components written above and by make_clip_fixtures.py),
    and guided trajectories from StableDiffusionPipeline.__call__ with injected initial latents."""
    import numpy as np
    from safetensors_io import save_file
    path = os.path.join(OUT, "tiny-pipe")
    tok = transformers.CLIPTokenizer.from_pretrained(os.path.join(path, "tokenizer"))
    text = transformers.CLIPTextModel.from_pretrained(os.path.join(path, "text_encoder")).eval()
    unet = diffusers.UNet2DConditionModel.from_pretrained(os.path.join(path, "unet")).eval()
    vae = diffusers.AutoencoderKL.from_pretrained(os.path.join(path, "vae")).eval()
    scheduler = diffusers.PNDMScheduler.from_config(SD15_SCHEDULER)
    pipe = diffusers.StableDiffusionPipeline(vae=vae, text_encoder=text, tokenizer=tok, unet=unet,
                                             scheduler=scheduler, safety_checker=None, feature_extractor=None,
                                             requires_safety_checker=False)
    pipe.set_progress_bar_config(disable=True)
    tmp = tempfile.mkdtemp(prefix="t2i-pipe-")
    try:
        pipe.save_pretrained(tmp, safe_serialization=True)
        shutil.copy(os.path.join(tmp, "model_index.json"), os.path.join(path, "model_index.json"))
    finally:
        shutil.rmtree(tmp)
    # scheduler/ as the hub's SD 1.5 has it (written by diffusers 0.6: no timestep_spacing, so another scheduler
    # built from it takes its own default), and the pipeline loaded back as a user loads it
    os.makedirs(os.path.join(path, "scheduler"), exist_ok=True)
    with open(os.path.join(path, "scheduler", "scheduler_config.json"), "w") as f:
        json.dump(SD15_SCHEDULER, f, indent=2, sort_keys=True)
        f.write("\n")
    pipe = diffusers.StableDiffusionPipeline.from_pretrained(path)
    pipe.set_progress_bar_config(disable=True)
    folder_scheduler = pipe.scheduler
    record = capture_attention(pipe.unet)
    gdir = os.path.join(path, "golden")
    shutil.rmtree(gdir, ignore_errors=True)
    os.makedirs(gdir)
    g = torch.Generator().manual_seed(81)
    tensors, cases = {}, []
    for name, cls, steps, guidance, prompt, negative, h, w in PIPELINE_CASES:
        pipe.scheduler = getattr(diffusers, cls).from_config(folder_scheduler.config) if cls else folder_scheduler
        latents = torch.randn(1, 4, h // 2, w // 2, generator=g)
        np.save(os.path.join(gdir, f"{name}.init_latents.npy"), latents.numpy().astype(np.float32))
        steps_latents = []

        def on_step(p, i, t, kw):
            steps_latents.append(kw["latents"][0].clone())
            return kw
        record.clear()
        with torch.no_grad():
            out = pipe(prompt, negative_prompt=negative if guidance > 1 else None, num_inference_steps=steps,
                       guidance_scale=guidance, latents=latents.clone(), height=h, width=w, output_type="np",
                       callback_on_step_end=on_step)
        cross = [(n, p) for n, p in record if n.endswith("attn2")]
        layers = len(cross) // len(steps_latents)
        tensors[f"{name}.latents"] = torch.stack(steps_latents).float().contiguous()  # [calls, 4, h/2, w/2]
        tensors[f"{name}.image"] = torch.from_numpy(out.images[0]).float().contiguous()  # [H, W, 3]
        for n, p in cross[-layers:]:  # the last call's: [uncond, cond] when guided, else [cond]; [2|1, heads, q, 77]
            tensors[f"{name}.last.{n}"] = p.contiguous()
        ids = tok(prompt, padding="max_length", max_length=77, truncation=True).input_ids
        cases.append({"name": name, "scheduler": cls or "PNDMScheduler", "steps": steps, "guidance": guidance,
                      "prompt": prompt, "negative": negative, "height": h, "width": w, "ids": ids,
                      "timesteps": [float(t) for t in pipe.scheduler.timesteps], "cross_layers": layers})
    check_finite(tensors, "tiny-pipe/golden")
    meta = {"reference": f"diffusers {DIFFUSERS} StableDiffusionPipeline (torch {torch.__version__.split('+')[0]})",
            "cases": cases}
    save_file(tensors, os.path.join(gdir, "golden.safetensors"), {"golden": json.dumps(meta)})
    print(f"tiny-pipe: {len(cases)} pipeline trajectories")


def worker():
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    import fast_blas  # noqa: F401
    import torch
    torch.set_num_threads(1)
    import safetensors.torch  # noqa: F401  (diffusers reaches it as an attribute of the package)
    import diffusers
    for folder, (config, dtype, seed) in UNETS.items():
        write_unet(torch, diffusers, folder, config, dtype, seed)
    write_vae(torch, diffusers, "tiny-pipe/vae", 61)
    write_schedulers(torch, diffusers)
    import transformers
    from transformers import tokenization_utils_base as base
    base.AddedToken.__str__ = lambda self: self.content  # as make_clip_fixtures.py (no compiled tokenizers)
    write_pipeline(torch, diffusers, transformers)


def run_with_diffusers(script, args, capture=False):
    """Runs `python3 script args` with diffusers, huggingface_hub and transformers importable from the fetched
    sources under DIFFUSERS_SRC (default /tmp/llmgold; this docstring's layout) and make_llm_fixtures.py's
    stand-ins for the compiled packages; tools/golden on the path. Shared by this script, tools/bench and
    tools/train."""
    import make_llm_fixtures
    src = os.environ.get("DIFFUSERS_SRC", "/tmp/llmgold")
    for need in [f"diffusers-{DIFFUSERS}", HUB, f"tf-{TAG}"]:
        if not os.path.isdir(os.path.join(src, need, "src")):
            sys.exit(f"no {need}/src under {src} (see tools/golden/make_t2i_fixtures.py's docstring)")
    stubs = tempfile.mkdtemp(prefix="t2i-stubs-")
    try:
        make_llm_fixtures.write_stubs(stubs, HUB[4:])
        info = os.path.join(stubs, f"transformers-{TAG[1:]}.dist-info")  # diffusers looks transformers up by its
        os.makedirs(info)                                                 # metadata before using its pipelines
        with open(os.path.join(info, "METADATA"), "w") as f:
            f.write(f"Metadata-Version: 2.1\nName: transformers\nVersion: {TAG[1:]}\n")
        path = [stubs, os.path.join(src, f"diffusers-{DIFFUSERS}", "src"), os.path.join(src, HUB, "src"),
                os.path.join(src, f"tf-{TAG}", "src"), HERE]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), TRANSFORMERS_VERBOSITY="error",
                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", DIFFUSERS_VERBOSITY="error")
        return subprocess.run([sys.executable, os.path.abspath(script)] + list(args), env=env, check=True,
                              capture_output=capture, text=True)
    finally:
        shutil.rmtree(stubs)


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker()
    run_with_diffusers(__file__, ["--worker"])


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main(sys.argv[1:])
