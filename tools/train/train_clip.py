#!/usr/bin/env python3
"""Train the built-in CLIP model (issue 43): a tiny CLIPModel on the captioned 2×2 compositions of Fashion-MNIST
items the text-to-image model learnt from (tools/train/t2i_data.py), with transformers' OWN CLIPModel (fetched as
tools/golden/make_t2i_fixtures.py says, never committed), so the exported folder is what CLIPModel.from_pretrained
loads — and what the Vision page shows as "text → patch relevance".

Model: vision tower hidden 128, 4 layers × 4 heads, MLP 512, 64×64 input in patches of 8 (an 8×8 grid: each
32×32 cell of the canvas is 4×4 patches); text tower hidden 128, 4 layers × 4 heads, MLP 512, 32 positions, the
caption vocabulary (t2i_data's CLIP-layout tokenizer); projection 64; quick_gelu. Losses:
  contrastive  CLIP's symmetric cross-entropy over the batch, learnt logit scale (init 2.6592, clamped at 100)
  alignment    (--align-weight) per item of a picture, the softmax over the 64 patches of
               10 · cos(visual_projection(post_layernorm(patch)), text embedding of "a NAME") should fall inside
               the item's cell: (1 − share inside)², as the t2i model's grounding loss (TokenCompose) and the
               patch-level objectives of FILIP / PACL (Mukhoti et al. 2023) — CLIP's contrastive loss alone
               trains only the CLS token, so its patch tokens' projections need not point at the words.
Evaluation (--eval, and at the end; on the TEST split, 512 compositions, fixed seed): retrieval (each picture's
caption among the 128 of its batch, top-1, both ways), zero-shot item (pictures of one item, "a NAME" among the
10), localisation (each item of a picture: the patch most similar to "a NAME" lies in its cell; chance 25 %).

    DIFFUSERS_SRC=/tmp/llmgold /usr/bin/python3 tools/train/train_clip.py --work /tmp/clip-work --minutes 40 \\
        --export resources/models/clip-fashion-tiny
Run the same command again to go on from the checkpoint in --work.
"""
import argparse
import json
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))

VISION = dict(hidden_size=128, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4, image_size=64,
              patch_size=8, num_channels=3, hidden_act="quick_gelu")
TEXT = dict(hidden_size=128, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4,
            max_position_embeddings=32, hidden_act="quick_gelu")
PROJECTION = 64
MEAN = [0.48145466, 0.4578275, 0.40821073]
STD = [0.26862954, 0.26130258, 0.27577711]
PROCESSOR = dict(do_resize=True, size={"shortest_edge": 64}, resample=3, do_center_crop=True,
                 crop_size={"height": 64, "width": 64}, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
                 image_mean=MEAN, image_std=STD, do_convert_rgb=True)
POSITIONS = 32


def pixels(torch, images_u8):
    """[B, 64, 64] uint8 grey → [B, 3, 64, 64] as CLIPImageProcessor gives it (RGB, rescaled, normalised)."""
    x = torch.from_numpy(images_u8).float().div(255.0).unsqueeze(1).expand(-1, 3, -1, -1)
    return (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)


def ids(torch, t2i_data, captions, vocab):
    return torch.from_numpy(t2i_data.encode(captions, vocab)[:, :POSITIONS])


def cell_masks(torch, t2i_data):
    """[4, 64] which of the 8×8 patches lie in each cell (cell = 2·row + column)."""
    m = torch.zeros(4, 8, 8)
    for cell in range(4):
        r, c = divmod(cell, 2)
        m[cell, 4 * r:4 * r + 4, 4 * c:4 * c + 4] = 1
    return m.view(4, 64)


def features(model, torch, px):
    """→ (image embeds [B, P], patch embeds [B, N, P]), both normalised."""
    out = model.vision_model(pixel_values=px)
    image = model.visual_projection(out.pooler_output)
    patches = model.visual_projection(model.vision_model.post_layernorm(out.last_hidden_state[:, 1:]))
    return image / image.norm(dim=-1, keepdim=True), patches / patches.norm(dim=-1, keepdim=True)


def text_features(model, tokens):
    t = model.get_text_features(input_ids=tokens)
    return t / t.norm(dim=-1, keepdim=True)


def alignment(torch, patches, words, layouts, masks):
    """(1 − share of each item's patch-softmax inside its cell)², mean over items; and the mean share."""
    items = [(b, cls, cell) for b, layout in enumerate(layouts) for cls, cell in layout]
    b, cls, cell = (torch.tensor(v) for v in zip(*items))
    sims = 10.0 * torch.einsum("inp,ip->in", patches[b], words[cls])  # [items, N]
    share = (sims.softmax(-1) * masks[cell]).sum(-1)
    return ((1 - share) ** 2).mean(), float(share.mean())


def evaluate(model, torch, t2i_data, vocab, masks):
    data = t2i_data.Compositions("test", seed=4321)
    words = ids(torch, t2i_data, [f"a {n}" for n in t2i_data.NAMES], vocab)
    hits = {"retrieval_i2t": 0, "retrieval_t2i": 0, "pairs": 0, "zero_shot": 0, "single": 0, "located": 0,
            "items": 0}
    model.eval()
    with torch.no_grad():
        w = text_features(model, words)
        for _ in range(4):
            images, captions, layouts = data.batch(128)
            img, patches = features(model, torch, pixels(torch, images))
            txt = text_features(model, ids(torch, t2i_data, captions, vocab))
            sim = img @ txt.T
            target = torch.arange(len(captions))
            same = [[captions[i] == captions[j] for j in range(len(captions))] for i in range(len(captions))]
            hits["retrieval_i2t"] += sum(same[i][int(j)] for i, j in enumerate(sim.argmax(1)))
            hits["retrieval_t2i"] += sum(same[int(j)][i] for i, j in enumerate(sim.argmax(0)))
            hits["pairs"] += len(target)
            zs = (img @ w.T).argmax(1)
            for b, layout in enumerate(layouts):
                if len(layout) == 1:
                    hits["single"] += 1
                    hits["zero_shot"] += int(zs[b]) == layout[0][0]
                for cls, cell in layout:
                    best = int((patches[b] @ w[cls]).argmax())
                    hits["items"] += 1
                    hits["located"] += bool(masks[cell, best] > 0)
    model.train()
    return {"retrieval_image_to_text": hits["retrieval_i2t"] / hits["pairs"],
            "retrieval_text_to_image": hits["retrieval_t2i"] / hits["pairs"],
            "zero_shot_single_item": hits["zero_shot"] / max(1, hits["single"]),
            "single_item_pictures": hits["single"],
            "localised_items": hits["located"] / hits["items"], "items": hits["items"]}


SAMPLES = [  # (file, layout): test-split pictures shipped beside the model for the README and the tests
    ("bag-sneaker.png", [(8, 0), (7, 3)]), ("dress-boot-coat.png", [(3, 1), (9, 2), (4, 3)]),
    ("trousers.png", [(1, 2)]), ("sandal-shirt.png", [(5, 1), (6, 2)]),
]


def write_samples(t2i_data, folder):
    """samples/*.png (64×64 compositions of TEST-split items, grey) and samples/samples.json with each one's
    caption and layout."""
    from PIL import Image
    data = t2i_data.Compositions("test", seed=99)
    d = os.path.join(folder, "samples")
    os.makedirs(d, exist_ok=True)
    index = []
    for name, layout in SAMPLES:
        Image.fromarray(data.draw(layout)).save(os.path.join(d, name))
        index.append({"file": name, "layout": [{"item": t2i_data.NAMES[c], "cell": t2i_data.CELLS[cell]}
                                               for c, cell in layout]})
    with open(os.path.join(d, "samples.json"), "w") as f:
        json.dump(index, f, indent=1)


def write_card(folder, record, metrics):
    c = record.get("config", {})
    lines = [
        "# clip-fashion-tiny", "",
        "A tiny CLIPModel (transformers' own class, `save_pretrained`) trained by `tools/train/train_clip.py` on "
        "captioned 2×2 compositions of Fashion-MNIST items (64×64, `tools/train/t2i_data.py`), shipped for "
        "the Vision page's Texts box (File → Open model…). Vision tower: hidden 128, 4 layers × 4 heads, patch 8 (an 8×8 grid); text "
        "tower: hidden 128, 4 layers × 4 heads, 32 positions, the captions' vocabulary; projection 64.", "",
        f"Training: {record['step']:,} steps of batch {c.get('batch')} (lr {c.get('lr')}, AdamW), "
        f"{record['seconds'] / 60:.0f} minutes on two CPU threads; CLIP's contrastive loss plus a patch alignment "
        f"loss (weight {c.get('align_weight')}: each item's patch-softmax of its \"a NAME\" text should fall in its "
        "cell — CLIP's own loss trains only the CLS token).", "",
        "Evaluation on TEST-split compositions (512 pictures, fixed seed; `train_clip.py --eval`):", "",
        "| measure | value | chance |", "|---|---|---|",
        f"| retrieval, picture → its caption among 128 | {100 * metrics['retrieval_image_to_text']:.1f} % | 0.8 % |",
        f"| retrieval, caption → its picture among 128 | {100 * metrics['retrieval_text_to_image']:.1f} % | 0.8 % |",
        f"| zero-shot item, one-item pictures, 10 \"a NAME\" prompts ({metrics['single_item_pictures']}) | "
        f"{100 * metrics['zero_shot_single_item']:.1f} % | 10 % |",
        f"| localisation: the patch most similar to \"a NAME\" in the item's cell ({metrics['items']} items) | "
        f"{100 * metrics['localised_items']:.1f} % | 25 % |", "",
        "`samples/`: four test-split compositions (`samples.json` names their items and cells).", "",
        "| step | minutes | loss | share inside | logit scale |", "|---|---|---|---|---|"]
    log = record["log"]
    for row in log[:: max(1, len(log) // 12)] + log[-1:]:
        lines.append(f"| {row['step']:,} | {row['minutes']:.1f} | {row['loss']:.3f} | {row['share']:.2f} | "
                     f"{row['scale']:.1f} |")
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def export(model, transformers, t2i_data, folder, record, metrics):
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    t2i_data.write_tokenizer(folder)
    write_samples(t2i_data, folder)
    write_card(folder, record, metrics)
    transformers.CLIPImageProcessor(**PROCESSOR).save_pretrained(folder)
    with open(os.path.join(folder, "training.json"), "w") as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(folder, "eval.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    print(f"exported {folder}", flush=True)


def resume(torch, ck, model, opt, record):
    """The checkpoint in --work, if any, loaded into model and opt; the training record to go on with."""
    if not os.path.exists(ck):
        return record
    state = torch.load(ck)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    print(f"resumed at step {state['record']['step']}", flush=True)
    return state["record"]


def train_loop(torch, args, model, opt, record, ck, data, step):
    """The resumable loop of both trainers (this one and train_siglip.py): step(images, captions, layouts) →
    (loss, alignment share or None, extra log fields); a log row every 100 steps, a checkpoint every
    --checkpoint-minutes and at the end. Returns save() for the caller's last record."""
    start, last, base = time.time(), time.time(), record["seconds"]
    losses, shares = [], []
    model.train()

    def save():
        record["seconds"] = base + time.time() - start
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "record": record}, ck + ".tmp")
        os.replace(ck + ".tmp", ck)

    while time.time() - start < args.minutes * 60:
        loss, share, extra = step(*data.batch(args.batch))
        if share is not None:
            shares.append(share)
        opt.zero_grad()
        loss.backward()
        opt.step()
        record["step"] += 1
        losses.append(float(loss))
        if record["step"] % 100 == 0:
            row = {"step": record["step"], "minutes": round((base + time.time() - start) / 60, 2),
                   "loss": sum(losses) / len(losses), "share": sum(shares) / max(1, len(shares)), **extra}
            record["log"].append(row)
            print(json.dumps(row), flush=True)
            losses, shares = [], []
        if time.time() - last > args.checkpoint_minutes * 60:
            save()
            last = time.time()
    save()
    return save


def add_arguments(ap, what):
    """The options both trainers take."""
    ap.add_argument("--work", required=True)
    ap.add_argument("--minutes", type=float, default=40.0)
    ap.add_argument("--checkpoint-minutes", type=float, default=5.0)
    ap.add_argument("--export", help=f"write the {what} folder here at the end")
    ap.add_argument("--eval", action="store_true", help="only evaluate the checkpoint in --work (and --export it)")
    ap.add_argument("--align-weight", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", action="store_true")


def worker(args):
    sys.path.insert(0, HERE)
    import fast_blas  # noqa: F401
    import torch
    import transformers
    import t2i_data
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.work, exist_ok=True)
    vocab, _ = t2i_data.clip_vocabulary()
    text = dict(TEXT, vocab_size=len(vocab), bos_token_id=vocab["<|startoftext|>"],
                eos_token_id=vocab["<|endoftext|>"], pad_token_id=vocab["<|endoftext|>"])
    model = transformers.CLIPModel(transformers.CLIPConfig(text_config=text, vision_config=VISION,
                                                           projection_dim=PROJECTION))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    masks = cell_masks(torch, t2i_data)
    ck = os.path.join(args.work, "clip.pt")
    record = resume(torch, ck, model, opt, {"step": 0, "seconds": 0.0, "log": [], "config": {
        "batch": args.batch, "lr": args.lr, "align_weight": args.align_weight}})
    if args.eval:
        metrics = evaluate(model, torch, t2i_data, vocab, masks)
        print(json.dumps(metrics))
        if args.export:
            export(model, transformers, t2i_data, args.export, record, metrics)
        return
    data = t2i_data.Compositions("train", seed=args.seed + record["step"])
    words = ids(torch, t2i_data, [f"a {n}" for n in t2i_data.NAMES], vocab)

    def step(images, captions, layouts):
        img, patches = features(model, torch, pixels(torch, images))
        txt = text_features(model, ids(torch, t2i_data, captions, vocab))
        scale = model.logit_scale.exp().clamp(max=100)
        logits = scale * img @ txt.T
        target = torch.arange(len(captions))
        loss = (torch.nn.functional.cross_entropy(logits, target) +
                torch.nn.functional.cross_entropy(logits.T, target)) / 2
        share = None
        if args.align_weight > 0:
            align, share = alignment(torch, patches, text_features(model, words), layouts, masks)
            loss = loss + args.align_weight * align
        return loss, share, {"scale": float(scale)}

    save = train_loop(torch, args, model, opt, record, ck, data, step)
    metrics = evaluate(model, torch, t2i_data, vocab, masks)
    record["eval"] = metrics
    save()
    print(json.dumps(metrics), flush=True)
    if args.export:
        export(model, transformers, t2i_data, args.export, record, metrics)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap, "CLIPModel")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    sys.path.insert(0, os.path.join(ROOT, "..", "tools", "golden"))
    sys.path.insert(0, os.path.join(HERE, "..", "golden"))
    import make_t2i_fixtures
    make_t2i_fixtures.run_with_diffusers(__file__, ["--worker"] + sys.argv[1:])


if __name__ == "__main__":
    main()
