#!/usr/bin/env python3
"""Measure the built-in text-to-image model the way issue 41's acceptance check does, with our own tools only.

The 50 held-out compositions of tools/train/t2i_data.py (pairs of (item, cell) never shown together in
training) are generated from "a A in the CELL_A and a B in the CELL_B" by `attnlens-cli t2i --maps`. For each
named item:
  localised   its word's DAAM map (the mean over steps and cross-attention layers, upsampled) has its largest
              mean over the 2×2 cells in the cell the prompt names;
  recognised  the built-in Fashion-MNIST ViT (`attnlens-cli vision`) sees that item in that cell's 28×28 crop.
A prompt passes when both items are localised and recognised. Writes into the model folder:
  samples.png   every image, the first item's map beside it, what the ViT saw in each named cell
  eval.json     per prompt: the cells the maps peak in, the ViT's top-1 per cell, pass or not; the counts
and replaces the "## Quality" section of the folder's README.md (the model card) with the result.

  /usr/bin/python3 tools/train/eval_t2i.py [--model resources/models/sd-fashion-tiny]
                                           [--cli build/release/app/attnlens-cli] [--steps 25] [--guidance 5]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import t2i_data  # noqa: E402
from fashion_data import CLASSES, REPO  # noqa: E402
from eval_unet import font, run, update_card, QUALITY  # noqa: E402

from PIL import Image, ImageDraw  # noqa: E402


def cell_of(word_map):
    """The 2×2 cell (2·row + column) with the largest mean of a [H, W] map."""
    h, w = word_map.shape
    means = [word_map[r * h // 2:(r + 1) * h // 2, c * w // 2:(c + 1) * w // 2].mean() for r in (0, 1) for c in (0, 1)]
    return int(np.argmax(means))


def vit_top1(cli, image, cell, tmp):
    h, w = image.shape[:2]
    r, c = divmod(cell, 2)
    s = h / t2i_data.CANVAS  # the item's square in its cell (t2i_data's geometry), at the image's scale
    y, x = (round((k * t2i_data.CELL + t2i_data.OFFSET) * s) for k in (r, c))
    n = round(t2i_data.ITEM * s)
    crop = image[y:y + n, x:x + n]
    grey = Image.fromarray(crop).convert("L").resize((28, 28), Image.BILINEAR)
    path = os.path.join(tmp, "cell.png")
    grey.save(path)
    label, prob = run([cli, "vision", path]).splitlines()[0].split("\t")
    return label, float(prob)


def heat(word_map, size):
    m = (word_map - word_map.min()) / max(float(np.ptp(word_map)), 1e-12)
    rgb = np.stack([m, m ** 2, 1 - m], -1) * 255  # a plain blue→red ramp for the sheet
    return Image.fromarray(rgb.astype(np.uint8)).resize((size, size), Image.NEAREST)


def sheet(rows, path, scale=3):
    """rows: (image png, first item's map, prompt, pass)."""
    tile, text_h = t2i_data.CANVAS * scale, 26
    cols = 5
    w = cols * (2 * tile + 12)
    h = (len(rows) + cols - 1) // cols * (tile + text_h + 8)
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    f = font(10)
    for i, (png, word_map, prompt, ok) in enumerate(rows):
        x, y = (i % cols) * (2 * tile + 12), (i // cols) * (tile + text_h + 8)
        img.paste(Image.open(png).convert("RGB").resize((tile, tile), Image.NEAREST), (x, y))
        img.paste(heat(word_map, tile), (x + tile + 2, y))
        colour = (0, 110, 0) if ok else (190, 0, 0)
        d.text((x, y + tile + 1), prompt[:44], fill=colour, font=f)
        d.text((x, y + tile + 13), prompt[44:88], fill=colour, font=f)
    img.save(path)


def evaluate(args, vocab, tmp):
    results, rows = [], []
    for i, pair in enumerate(t2i_data.HELD_OUT):
        prompt = t2i_data.eval_prompt(pair, args.place_first)
        png, maps = os.path.join(tmp, f"p{i}.png"), os.path.join(tmp, f"p{i}.npy")
        run([args.cli, "t2i", "--model", args.model, "--prompt", prompt, "--seed", str(args.seed), "--steps",
             str(args.steps), "--guidance", str(args.guidance), "--out", png, "--maps", maps])
        image, word_maps = np.array(Image.open(png).convert("RGB")), np.load(maps)
        ids = list(t2i_data.encode([prompt], vocab)[0])
        items, ok, first_map = [], True, None
        for cls, cell in pair:
            position = ids.index(vocab[t2i_data.NAMES[cls] + "</w>"])
            peak = cell_of(word_maps[position])
            label, prob = vit_top1(args.cli, image, cell, tmp)
            item = {"item": t2i_data.NAMES[cls], "cell": t2i_data.CELLS[cell], "map_peak":
                    t2i_data.CELLS[peak], "localised": peak == cell, "vit_top1": label, "prob": prob,
                    "recognised": label == CLASSES[cls]}
            ok = ok and item["localised"] and item["recognised"]
            items.append(item)
            first_map = word_maps[position] if first_map is None else first_map
        results.append({"prompt": prompt, "items": items, "pass": ok})
        rows.append((png, first_map, prompt, ok))
        print(f"{'PASS' if ok else 'fail'}  {prompt}: " + ", ".join(
            f"{it['item']} map→{it['map_peak']} vit→{it['vit_top1']}" for it in items), flush=True)
    sheet(rows, os.path.join(args.model, "samples.png"))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(REPO, "resources", "models", "sd-fashion-tiny"))
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--guidance", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--place-first", action="store_true",
                    help='prompts "in the CELL_A a A and in the CELL_B a B": with a causal (CLIP) text encoder a '
                         "word carries only what comes before it, so only there does the item's own word know its place")
    args = ap.parse_args()
    vocab = t2i_data.clip_vocabulary()[0]
    with tempfile.TemporaryDirectory() as tmp:
        results = evaluate(args, vocab, tmp)
    passed = sum(r["pass"] for r in results)
    items = [it for r in results for it in r["items"]]
    localised, recognised = sum(it["localised"] for it in items), sum(it["recognised"] for it in items)
    with open(os.path.join(args.model, "eval.json"), "w", encoding="utf-8") as f:
        json.dump({"steps": args.steps, "guidance": args.guidance, "seed": args.seed, "scheduler": "pndm",
                   "place_first": args.place_first,
                   "passed": passed, "total": len(results), "items_localised": localised,
                   "items_recognised": recognised, "items": len(items), "prompts": results}, f, indent=1)
    text = "\n".join([
        QUALITY,
        f"Measured by `tools/train/eval_t2i.py` with our own engine on the {len(results)} held-out compositions "
        f"(pairs of item and cell never shown together in training; PNDM {args.steps} steps, guidance "
        f"{args.guidance:g}, seed {args.seed}): **{passed} of {len(results)}** prompts have both named items' maps "
        "peaking in the cell the prompt names and the built-in ViT recognising both items there.",
        "",
        f"Of the {len(items)} items: {localised} localised (the word's aggregated map peaks in its cell), "
        f"{recognised} recognised (`attnlens-cli vision` on the cell's crop).",
        "",
        "![The 50 held-out prompts: each image with the first named item's aggregated map beside it (green: "
        "the prompt passes)](samples.png)",
        "",
    ])
    update_card(os.path.join(args.model, "README.md"), text)
    print(f"{passed} of {len(results)} prompts pass; items localised {localised}/{len(items)}, recognised "
          f"{recognised}/{len(items)}")


if __name__ == "__main__":
    main()
