"""The model card (README.md) of the built-in text-to-image model, written by train_t2i.py's export; the
"## Quality" section is added by eval_t2i.py."""


def loss_table(log, every):
    rows = ["| step | minutes | loss (mean of the last 100 steps) |", "|---:|---:|---:|"]
    for row in log:
        if row["step"] % every == 0 or row is log[-1]:
            rows.append(f"| {row['step']} | {row['minutes']:.0f} | {row['loss']:.4f} |")
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
        " --prompt \"a sneaker above a bag\"`.",
        "",
        "Training goes on over sessions (`--init-from` this folder when the work directory is gone); the Quality",
        "section below measures this checkpoint.",
        "",
        "## Data",
        "Fashion-MNIST (Debian's `dataset-fashion-mnist`, MIT licence, Zalando Research), items drawn onto a",
        "56×56 canvas of 2×2 cells of 28×28, one to three items per picture, captioned in five forms: \"a sneaker",
        "in the top left and a bag in the bottom right\", \"a sneaker above a bag\" (optionally \"… on the left\"),",
        "\"a dress left of a coat\" (optionally \"… at the bottom\"), \"a dress on the right\", \"a sneaker above",
        "a bag, a dress on the right\". Items are named by one word: tshirt, trousers, pullover, dress, coat,",
        "sandal, shirt, sneaker, bag, boot. 50 pairs of (item, cell) are never shown together in training: the",
        "evaluation prompts below are compositions the model has not seen. The tokenizer's vocabulary is CLIP's",
        "byte-level BPE layout with merges learnt for the caption words (each word one token).",
        "",
        "## Architecture",
        f"- VAE (AutoencoderKL, {counts['vae']:,} parameters): 3 → {vae_cfg['latent_channels']} latent channels, "
        f"block_out_channels {vae_cfg['block_out_channels']}: 56×56 pictures ↔ 14×14 latents; "
        f"scaling_factor {vae_record['scaling_factor']:.4f} (1 / the latents' std, as SD's 0.18215 was set).",
        f"- Text encoder (CLIPTextModel, {counts['text']:,} parameters): {text_cfg['hidden_size']} wide, "
        f"{text_cfg['num_hidden_layers']} layers, {text_cfg['num_attention_heads']} heads, causal mask, quick_gelu, "
        "77 positions, final layer norm.",
        f"- U-Net (UNet2DConditionModel, {counts['unet']:,} parameters): block_out_channels "
        f"{unet_cfg['block_out_channels']}, {unet_cfg['down_block_types']} / {unet_cfg['up_block_types']}, "
        f"{unet_cfg['attention_head_dim']} heads (SD's `attention_head_dim`), cross-attention to the text at "
        "14×14 and 7×7 and in the mid block.",
        "- Scheduler: PNDM (PLMS), SD's scaled_linear betas 0.00085–0.012, 1000 training steps, epsilon.",
        "",
        "## Training",
        "One CPU thread (Debian's torch 1.13 + OpenBLAS), diffusers v0.25's and transformers v4.33.3's own",
        "classes. Stage 1, the VAE: L1 + 1e-6·KL, AdamW 1e-3, batch 32, "
        f"{vae_record['step']:,} steps in {vae_record['seconds'] / 60:.0f} minutes. Stage 2, the text encoder and",
        "the U-Net jointly on the noise (MSE), AdamW 3e-4, batch 32, gradient norm clipped at 1, captions",
        "dropped to \"\" one time in ten (classifier-free guidance), EMA of both exported: "
        f"{unet_record['step']:,} steps in {unet_record['seconds'] / 60:.0f} minutes.",
        "",
    ]
    lines += loss_table(unet_record["log"], 1000)
    return "\n".join(lines) + "\n"
