#!/usr/bin/python3
"""One guided text-to-image step: the C++ engine against diffusers' own UNet2DConditionModel (v0.25, fetched as
tools/golden/make_t2i_fixtures.py says), in nota-ai/bk-sdm-tiny's U-Net shape with random weights, one thread.

    DIFFUSERS_SRC=/tmp/llmgold /usr/bin/python3 tools/bench/t2i_bench.py [--out /tmp/attnlens-t2i-bench]
        [--size 256] [--repeat 3] [--warmup 1] [--cli build/release/app/attnlens-cli]

Writes OUT/unet (bk-sdm-tiny's config: [320, 640, 1280], cross-attention in every block, layers_per_block 1, no
mid block, cross_attention_dim 768, 8 heads; diffusers' default init under torch.manual_seed(0); float32), then in
this one process:
  1. diffusers, torch.no_grad(), one thread: one guided step = the U-Net on the batch [uncond, cond] as
     StableDiffusionPipeline runs it, plain (AttnProcessor: torch 1.13 has no SDPA) and with every cross-attention
     map kept (a processor that stores attn2's probabilities, as DAAM / attention-map tools hook it);
  2. `attnlens-cli bench --model OUT/unet --sample OUT/latents.npy`: one iteration = the unconditional and the
     conditional call, cross-attention captured (what t2i keeps per step);
and prints one JSON line {"task": "t2i-step", "shape", "size", "params", "diffusers_ms",
"diffusers_capture_ms", "attnlens_ms", "speedup": diffusers_capture_ms / attnlens_ms, "speedup_plain"}.
"""
import argparse
import json
import os
import subprocess
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ATTNLENS_THREADS", "1")  # our side: one thread too (`attnlens-cli --threads`)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BK_SDM_TINY = dict(sample_size=64, in_channels=4, out_channels=4, block_out_channels=[320, 640, 1280],
                   down_block_types=["CrossAttnDownBlock2D"] * 3, up_block_types=["CrossAttnUpBlock2D"] * 3,
                   layers_per_block=1, mid_block_type=None, cross_attention_dim=768, attention_head_dim=8)


def timed(fn, repeat, warmup):
    sys.path.insert(0, HERE)
    import unet_bench
    return unet_bench.timed(fn, warmup, repeat)["median_ms"]


def worker(args):
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    import fast_blas  # noqa: F401
    import numpy as np
    import torch
    torch.set_num_threads(1)
    import safetensors.torch  # noqa: F401
    import diffusers
    from diffusers.models.attention_processor import AttnProcessor
    torch.manual_seed(0)
    unet = diffusers.UNet2DConditionModel(**BK_SDM_TINY).eval()
    params = sum(p.numel() for p in unet.parameters())
    folder = os.path.join(args.out, "unet")
    unet.save_pretrained(folder, safe_serialization=True)
    lat = args.size // 8
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1, 4, lat, lat, generator=g)
    enc = torch.randn(2, 77, 768, generator=g)
    np.save(os.path.join(args.out, "latents.npy"), x.numpy())
    batch = torch.cat([x, x])

    def step():
        with torch.no_grad():
            unet(batch, torch.tensor([500]), enc)
    plain = timed(step, args.repeat, args.warmup)

    class Keep(AttnProcessor):  # AttnProcessor's computation, attn2's probabilities kept
        def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, scale=1.0):
            if encoder_hidden_states is None:
                return super().__call__(attn, hidden_states, None, attention_mask, temb, scale)
            q = attn.head_to_batch_dim(attn.to_q(hidden_states))
            k = attn.head_to_batch_dim(attn.to_k(encoder_hidden_states))
            v = attn.head_to_batch_dim(attn.to_v(encoder_hidden_states))
            probs = attn.get_attention_scores(q, k, attention_mask)
            kept.append(probs)
            out = attn.batch_to_head_dim(torch.bmm(probs, v))
            return attn.to_out[1](attn.to_out[0](out))
    kept = []
    unet.set_attn_processor(Keep())

    def step_kept():
        kept.clear()
        step()
    captured = timed(step_kept, args.repeat, args.warmup)
    return {"params": params, "diffusers_ms": plain, "diffusers_capture_ms": captured, "cross_layers": len(kept)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/attnlens-t2i-bench")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.worker:
        print(json.dumps(worker(args)))
        return
    sys.path.insert(0, os.path.join(ROOT, "tools", "golden"))
    import make_t2i_fixtures
    peer = make_t2i_fixtures.run_with_diffusers(__file__, ["--worker", "--out", args.out, "--size", str(args.size),
                                                           "--repeat", str(args.repeat), "--warmup", str(args.warmup)],
                                                capture=True)
    result = json.loads(peer.stdout.strip().splitlines()[-1])
    ours = subprocess.run([args.cli, "bench", "--model", os.path.join(args.out, "unet"), "--sample",
                           os.path.join(args.out, "latents.npy"), "--repeat", str(args.repeat), "--warmup",
                           str(args.warmup)], check=True, capture_output=True, text=True)
    bench = json.loads(ours.stdout.strip().splitlines()[-1])
    result.update({"task": "t2i-step", "shape": "bk-sdm-tiny", "size": args.size, "attnlens_ms": bench["median_ms"],
                   "speedup": result["diffusers_capture_ms"] / bench["median_ms"],
                   "speedup_plain": result["diffusers_ms"] / bench["median_ms"]})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
