#!/usr/bin/env python3
"""Train the built-in SigLIP model (issue 43): a tiny SiglipModel on the captioned 2×2 compositions of Fashion-MNIST
items (tools/train/t2i_data.py, as train_clip.py), with transformers' OWN SiglipModel and SiglipTokenizer (v4.50.3,
fetched as tools/golden/make_siglip_fixtures.py says, never committed), so the exported folder is what
SiglipModel.from_pretrained loads — and what the Vision page shows as the pooling probe's maps and text → patch
similarity.

Model: vision tower hidden 128, 4 layers × 4 heads, MLP 512, 64×64 input in patches of 8 (an 8×8 grid, no CLS),
gelu_pytorch_tanh, the attention-pooling head; text tower hidden 128, 4 layers × 4 heads, MLP 512, 32 positions
(texts padded to 32 with the EOS, no mask, as SigLIP pads to 64), projection 128 (= the image embedding's width).
Tokenizer: a SentencePiece unigram model trained here on captions (pad 0, eos 1, unk 2; spiece.model), saved by
SiglipTokenizer (model_max_length 32). Losses:
  sigmoid     SigLIP's pairwise sigmoid loss over the batch (Zhai et al. 2023): −log σ(z_ij · (t · cos + b)), z = +1
              for a picture and its caption (or an identical caption), −1 otherwise, summed over texts and averaged
              over pictures; learnt t = exp(logit_scale) (init log 10) and b (init −10), as the paper
  alignment   (--align-weight) per item of a picture, the softmax over the 64 patches of 10 · cos(patch feature,
              text embedding of "a NAME") should fall inside the item's cell: (1 − share inside)² (train_clip.py's);
              a patch's feature is the pooling head applied to that patch alone (what the engine maps)
Evaluation (--eval, and at the end; TEST split, 512 compositions, fixed seed): retrieval top-1 both ways among
128, zero-shot item (one-item pictures, "a NAME" among the 10), localisation (the patch most similar to "a NAME"
lies in the item's cell; chance 25 %), and the probe's share on the items' cells (its heads' mean attention).

    TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/train/train_siglip.py --work /tmp/siglip-work \\
        --minutes 40 --export resources/models/siglip-fashion-tiny
Run the same command again to go on from the checkpoint in --work.

    /usr/bin/python3 tools/train/train_siglip.py --engine build/release/app/attnlens-cli \\
        --model resources/models/siglip-fashion-tiny [--pictures 100]
measures the exported folder THROUGH THIS ENGINE (`attnlens-cli vision --texts` with the ten "a NAME" texts and
--json) on other test compositions (seed 777): the patch most similar to each item's text in its cell, the same for
the relevance map, the probe's share (heads' mean) on the items' cells, zero-shot on one-item pictures; a JSON line.
"""
import argparse
import json
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
HERE = os.path.dirname(os.path.abspath(__file__))
TAG = "v4.50.3"

VISION = dict(hidden_size=128, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4, image_size=64,
              patch_size=8, num_channels=3, hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6)
TEXT = dict(hidden_size=128, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4,
            max_position_embeddings=32, hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6, projection_size=128,
            pad_token_id=1, bos_token_id=None, eos_token_id=1)
POSITIONS = 32
PROCESSOR = dict(do_resize=True, size={"height": 64, "width": 64}, resample=3, do_rescale=True,
                 rescale_factor=1 / 255, do_normalize=True, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])


def pixels(torch, images_u8):
    """[B, 64, 64] uint8 grey → [B, 3, 64, 64] as SiglipImageProcessor gives it (RGB, rescaled, mean = std = 0.5)."""
    return torch.from_numpy(images_u8).float().div(127.5).sub(1.0).unsqueeze(1).expand(-1, 3, -1, -1)


def train_tokenizer(work, t2i_data):
    """spiece.model: a unigram SentencePiece model on captions (its pieces end up whole words)."""
    import numpy as np
    import sentencepiece as spm
    path = os.path.join(work, "spiece")
    if os.path.exists(path + ".model"):
        return path + ".model"
    rng = np.random.default_rng(7)
    lines = []
    for _ in range(20000):
        n = int(rng.integers(1, 4))
        cells = rng.permutation(4)[:n]
        lines.append(t2i_data.caption([(int(rng.integers(0, 10)), int(c)) for c in cells], rng).replace(",", ""))
    with open(path + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    spm.SentencePieceTrainer.train(input=path + ".txt", model_prefix=path, vocab_size=64, model_type="unigram",
                                   pad_id=0, eos_id=1, unk_id=2, bos_id=-1, hard_vocab_limit=False,
                                   minloglevel=2)
    import vision_goldens
    vision_goldens.anonymize_sentencepiece(path + ".model")
    return path + ".model"


def tokenizer(transformers, spm_path):
    return transformers.SiglipTokenizer(spm_path, model_max_length=POSITIONS, model_input_names=["input_ids"])


def ids(tok, captions):
    return tok(captions, padding="max_length", max_length=POSITIONS, truncation=True, return_tensors="pt").input_ids


def patch_features(model, torch, hidden):
    """Each patch through the pooling head's value path alone: x = out_proj(v_proj(h)), x + mlp(layernorm(x))."""
    head = model.vision_model.head
    d = hidden.shape[-1]
    mha = head.attention
    x = mha.out_proj(torch.nn.functional.linear(hidden, mha.in_proj_weight[2 * d:], mha.in_proj_bias[2 * d:]))
    return x + head.mlp(head.layernorm(x))


def features(model, torch, px):
    """→ (image embeds [B, D], patch features [B, N, D], probe attention [B, N] heads' mean), embeds normalised."""
    out = model.vision_model(pixel_values=px)
    h = out.last_hidden_state
    head = model.vision_model.head
    _, probe = head.attention(head.probe.repeat(h.shape[0], 1, 1), h, h)  # averaged over heads
    image, patches = out.pooler_output, patch_features(model, torch, h)
    return (image / image.norm(dim=-1, keepdim=True), patches / patches.norm(dim=-1, keepdim=True),
            probe[:, 0, :])


def text_features(model, tokens):
    t = model.get_text_features(input_ids=tokens)
    return t / t.norm(dim=-1, keepdim=True)


def evaluate(model, torch, t2i_data, tok, masks, train_clip):
    data = t2i_data.Compositions("test", seed=4321)
    words = ids(tok, [f"a {n}" for n in t2i_data.NAMES])
    hits = {"i2t": 0, "t2i": 0, "pairs": 0, "zero_shot": 0, "single": 0, "located": 0, "items": 0}
    probe_share, probe_n = 0.0, 0
    model.eval()
    with torch.no_grad():
        w = text_features(model, words)
        for _ in range(4):
            images, captions, layouts = data.batch(128)
            img, patches, probe = features(model, torch, pixels(torch, images))
            txt = text_features(model, ids(tok, captions))
            sim = img @ txt.T
            same = [[captions[i] == captions[j] for j in range(len(captions))] for i in range(len(captions))]
            hits["i2t"] += sum(same[i][int(j)] for i, j in enumerate(sim.argmax(1)))
            hits["t2i"] += sum(same[int(j)][i] for i, j in enumerate(sim.argmax(0)))
            hits["pairs"] += len(captions)
            zs = (img @ w.T).argmax(1)
            for b, layout in enumerate(layouts):
                if len(layout) == 1:
                    hits["single"] += 1
                    hits["zero_shot"] += int(zs[b]) == layout[0][0]
                cells = torch.zeros(64)
                for cls, cell in layout:
                    best = int((patches[b] @ w[cls]).argmax())
                    hits["items"] += 1
                    hits["located"] += bool(masks[cell, best] > 0)
                    cells = torch.maximum(cells, masks[cell])
                probe_share += float((probe[b] * cells).sum())
                probe_n += 1
    model.train()
    return {"retrieval_image_to_text": hits["i2t"] / hits["pairs"],
            "retrieval_text_to_image": hits["t2i"] / hits["pairs"],
            "zero_shot_single_item": hits["zero_shot"] / max(1, hits["single"]),
            "single_item_pictures": hits["single"], "localised_items": hits["located"] / hits["items"],
            "items": hits["items"], "probe_share_on_items": probe_share / max(1, probe_n)}


def write_card(folder, record, metrics):
    c = record.get("config", {})
    lines = [
        "# siglip-fashion-tiny", "",
        "A tiny SiglipModel (transformers' own class, `save_pretrained`) trained by `tools/train/train_siglip.py` on "
        "captioned 2×2 compositions of Fashion-MNIST items (64×64, `tools/train/t2i_data.py`), shipped for the "
        "Vision page (File → Open model…): no CLS — the attention-pooling head's probe sums the picture up. Vision "
        "tower: hidden 128, 4 layers × 4 heads, patch 8 (an 8×8 grid); text tower: hidden 128, 4 layers × 4 heads, "
        "32 positions, a 64-piece SentencePiece model of the captions.", "",
        f"Training: {record['step']:,} steps of batch {c.get('batch')} (lr {c.get('lr')}, AdamW), "
        f"{record['seconds'] / 60:.0f} minutes on {c.get('threads', 1)} CPU thread(s), beside other work; SigLIP's sigmoid loss plus a patch alignment loss "
        f"(weight {c.get('align_weight')}: each item's patch-softmax of its \"a NAME\" text should fall in its cell).",
        "", "Evaluation on TEST-split compositions (512 pictures, fixed seed; `train_siglip.py --eval`):", "",
        "| measure | value | chance |", "|---|---|---|",
        f"| retrieval, picture → its caption among 128 | {100 * metrics['retrieval_image_to_text']:.1f} % | 0.8 % |",
        f"| retrieval, caption → its picture among 128 | {100 * metrics['retrieval_text_to_image']:.1f} % | 0.8 % |",
        f"| zero-shot item, one-item pictures, 10 \"a NAME\" prompts ({metrics['single_item_pictures']}) | "
        f"{100 * metrics['zero_shot_single_item']:.1f} % | 10 % |",
        f"| localisation: the patch most similar to \"a NAME\" in the item's cell ({metrics['items']} items) | "
        f"{100 * metrics['localised_items']:.1f} % | 25 % |",
        f"| the pooling probe's attention (heads' mean) on the items' cells | "
        f"{100 * metrics['probe_share_on_items']:.1f} % | 25–75 % (the cells' share) |", "",
        "`samples/`: four test-split compositions (`samples.json` names their items and cells).", "",
        "| step | minutes | loss | share inside | t | b |", "|---|---|---|---|---|---|"]
    log = record["log"]
    for row in log[:: max(1, len(log) // 12)] + log[-1:]:
        lines.append(f"| {row['step']:,} | {row['minutes']:.1f} | {row['loss']:.3f} | {row['share']:.2f} | "
                     f"{row['scale']:.1f} | {row['bias']:.2f} |")
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def export(model, transformers, t2i_data, train_clip, spm_path, folder, record, metrics):
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer(transformers, spm_path).save_pretrained(folder)
    transformers.SiglipImageProcessor(**PROCESSOR).save_pretrained(folder)
    train_clip.write_samples(t2i_data, folder)
    write_card(folder, record, metrics)
    with open(os.path.join(folder, "training.json"), "w") as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(folder, "eval.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    print(f"exported {folder}", flush=True)


def sigmoid_loss(torch, img, txt, captions, scale, bias):
    logits = scale * img @ txt.T + bias
    same = torch.tensor([[a == b for b in captions] for a in captions], dtype=torch.float32)
    labels = 2 * same - 1
    return -torch.nn.functional.logsigmoid(labels * logits).sum(1).mean()


def setup(args):
    sys.path.insert(0, HERE)
    import fast_blas  # noqa: F401
    import make_llm_fixtures
    make_llm_fixtures.install_shims(TAG)
    import torch
    import transformers
    import t2i_data
    import train_clip
    import vision_goldens
    vision_goldens.hashable_added_token(transformers)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.work, exist_ok=True)
    return torch, transformers, t2i_data, train_clip


def worker(args):
    torch, transformers, t2i_data, train_clip = setup(args)
    spm_path = train_tokenizer(args.work, t2i_data)
    tok = tokenizer(transformers, spm_path)
    cfg = transformers.SiglipConfig(text_config=dict(TEXT, vocab_size=len(tok)), vision_config=VISION)
    model = transformers.SiglipModel(cfg)
    with torch.no_grad():
        model.logit_scale.fill_(2.302585)  # log 10
        model.logit_bias.fill_(-10.0)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    masks = train_clip.cell_masks(torch, t2i_data)
    ck = os.path.join(args.work, "siglip.pt")
    record = train_clip.resume(torch, ck, model, opt, {"step": 0, "seconds": 0.0, "log": [], "config": {
        "batch": args.batch, "lr": args.lr, "align_weight": args.align_weight, "threads": args.threads}})
    if args.eval:
        metrics = evaluate(model, torch, t2i_data, tok, masks, train_clip)
        print(json.dumps(metrics))
        if args.export:
            export(model, transformers, t2i_data, train_clip, spm_path, args.export, record, metrics)
        return
    data = t2i_data.Compositions("train", seed=args.seed + record["step"])
    words = ids(tok, [f"a {n}" for n in t2i_data.NAMES])

    def step(images, captions, layouts):
        img, patches, _ = features(model, torch, pixels(torch, images))
        txt = text_features(model, ids(tok, captions))
        scale = model.logit_scale.exp()
        loss = sigmoid_loss(torch, img, txt, captions, scale, model.logit_bias)
        share = None
        if args.align_weight > 0:
            align, share = train_clip.alignment(torch, patches, text_features(model, words), layouts, masks)
            loss = loss + args.align_weight * align
        return loss, share, {"scale": float(scale), "bias": float(model.logit_bias)}

    save = train_clip.train_loop(torch, args, model, opt, record, ck, data, step)
    metrics = evaluate(model, torch, t2i_data, tok, masks, train_clip)
    record["eval"] = metrics
    save()
    print(json.dumps(metrics), flush=True)
    if args.export:
        export(model, transformers, t2i_data, train_clip, spm_path, args.export, record, metrics)


def engine_eval(cli, model, pictures):
    """The exported folder through attnlens-cli (see the docstring)."""
    import subprocess
    import tempfile
    import numpy as np
    from PIL import Image
    sys.path.insert(0, HERE)
    import t2i_data
    data = t2i_data.Compositions("test", seed=777)
    texts = "|".join(f"a {n}" for n in t2i_data.NAMES)
    hits = {"similarity": 0, "relevance": 0, "items": 0, "zero_shot": 0, "single": 0}
    probe_share = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(pictures):
            layout = data.layout()
            png, out = os.path.join(tmp, f"{i}.png"), os.path.join(tmp, f"{i}.json")
            Image.fromarray(data.draw(layout)).save(png)
            subprocess.run([cli, "vision", "--model", model, "--texts", texts, "--json", out, png], check=True,
                           capture_output=True)
            with open(out) as f:
                j = json.load(f)
            runs = j["clip"]["texts"]
            rows, cols = j["grid"]
            cell_of = lambda r, c: (r * 2 // rows) * 2 + c * 2 // cols  # noqa: E731
            for cls, cell in layout:
                for measure in ("similarity", "relevance"):
                    m = np.array(runs[cls][measure])
                    r, c = np.unravel_index(int(m.argmax()), m.shape)
                    hits[measure] += cell_of(r, c) == cell
                hits["items"] += 1
            probe = np.array(j["probe_attention"]).mean(0).reshape(rows, cols)
            inside = np.zeros((rows, cols), dtype=bool)
            for _, cell in layout:
                r, c = divmod(cell, 2)
                inside[r * rows // 2:(r + 1) * rows // 2, c * cols // 2:(c + 1) * cols // 2] = True
            probe_share += float(probe[inside].sum())
            if len(layout) == 1:
                hits["single"] += 1
                hits["zero_shot"] += int(np.argmax([t["prob"] for t in runs])) == layout[0][0]
    print(json.dumps({"pictures": pictures, "items": hits["items"],
                      "similarity_in_cell": hits["similarity"] / hits["items"],
                      "relevance_in_cell": hits["relevance"] / hits["items"],
                      "probe_share_on_items": probe_share / pictures,
                      "zero_shot_single_item": hits["zero_shot"] / max(1, hits["single"]),
                      "single_item_pictures": hits["single"]}))


def main():
    if sys.argv[1:2] == ["--engine"]:
        ap = argparse.ArgumentParser()
        ap.add_argument("--engine", required=True)
        ap.add_argument("--model", required=True)
        ap.add_argument("--pictures", type=int, default=100)
        a = ap.parse_args()
        return engine_eval(a.engine, a.model, a.pictures)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sys.path.insert(0, HERE)
    import train_clip
    train_clip.add_arguments(ap, "SiglipModel")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    sys.path.insert(0, os.path.join(HERE, "..", "golden"))
    import make_llm_fixtures
    src = os.environ.get("TRANSFORMERS_SRC", "/tmp/llmgold")
    make_llm_fixtures.run_worker(src, TAG, ["--worker"] + sys.argv[1:], script=__file__)


if __name__ == "__main__":
    main()
