"""The model card (README.md) of the built-in text-to-image model, written by train_t2i.py's export; the
"## Quality" section is added by eval_t2i.py."""


def loss_table(log, every):
    """The diffusion loss, and where logged: the layout probe (of 16), the read-out's accuracy per cell, the
    item words' map share inside their cell and how often their map peaks there (means of the last 100 steps)."""
    # No minutes column: rows logged before session 34 counted time twice after a resume (the record's
    # "seconds", which the text gives, were right).
    rows = ["| step | diffusion loss | layout probe | read-out accuracy | map share in cell | map peak in cell |",
            "|---:|---:|---:|---:|---:|---:|"]

    def cell(row, key, fmt):
        return format(row[key], fmt) if key in row else "–"
    for row in log:
        if row["step"] % every == 0 or row is log[-1]:
            rows.append(f"| {row['step']} | {row['loss']:.4f} | {cell(row, 'probe', 'd')} | "
                        f"{cell(row, 'layout_acc', '.3f')} | {cell(row, 'ground', '.3f')} | "
                        f"{cell(row, 'ground_hit', '.3f')} |")
    return rows


def phase_table(phases, last_step):
    if not phases:
        return []
    rows = ["| steps | target | AdamW lr | batch | threads | high-noise weight | read-out weight | grounding weight |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for i, p in enumerate(phases):
        end = phases[i + 1]["step"] if i + 1 < len(phases) else last_step
        rows.append(f"| {p['step']:,}–{end:,} | {p['prediction']} | {p['lr']:g} | {p['batch']} | {p['threads']} | "
                    f"{p['high_noise_weight']:g} | {p['layout_weight']:g} | {p['ground_weight']:g} |")
    return rows


def model_card(name, vae_record, unet_record, counts, configs):
    vae_cfg, unet_cfg, text_cfg = configs
    lines = [
        f"# {name} — Attention Lens' built-in text-to-image model",
        "",
        "A tiny Stable-Diffusion-layout pipeline trained by `tools/train/train_t2i.py` on captioned 2×2",
        "compositions of Fashion-MNIST items (`tools/train/t2i_data.py`), in diffusers' own folder layout",
        "(`model_index.json` naming `StableDiffusionPipeline`; `tokenizer/` CLIPTokenizer, `text_encoder/`",
        "CLIPTextModel, `unet/` UNet2DConditionModel, `vae/` AutoencoderKL, `scheduler/` PNDM), written by the",
        "libraries' own `save_pretrained`, so `StableDiffusionPipeline.from_pretrained` loads it as it is.",
        "Open it on the Text to image page, or `attnlens-cli t2i --model resources/models/" + name +
        " --prompt \"a sneaker above a bag, a dress on the right\"`.",
        "",
        "Training goes on over sessions (`--init-from` this folder when the work directory is gone); the Quality",
        "section below measures this checkpoint.",
        "",
        "## Data",
        "Fashion-MNIST (Debian's `dataset-fashion-mnist`, MIT licence, Zalando Research), items (28×28) drawn",
        "onto a 64×64 canvas of 2×2 cells of 32×32, one to three items per picture, captioned in these forms:",
        "\"a sneaker in the top left and a bag in the bottom right\", \"a sneaker above a bag\" (optionally",
        "\"… on the left\"), \"a dress left of a coat\" (optionally \"… at the bottom\"), \"a dress on the",
        "right\", \"a sneaker above a bag, a dress on the right\"; the absolute and one-side forms half the time",
        "with the place first (\"in the top left a sneaker and …\"). Items are named by one word: tshirt,",
        "trousers, pullover, dress, coat,",
        "sandal, shirt, sneaker, bag, boot. 50 pairs of (item, cell) are never shown together in training: the",
        "evaluation prompts below are compositions the model has not seen. The tokenizer's vocabulary is CLIP's",
        "byte-level BPE layout with merges learnt for the caption words (each word one token).",
        "",
        "## Architecture",
        f"- VAE (AutoencoderKL, {counts['vae']:,} parameters): 3 → {vae_cfg['latent_channels']} latent channels, "
        f"block_out_channels {vae_cfg['block_out_channels']}: 64×64 pictures ↔ 16×16 latents (trained on "
        "56×56 canvases of an earlier layout; convolutional, it serves these too); "
        f"scaling_factor {unet_record['scaling_factor']:.4f} (1 / the latents' std on these canvases, as SD's "
        "0.18215 was set).",
        f"- Text encoder (CLIPTextModel, {counts['text']:,} parameters): {text_cfg['hidden_size']} wide, "
        f"{text_cfg['num_hidden_layers']} layers, {text_cfg['num_attention_heads']} heads, causal mask, quick_gelu, "
        "77 positions, final layer norm.",
        f"- U-Net (UNet2DConditionModel, {counts['unet']:,} parameters): block_out_channels "
        f"{unet_cfg['block_out_channels']}, {unet_cfg['down_block_types']} / {unet_cfg['up_block_types']}, "
        f"{unet_cfg['attention_head_dim']} heads (SD's `attention_head_dim`), cross-attention to the text at "
        "8×8 and 4×4 and in the mid block.",
        "- Scheduler: PNDM (PLMS), SD's scaled_linear betas 0.00085–0.012, 1000 training steps, "
        f"{unet_record.get('prediction', 'epsilon')}.",
        "",
        "## Training",
        "CPU only (Debian's torch 1.13 + OpenBLAS), diffusers v0.25's and transformers v4.33.3's own",
        "classes. Stage 1, the VAE: L1 + 1e-6·KL, AdamW 1e-3, batch 32, "
        f"{vae_record['step']:,} steps in {vae_record['seconds'] / 60:.0f} minutes on one thread. Stage 2, the",
        "text encoder and the U-Net jointly from scratch: the diffusion loss (MSE on the scheduler's target,",
        "each sample weighted by 1 + min(1/SNR, high-noise weight − 1) so the noisy steps that decide the layout",
        "count), a layout read-out (a linear head on the text encoder's pooled state names each cell's item or",
        "\"empty\"; not exported) and, later, a grounding loss (each item word's cross-attention map, per layer,",
        "asked to fall in its item's cell — a causal text encoder's item word cannot know a place said after it,",
        "and without it the maps of \"a bag in the top left\" lit an empty cell); gradient norm clipped at 1,",
        "captions dropped to \"\" one time in ten (classifier-free guidance), EMA of both exported: "
        f"{unet_record['step']:,} steps in {unet_record['seconds'] / 60:.0f} minutes.",
        "",
    ]
    lines += phase_table(unet_record.get("phases", []), unet_record["step"]) + [""]
    lines += loss_table(unet_record["log"], 600)
    return "\n".join(lines) + "\n"
