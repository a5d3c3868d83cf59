#!/usr/bin/env python3
"""Issue 43's speed check: DINOv2-S/14 and CLIP ViT-B/16 at 224×224, one thread, every head's attention kept, against
transformers' OWN Dinov2Model and CLIPVisionModelWithProjection (v4.50.3, eager attention, output_attentions=True,
torch.no_grad; fetched as tools/golden/make_dinov2_fixtures.py says) in the same run, on random weights.

    TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/bench/encoder_bench.py [--out /tmp/attnlens-encoders]
        [--repeat 5] [--rounds 3] [--cli build/release/app/attnlens-cli]

The folders are written once by the classes' save_pretrained (float32) with the real configs (facebook/dinov2-small:
hidden 384, 12 layers × 6 heads, patch 14, 518-pixel position table interpolated to the 16×16 grid of a 224 crop;
openai/clip-vit-base-patch16: hidden 768, 12 × 12, patch 16, projection 512) and their processors' configs. Each
side times one forward of the same picture (bench.png, 640×480): the peer from pixel_values (its processor's
output, made once), ours `attnlens-cli bench --image` "forward_ms" (preprocessing excluded alike). Median of
--repeat, the best of --rounds rounds, sides alternated. stdout: a Markdown table; --json FILE the numbers.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# The peer gets OpenBLAS's own kernel choice: the development shell sets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE.
os.environ.pop("OPENBLAS_CORETYPE", None)
os.environ.pop("OPENBLAS_L2_SIZE", None)
os.environ.setdefault("ATTNLENS_THREADS", "1")  # the engine on one thread, as the peer (`attnlens-cli --threads`)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TAG = "v4.50.3"
MODELS = {  # name: (model class, config class, config, processor class, processor config)
    "dinov2-s14": ("Dinov2Model", "Dinov2Config",
                   dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, mlp_ratio=4, patch_size=14,
                        image_size=518, layerscale_value=1.0),
                   "BitImageProcessor",
                   dict(size={"shortest_edge": 256}, crop_size={"height": 224, "width": 224}, do_center_crop=True,
                        resample=3, image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])),
    "clip-b16": ("CLIPVisionModelWithProjection", "CLIPVisionConfig",
                 dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                      patch_size=16, image_size=224, projection_dim=512, hidden_act="quick_gelu"),
                 "CLIPImageProcessor",
                 dict(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}, do_center_crop=True,
                      resample=3)),
}


def peer_worker(out, repeat):
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    import fast_blas  # noqa: F401
    import make_llm_fixtures
    make_llm_fixtures.install_shims(TAG)
    import torch
    torch.set_num_threads(1)
    import transformers
    from PIL import Image
    result = {}
    for name, (cls, cfg_cls, cfg, proc_cls, proc_cfg) in MODELS.items():
        d = os.path.join(out, name)
        if not os.path.isfile(os.path.join(d, "model.safetensors")):
            torch.manual_seed(0)
            getattr(transformers, cls)(getattr(transformers, cfg_cls)(**cfg)).eval().save_pretrained(
                d, safe_serialization=True)
            getattr(transformers, proc_cls)(**proc_cfg).save_pretrained(d)
        model = getattr(transformers, cls).from_pretrained(d, attn_implementation="eager").eval()
        pixels = getattr(transformers, proc_cls).from_pretrained(d)(
            Image.open(os.path.join(out, "bench.png")), return_tensors="pt").pixel_values
        times = []
        with torch.no_grad():
            for i in range(repeat + 1):
                start = time.perf_counter()
                o = model(pixels, output_attentions=True)
                if i:
                    times.append((time.perf_counter() - start) * 1000)
        result[name] = {"median_ms": statistics.median(times), "tokens": int(o.attentions[0].shape[-1]),
                        "peer": f"transformers {TAG} {cls} (torch {torch.__version__.split('+')[0]})"}
    print(json.dumps(result))


def run_peer(out, repeat):
    import make_llm_fixtures
    src = os.environ.get("TRANSFORMERS_SRC", "/tmp/llmgold")
    r = make_llm_fixtures.run_worker(src, TAG, ["--worker", out, str(repeat)], script=__file__, capture=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_ours(cli, out, name, repeat):
    r = subprocess.run([cli, "bench", "--model", os.path.join(out, name), "--image", os.path.join(out, "bench.png"),
                        "--repeat", str(repeat)], check=True, capture_output=True, text=True)
    j = json.loads(r.stdout)
    return {"median_ms": j["forward_ms"], "tokens": j["tokens"]}


def main():
    if sys.argv[1:2] == ["--worker"]:
        return peer_worker(sys.argv[2], int(sys.argv[3]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/attnlens-encoders")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--json")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "tools", "golden"))
    os.makedirs(args.out, exist_ok=True)
    picture = os.path.join(args.out, "bench.png")
    if not os.path.isfile(picture):
        import numpy as np
        from PIL import Image
        from make_vit_fixtures import photo_like
        Image.fromarray(np.ascontiguousarray(photo_like(640, 480, 3))).save(picture)
    best = {}
    for _ in range(args.rounds):
        peer = run_peer(args.out, args.repeat)
        for name in MODELS:
            ours = run_ours(args.cli, args.out, name, args.repeat)
            assert ours["tokens"] == peer[name]["tokens"], (name, ours, peer[name])
            b = best.setdefault(name, {"peer_ms": 1e9, "ours_ms": 1e9, "tokens": ours["tokens"],
                                       "peer": peer[name]["peer"]})
            b["peer_ms"] = min(b["peer_ms"], peer[name]["median_ms"])
            b["ours_ms"] = min(b["ours_ms"], ours["median_ms"])
    print("| forward, 224×224, one thread, every head captured | tokens | transformers | attnlens | speedup |")
    print("|---|---|---|---|---|")
    for name, b in best.items():
        b["speedup"] = b["peer_ms"] / b["ours_ms"]
        print(f"| {name} | {b['tokens']} | {b['peer_ms']:.1f} ms | {b['ours_ms']:.1f} ms | **{b['speedup']:.2f}×** |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(best, f, indent=1)


if __name__ == "__main__":
    main()
