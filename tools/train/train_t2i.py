#!/usr/bin/env python3
"""Train the built-in text-to-image model (issue 41): a tiny Stable-Diffusion-layout pipeline on captioned 2×2
compositions of Fashion-MNIST items (tools/train/t2i_data.py), with diffusers' and transformers' OWN classes
(AutoencoderKL, UNet2DConditionModel, CLIPTextModel; fetched as tools/golden/make_t2i_fixtures.py says, never
committed) so that the exported folder is what StableDiffusionPipeline loads.

Two stages, each resumable from its checkpoint in the work directory (run the same command again to go on):
  vae    AutoencoderKL, 3 → 4 latent channels, 4× smaller (block_out_channels [16, 32, 32]), L1 + 1e-6·KL on
         compositions drawn as RGB (trained on the 56×56 canvases of the first layout; convolutional, it serves
         the 64×64 ones as well: L1 0.024 on them against 0.032 on its own). --vae-from takes it from an export
  unet   the text encoder (CLIP layout: 64 wide, 2 layers, 4 heads, 77 positions, the caption vocabulary) and
         a UNet2DConditionModel on the 16×16 latents of 64×64 canvases (block_out_channels [64, 128, 128]:
         DownBlock2D at 16², cross-attention at 8² and 4² and in the mid block at 4², 4 heads; at 4×4 each 2×2
         cell of the canvas touches its own two borders, so the zero padding tells the cells apart — the first
         layout's two levels on 14×14 latents never learnt the place words) trained jointly on the noise (SD's
         scaled_linear betas, 1000 steps), the latents' scaling_factor (1 / their std, as SD's 0.18215 was
         found) measured on these canvases at the start,
         captions dropped to "" one time in ten (classifier-free guidance); EMA of both exported. The noise
         loss of a sample is weighted by 1 + min(1/SNR(t), --high-noise-weight − 1): the plain noise loss gives
         the high-noise steps, where the layout is decided, almost no gradient (there the noise ≈ the input); the
         weight is the clean picture's loss, capped. After 3,400 unweighted steps the layout followed the seed only.
         --prediction v_prediction (SD 2.x's target, v = √ᾱ·ε − √(1−ᾱ)·x₀; the scheduler config says so) weighs
         the clean picture's error at high noise as an x₀ loss (1 / (1 − ᾱ)), not ᾱ / (1 − ᾱ) as the noise loss
         does: the 16×16 layout's noise loss had not moved the probe off chance after 1,600 steps.
         --layout-weight: jointly trained, the text encoder kept the item words only (the place words changed
         the predicted picture by < 0.01 after 3,000 steps of either loss); a linear head on its pooled state
         (the first <|endoftext|>, which sees the whole caption) is trained to read the layout — per cell the
         item or empty — from every caption that names each item's cell, so the text states carry where
         things go; the head is not exported. The log's "layout_acc" is its accuracy per cell.
         --ground-weight: with the read-out alone the place-first prompts work, but in "a bag in the top left"
         the word "bag" — which in a causal encoder cannot know the place said after it — got its map in an
         empty cell (0 of 100 item-first maps in their cell, the items themselves placed right 91 of 100). A
         token grounding loss (as TokenCompose, Wang et al. 2024, does with segmentation masks) asks every
         cross-attention layer's head-mean map of each item's word to fall inside that item's cell: per word
         (1 − mass inside)², over all timesteps. The log's "ground" is the mean mass inside, "ground_hit" how
         often the layers' mean map peaks in the cell.
         Every --probe-every steps the log gains "probe": of "a bag / sneaker in the CELL" × 4 cells × 2 seeds,
         how often the picture the EMA model predicts at t = 999 is brightest in the named cell (chance 4 of 16)

    DIFFUSERS_SRC=/tmp/llmgold /usr/bin/python3 tools/train/train_t2i.py --stage vae --work /tmp/t2i-work --minutes 30
    DIFFUSERS_SRC=/tmp/llmgold /usr/bin/python3 tools/train/train_t2i.py --stage unet --work /tmp/t2i-work --minutes 95 --threads 2 \\
        --prediction v_prediction --ground-weight 0.5 --vae-from resources/models/sd-fashion-tiny --export resources/models/sd-fashion-tiny
    # the shipped model ran this in two phases: 2,754 steps without --ground-weight, then to 6,550 with it
    # (tools/train/README.md); from scratch with the grounding loss on from the start is untried
"""
import argparse
import json
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# Sized for one CPU thread: a U-Net step of batch 32 on 28×28 latents took 7–10 s here ([32, 64, 64]; the
# 784-token self-attention's backward dominates), on 14×14 latents 0.34 s ([32, 64, 64]) / 0.76 s ([64, 128]).
# On 16×16 latents with three levels [64, 128, 128]: 1.86 s with attention at 16², 0.62 s without (measured
# side by side with the two-level layout's 1.06 s on the same day), so the top level has none.
VAE_CONFIG = dict(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=[16, 32, 32],
                  down_block_types=["DownEncoderBlock2D"] * 3, up_block_types=["UpDecoderBlock2D"] * 3,
                  layers_per_block=1, norm_num_groups=8, sample_size=64)
UNET_CONFIG = dict(sample_size=16, in_channels=4, out_channels=4, block_out_channels=[64, 128, 128],
                   down_block_types=["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
                   up_block_types=["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
                   layers_per_block=1,
                   attention_head_dim=4, norm_num_groups=8, cross_attention_dim=64)
TEXT_CONFIG = dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                   max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=64)
SCHEDULER = {"_class_name": "PNDMScheduler", "beta_end": 0.012, "beta_schedule": "scaled_linear",
             "beta_start": 0.00085, "num_train_timesteps": 1000, "set_alpha_to_one": False, "skip_prk_steps": True,
             "steps_offset": 1, "trained_betas": None, "clip_sample": False}


def to_rgb(images_u8, torch):
    """[n, 64, 64] uint8 → [n, 3, 64, 64] in [-1, 1] (the pipeline's image space)."""
    x = torch.from_numpy(images_u8).float().div(127.5).sub(1.0)
    return x[:, None].expand(-1, 3, -1, -1).contiguous()


class Run:
    """Checkpoint / resume / time budget shared by both stages."""

    def __init__(self, work, name, minutes, checkpoint_minutes):
        self.path = os.path.join(work, f"{name}.pt")
        self.minutes, self.every = minutes, checkpoint_minutes * 60
        self.start = self.last = time.time()
        self.record = {"step": 0, "seconds": 0.0, "log": []}
        self.base = 0.0  # seconds trained before this process

    def resume(self, torch, modules, opt):
        if not os.path.exists(self.path):
            return False
        ck = torch.load(self.path)
        for name, m in modules.items():
            m.load_state_dict(ck[name])
        opt.load_state_dict(ck["opt"])
        self.record = ck["record"]
        self.base = self.record["seconds"]
        torch.set_rng_state(ck["torch_rng"])
        print(f"resumed {os.path.basename(self.path)} at step {self.record['step']}", flush=True)
        return True

    def going(self):
        return time.time() - self.start < self.minutes * 60

    def save(self, torch, modules, opt, force=False):
        if not force and time.time() - self.last < self.every:
            return False
        self.record["seconds"] = self.base + time.time() - self.start  # the export's card reads it
        record = dict(self.record)
        state = {name: m.state_dict() for name, m in modules.items()}
        state.update(opt=opt.state_dict(), record=record, torch_rng=torch.get_rng_state())
        torch.save(state, self.path + ".tmp")
        os.replace(self.path + ".tmp", self.path)
        self.last = time.time()
        return True

    def log(self, losses, **extra):
        row = {"step": self.record["step"], "minutes": (self.base + time.time() - self.start) / 60,
               "loss": float(sum(losses) / len(losses)), **extra}
        self.record["log"].append(row)
        print(json.dumps(row), flush=True)


def train_vae(args, torch, diffusers, data):
    vae = diffusers.AutoencoderKL(**VAE_CONFIG)
    opt = torch.optim.AdamW(vae.parameters(), lr=args.lr or 1e-3)
    run = Run(args.work, "vae", args.minutes, args.checkpoint_minutes)
    run.resume(torch, {"vae": vae}, opt)
    losses = []
    vae.train()
    while run.going():
        x = to_rgb(data.batch(args.batch)[0], torch)
        posterior = vae.encode(x).latent_dist
        recon = vae.decode(posterior.sample()).sample
        loss = (recon - x).abs().mean() + 1e-6 * posterior.kl().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        run.record["step"] += 1
        losses.append(loss.item())
        if run.record["step"] % 100 == 0:
            run.log(losses[-100:])
        run.save(torch, {"vae": vae}, opt)
    with torch.no_grad():  # the latents' spread: scaling_factor = 1 / std, as SD's was set
        vae.eval()
        z = torch.cat([vae.encode(to_rgb(data.batch(64)[0], torch)).latent_dist.mean for _ in range(8)])
        run.record["scaling_factor"] = float(1.0 / z.std())
    run.save(torch, {"vae": vae}, opt, force=True)
    print(f"vae: step {run.record['step']}, scaling_factor {run.record['scaling_factor']:.4f}", flush=True)


def load_vae(args, torch, diffusers):
    """The trained VAE and its record: from the work directory's vae.pt, else from --vae-from's (or
    --init-from's) export."""
    vae = diffusers.AutoencoderKL(**VAE_CONFIG)
    path = os.path.join(args.work, "vae.pt")
    if os.path.exists(path):
        ck = torch.load(path)
        vae.load_state_dict(ck["vae"])
        record = ck["record"]
    elif args.vae_from or args.init_from:
        src = args.vae_from or args.init_from
        vae.load_state_dict(diffusers.AutoencoderKL.from_pretrained(os.path.join(src, "vae")).state_dict())
        with open(os.path.join(src, "training.json")) as f:
            record = json.load(f)["vae"]
    else:
        sys.exit(f"no vae.pt in {args.work}: run --stage vae first (or give --vae-from an exported folder)")
    return vae.eval().requires_grad_(False), record


def init_from_export(args, torch, diffusers, transformers, modules, run):
    """No checkpoint: start from an exported folder's (EMA) weights and its training record, the optimiser
    afresh — a later session goes on from the committed model when the work directory is gone."""
    unet = diffusers.UNet2DConditionModel.from_pretrained(os.path.join(args.init_from, "unet"))
    text = transformers.CLIPTextModel.from_pretrained(os.path.join(args.init_from, "text_encoder"))
    for name, src in (("unet", unet), ("ema_unet", unet), ("text", text), ("ema_text", text)):
        modules[name].load_state_dict({k: v.float() for k, v in src.state_dict().items()})
    with open(os.path.join(args.init_from, "training.json")) as f:
        run.record = json.load(f)["unet"]
    run.base = run.record["seconds"]
    print(f"initialised from {args.init_from} at step {run.record['step']}", flush=True)


class CrossAttentionTap:
    """diffusers' plain attention (AttnProcessor) for a cross-attention module (attn2: no group norm, no
    residual inside), keeping its probabilities [batch, heads, q, 77] for the grounding loss."""

    def __init__(self, store):
        self.store = store

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, scale=1.0):
        import torch
        q = attn.head_to_batch_dim(attn.to_q(hidden_states))
        k = attn.head_to_batch_dim(attn.to_k(encoder_hidden_states))
        v = attn.head_to_batch_dim(attn.to_v(encoder_hidden_states))
        probs = attn.get_attention_scores(q, k, None)
        self.store.append(probs.view(hidden_states.shape[0], attn.heads, *probs.shape[1:]))
        return attn.to_out[1](attn.to_out[0](attn.batch_to_head_dim(torch.bmm(probs, v))))


def grounding_loss(torch, taps, captions, layouts, t2i_data):
    """Per item word of each caption and per cross-attention layer: (1 − the share of its head-mean map inside
    the item's cell)². → (loss, mean share inside, how often the layers' mean map peaks in the cell) or None."""
    rows, tokens, cells = [], [], []
    for i, (caption, layout) in enumerate(zip(captions, layouts)):
        if caption:
            words = caption.replace(",", " , ").split()
            for cls, cell in layout:
                rows.append(i)
                tokens.append(1 + words.index(t2i_data.NAMES[cls]))
                cells.append(cell)
    if not rows:
        return None
    rows, tokens, cells = torch.tensor(rows), torch.tensor(tokens), torch.tensor(cells)
    shares, peaks = [], 0
    for probs in taps:
        side = int(round(probs.shape[2] ** 0.5))
        maps = probs[rows, :, :, tokens].mean(1)  # [items, q]
        r, c = torch.arange(side)[:, None] * 2 // side, torch.arange(side)[None, :] * 2 // side
        masks = torch.stack([((r == k // 2) & (c == k % 2)).flatten() for k in range(4)]).float()
        shares.append((maps * masks[cells]).sum(1) / maps.sum(1).clamp_min(1e-8))
        peaks = peaks + (maps.view(len(rows), 2, side // 2, 2, side // 2).sum((2, 4)).flatten(1) /
                         len(taps)).detach()
    share = torch.stack(shares)
    hit = float((peaks.argmax(1) == cells).float().mean())
    return (1 - share).pow(2).mean(), float(share.mean()), hit


def train_unet(args, torch, diffusers, transformers, data, t2i_data):
    vae, vae_record = load_vae(args, torch, diffusers)
    vocab = t2i_data.clip_vocabulary()[0]
    text_cfg = transformers.CLIPTextConfig(vocab_size=len(vocab), bos_token_id=vocab["<|startoftext|>"],
                                           eos_token_id=vocab["<|endoftext|>"], pad_token_id=vocab["<|endoftext|>"],
                                           **TEXT_CONFIG)
    text, unet = transformers.CLIPTextModel(text_cfg), diffusers.UNet2DConditionModel(**UNET_CONFIG)
    ema_text, ema_unet = transformers.CLIPTextModel(text_cfg), diffusers.UNet2DConditionModel(**UNET_CONFIG)
    ema_text.load_state_dict(text.state_dict())
    ema_unet.load_state_dict(unet.state_dict())
    head = torch.nn.Linear(TEXT_CONFIG["hidden_size"], 4 * (len(t2i_data.NAMES) + 1))  # reads the layout
    params = list(text.parameters()) + list(unet.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=args.lr or 3e-4)
    modules = {"text": text, "unet": unet, "ema_text": ema_text, "ema_unet": ema_unet, "layout_head": head}
    run = Run(args.work, "unet", args.minutes, args.checkpoint_minutes)
    if not run.resume(torch, modules, opt) and args.init_from:
        init_from_export(args, torch, diffusers, transformers, modules, run)
    if "scaling_factor" not in run.record:  # measured once, on these canvases; kept across resumes
        with torch.no_grad():
            z = torch.cat([vae.encode(to_rgb(data.batch(64)[0], torch)).latent_dist.mean for _ in range(8)])
        run.record["scaling_factor"] = float(1.0 / z.std())
    scale = vae_record["scaling_factor"] = run.record["scaling_factor"]
    if run.record.get("prediction", "epsilon") != args.prediction:  # a switch is part of the model's history
        run.record.setdefault("switches", []).append({"step": run.record["step"], "prediction": args.prediction})
        run.record["prediction"] = args.prediction
    phase = {"prediction": args.prediction, "lr": args.lr or 3e-4, "batch": args.batch, "threads": args.threads,
             "high_noise_weight": args.high_noise_weight, "layout_weight": args.layout_weight,
             "ground_weight": args.ground_weight}
    phases = run.record.setdefault("phases", [])
    if args.minutes > 0 and (not phases or {k: phases[-1].get(k) for k in phase} != phase):
        phases.append(dict(phase, step=run.record["step"]))  # the recipe from this step on (the card reads it)
    v_target = args.prediction == "v_prediction"
    abar = torch.cumprod(1 - torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000) ** 2, 0)
    losses, layout_acc, grounding = [], [], []
    taps = []
    if args.ground_weight > 0:
        for name, module in unet.named_modules():
            if name.endswith("attn2"):
                module.set_processor(CrossAttentionTap(taps))
    while run.going():
        taps.clear()
        images, captions, layouts = data.batch(args.batch)
        captions = ["" if torch.rand(()) < 0.1 else c for c in captions]
        ids = torch.from_numpy(t2i_data.encode(captions, vocab))
        with torch.no_grad():
            z = vae.encode(to_rgb(images, torch)).latent_dist.sample() * scale
        t = torch.randint(0, 1000, (len(images),))
        noise = torch.randn_like(z)
        a = abar[t][:, None, None, None]
        zt = a.sqrt() * z + (1 - a).sqrt() * noise
        states = text(ids)
        pred = unet(zt, t, states.last_hidden_state).sample
        target = a.sqrt() * noise - (1 - a).sqrt() * z if v_target else noise
        per = (pred - target).pow(2).mean(dim=(1, 2, 3))
        w = 1 + ((1 - abar[t]) / abar[t]).clamp(max=args.high_noise_weight - 1)
        loss = (w * per).sum() / w.sum()
        read = layout_loss(torch, head, states.pooler_output, captions, layouts, t2i_data)
        if read is not None and args.layout_weight > 0:
            loss = loss + args.layout_weight * read[0]
            layout_acc.append(read[1])
        ground = grounding_loss(torch, taps, captions, layouts, t2i_data) if taps else None
        if ground is not None:
            loss = loss + args.ground_weight * ground[0]
            grounding.append(ground[1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        with torch.no_grad():
            d = min(0.999, (1 + run.record["step"]) / (10 + run.record["step"]))
            for src, dst in ((text, ema_text), (unet, ema_unet)):
                for pe, pm in zip(dst.parameters(), src.parameters()):
                    pe.mul_(d).add_(pm.detach(), alpha=1 - d)
        run.record["step"] += 1
        losses.append(per.mean().item())  # the plain noise loss, comparable across runs
        if run.record["step"] % 100 == 0:
            extra = {"layout_acc": sum(layout_acc[-100:]) / len(layout_acc[-100:])} if layout_acc else {}
            if grounding:
                extra["ground"] = sum(g[0] for g in grounding[-100:]) / len(grounding[-100:])
                extra["ground_hit"] = sum(g[1] for g in grounding[-100:]) / len(grounding[-100:])
            if run.record["step"] % args.probe_every == 0:
                extra["probe"] = layout_probe(torch, ema_unet, ema_text, vae, scale, abar, vocab, t2i_data, v_target)
            run.log(losses[-100:], **extra)
        run.save(torch, modules, opt)
    run.save(torch, modules, opt, force=True)
    if args.export:
        export(args.export, vae, vae_record, ema_text, ema_unet, diffusers, t2i_data, run.record)


def layout_loss(torch, head, pooled, captions, layouts, t2i_data):
    """Cross-entropy of the layout read from the pooled text states of the captions that name every item's
    cell, and its accuracy per cell; None when no caption of the batch does."""
    rows, targets = [], []
    for i, (caption, layout) in enumerate(zip(captions, layouts)):
        cells = t2i_data.layout_target(caption, layout)
        if cells is not None:
            rows.append(i)
            targets.append(cells)
    if not rows:
        return None
    logits = head(pooled[rows]).view(-1, len(t2i_data.NAMES) + 1)
    y = torch.tensor(targets).view(-1)
    return torch.nn.functional.cross_entropy(logits, y), float((logits.argmax(-1) == y).float().mean())


def layout_probe(torch, unet, text, vae, scale, abar, vocab, t2i_data, v_target):
    """Of "a bag / sneaker in the CELL" × 4 cells × 2 seeds: how often the clean picture predicted at t = 999
    (where the layout is decided) is brightest in the named cell. Chance is 4 of 16."""
    prompts = [(item, cell) for item in ("bag", "sneaker") for cell in range(4)]
    ids = t2i_data.encode([f"a {item} in the {t2i_data.CELLS[cell]}" for item, cell in prompts], vocab)
    side, half = UNET_CONFIG["sample_size"], t2i_data.CANVAS // 2
    hits = 0
    with torch.no_grad():
        states = text(torch.from_numpy(ids)).last_hidden_state
        for seed in (1, 2):
            noise = torch.randn((1, 4, side, side), generator=torch.Generator().manual_seed(seed))
            noise = noise.expand(len(prompts), -1, -1, -1)
            out = unet(noise, torch.full((len(prompts),), 999), states).sample
            a = abar[999]
            x0 = a.sqrt() * noise - (1 - a).sqrt() * out if v_target else (noise - (1 - a).sqrt() * out) / a.sqrt()
            grey = vae.decode(x0 / scale).sample.mean(1)
            for i, (_, cell) in enumerate(prompts):
                means = [grey[i, r * half:(r + 1) * half, c * half:(c + 1) * half].mean() for r in (0, 1) for c in (0, 1)]
                hits += int(max(range(4), key=lambda k: float(means[k])) == cell)
    return hits


def export(folder, vae, vae_record, text, unet, diffusers, t2i_data, record):
    import shutil
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    vae.register_to_config(scaling_factor=vae_record["scaling_factor"])
    import copy
    vae.save_pretrained(os.path.join(folder, "vae"), safe_serialization=True)
    # The U-Net and the text encoder stored in float16 (half the bytes in the repository); diffusers and
    # transformers load them into float32 models, Attention Lens keeps them in 16 bits where it can.
    copy.deepcopy(unet).half().save_pretrained(os.path.join(folder, "unet"), safe_serialization=True)
    copy.deepcopy(text).half().save_pretrained(os.path.join(folder, "text_encoder"), safe_serialization=True)
    t2i_data.write_tokenizer(os.path.join(folder, "tokenizer"))
    os.makedirs(os.path.join(folder, "scheduler"))
    with open(os.path.join(folder, "scheduler", "scheduler_config.json"), "w") as f:
        json.dump(dict(SCHEDULER, prediction_type=record.get("prediction", "epsilon"), _diffusers_version=diffusers.__version__), f, indent=2, sort_keys=True)
    index = {"_class_name": "StableDiffusionPipeline", "_diffusers_version": diffusers.__version__,
             "feature_extractor": [None, None], "requires_safety_checker": False, "safety_checker": [None, None],
             "scheduler": ["diffusers", "PNDMScheduler"], "text_encoder": ["transformers", "CLIPTextModel"],
             "tokenizer": ["transformers", "CLIPTokenizer"], "unet": ["diffusers", "UNet2DConditionModel"],
             "vae": ["diffusers", "AutoencoderKL"]}
    with open(os.path.join(folder, "model_index.json"), "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
    with open(os.path.join(folder, "training.json"), "w") as f:
        json.dump({"vae": vae_record, "unet": record}, f, indent=1)
    import t2i_card
    counts = {name: sum(p.numel() for p in m.parameters()) for name, m in
              (("vae", vae), ("text", text), ("unet", unet))}
    with open(os.path.join(folder, "README.md"), "w", encoding="utf-8") as f:
        f.write(t2i_card.model_card(os.path.basename(os.path.normpath(folder)), vae_record, record, counts,
                                    (VAE_CONFIG, UNET_CONFIG, TEXT_CONFIG)))
    print(f"exported {folder} (step {record['step']})", flush=True)


def worker(args):
    sys.path.insert(0, HERE)
    import fast_blas  # noqa: F401
    import torch
    import safetensors.torch  # noqa: F401
    import diffusers
    import transformers
    import t2i_data
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.work, exist_ok=True)
    data = t2i_data.Compositions("train", seed=args.seed + int(time.time()))
    if args.stage == "vae":
        train_vae(args, torch, diffusers, data)
    else:
        train_unet(args, torch, diffusers, transformers, data, t2i_data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=["vae", "unet"], required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--checkpoint-minutes", type=float, default=10.0)
    ap.add_argument("--export", help="unet stage: write the pipeline folder here at the end")
    ap.add_argument("--init-from", help="unet stage without a checkpoint in --work: start from this exported "
                                        "folder (its weights and training.json), e.g. the committed model")
    ap.add_argument("--vae-from", help="unet stage without vae.pt in --work: the VAE of this exported folder")
    ap.add_argument("--prediction", choices=["epsilon", "v_prediction"], default="epsilon",
                    help="unet stage: what the U-Net predicts (written to the scheduler config)")
    ap.add_argument("--layout-weight", type=float, default=0.3,
                    help="unet stage: weight of the text encoder's layout read-out loss (0: none)")
    ap.add_argument("--ground-weight", type=float, default=0.0,
                    help="unet stage: weight of the item words' cross-attention grounding loss (0: none)")
    ap.add_argument("--probe-every", type=int, default=500, help="unet stage: steps between layout probes")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--high-noise-weight", type=float, default=10.0,
                    help="unet stage: the largest weight of a sample's noise loss (1 = the plain loss)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    sys.path.insert(0, os.path.join(ROOT, "tools", "golden"))
    import make_t2i_fixtures
    make_t2i_fixtures.run_with_diffusers(__file__, ["--worker"] + sys.argv[1:])


if __name__ == "__main__":
    main()
