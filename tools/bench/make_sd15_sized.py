"""A random Stable-Diffusion-1.5-shaped pipeline folder, for measuring the C++ engine's time and memory at real
size (NOT committed; written to /tmp, ~4.3 GB float32 or half that with --fp16).

    DIFFUSERS_SRC=/tmp/llmgold /usr/bin/python3 tools/bench/make_sd15_sized.py [OUT=/tmp/attnlens-sd15] [--fp16]

Built by diffusers' and transformers' own classes (fetched sources, as tools/golden/make_t2i_fixtures.py says) with
their default random init under torch.manual_seed(0): UNet2DConditionModel with SD 1.5's config (860 M
parameters), CLIPTextModel in CLIP ViT-L/14's text shape (768 wide, 12 layers, vocabulary 49 408), AutoencoderKL
with SD's VAE config, SD 1.5's PNDM scheduler config; the tokenizer is the tiny fixture's (its ids lie inside the
vocabulary). Then, e.g.:

    /usr/bin/time -v attnlens-cli t2i --model OUT --prompt "a sneaker above a bag" --steps 25 --maps maps.npy
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SD15_UNET = dict(sample_size=64, in_channels=4, out_channels=4, block_out_channels=[320, 640, 1280, 1280],
                 layers_per_block=2, cross_attention_dim=768, attention_head_dim=8)
SD_VAE = dict(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=[128, 256, 512, 512],
              down_block_types=["DownEncoderBlock2D"] * 4, up_block_types=["UpDecoderBlock2D"] * 4,
              layers_per_block=2, norm_num_groups=32, sample_size=512)


def worker(out, fp16):
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    import fast_blas  # noqa: F401
    import torch
    import safetensors.torch  # noqa: F401
    import diffusers
    import transformers
    sys.path.insert(0, os.path.join(ROOT, "tools", "golden"))
    from make_t2i_fixtures import SD15_SCHEDULER
    torch.manual_seed(0)
    dtype = torch.float16 if fp16 else torch.float32
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    diffusers.UNet2DConditionModel(**SD15_UNET).to(dtype).save_pretrained(os.path.join(out, "unet"))
    diffusers.AutoencoderKL(**SD_VAE).to(dtype).save_pretrained(os.path.join(out, "vae"))
    cfg = transformers.CLIPTextConfig(vocab_size=49408, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                                      num_attention_heads=12, max_position_embeddings=77, hidden_act="quick_gelu",
                                      projection_dim=768)
    transformers.CLIPTextModel(cfg).to(dtype).save_pretrained(os.path.join(out, "text_encoder"),
                                                              safe_serialization=True)
    shutil.copytree(os.path.join(ROOT, "tests", "data", "t2i", "tiny-pipe", "tokenizer"), os.path.join(out, "tokenizer"),
                    ignore=shutil.ignore_patterns("golden*"))
    os.makedirs(os.path.join(out, "scheduler"))
    with open(os.path.join(out, "scheduler", "scheduler_config.json"), "w") as f:
        json.dump(SD15_SCHEDULER, f, indent=2)
    shutil.copy(os.path.join(ROOT, "tests", "data", "t2i", "tiny-pipe", "model_index.json"),
                os.path.join(out, "model_index.json"))
    print(out)


def main(argv):
    out = next((a for a in argv if not a.startswith("--")), "/tmp/attnlens-sd15")
    if "--worker" in argv:
        return worker(out, "--fp16" in argv)
    sys.path.insert(0, os.path.join(ROOT, "tools", "golden"))
    import make_t2i_fixtures
    make_t2i_fixtures.run_with_diffusers(__file__, ["--worker", out] + [a for a in argv if a == "--fp16"])


if __name__ == "__main__":
    main(sys.argv[1:])
