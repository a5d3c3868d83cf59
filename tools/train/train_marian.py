#!/usr/bin/env python3
"""Train the built-in German->English translator with exact Hugging Face Marian semantics.

State-dict names equal MarianMTModel's (model.shared.weight, model.encoder.layers.{i}.self_attn.
q_proj.weight, ..., final_logits_bias); see docs/model-semantics.md:
post-norm layers, LayerNorm eps 1e-5, swish (SiLU), q scaled by head_dim^-0.5 after the bias,
additive masks with finfo(float32).min, embeddings x sqrt(d_model) + sinusoidal positions
(sin half first, cos half second, float64 -> float32, positions from 0), lm_head tied to
model.shared, + final_logits_bias.

Usage (see tools/train/README.md):
  train_marian.py --data build/train-work/data --spm build/train-work/spm --work build/train-work/marian \
      --minutes 90 [--resume]
  train_marian.py ... --export-only     # average last checkpoints, evaluate, export
"""
import argparse
import glob
import json
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before numpy and torch load OpenBLAS)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import metrics  # noqa: E402
from marian_torch import Tokenizer, MarianMTModel, build_vocab, greedy, translate  # noqa: E402
from marian_io import export_model, load_for_training, average_checkpoints  # noqa: E402
from prepare_data import eval_keys, evaluated, norm_key  # noqa: E402
from marian_card import model_card, saw_heldout  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


# ---------------------------------------------------------------------------------------- data
def read_tsv(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) == 2 and p[0] and p[1]:
                out.append((p[0], p[1]))
    return out


def encode_pairs(tok, pairs, max_len=100):
    res = []
    for d, e in pairs:
        s, t = tok.encode(d, "src"), tok.encode(e, "tgt")
        if len(s) <= max_len and len(t) <= max_len:
            res.append((s, t))
    return res


def make_epoch(sents, pools, max_tokens, seed):
    """All sentence pairs + random pairs of each (pairs, frac) pool making up ~frac of the epoch's
    tokens (phrases, extra corpora); batches of similar length up to max_tokens (padded src+tgt
    tokens)."""
    rng = random.Random(seed)
    sent_tok = sum(len(s) + len(t) for s, t in sents)
    rest = 1.0 - sum(f for _, f in pools)
    items = list(sents)
    for pairs, frac in pools:
        want = frac / rest * sent_tok
        got = 0
        for i in rng.sample(range(len(pairs)), len(pairs)):
            if got >= want:
                break
            items.append(pairs[i])
            got += len(pairs[i][0]) + len(pairs[i][1])
    items.sort(key=lambda p: (max(len(p[0]), len(p[1])) + rng.random() * 2))
    batches, cur, cur_max = [], [], 0
    for p in items:
        m = max(cur_max, len(p[0]), len(p[1]) + 1)
        if cur and m * 2 * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, m = [], max(len(p[0]), len(p[1]) + 1)
        cur.append(p)
        cur_max = m
    if cur:
        batches.append(cur)
    rng.shuffle(batches)
    return batches


def collate(batch, pad, start):
    S = max(len(s) for s, _ in batch)
    T = max(len(t) for _, t in batch)
    src = torch.full((len(batch), S), pad, dtype=torch.long)
    smask = torch.zeros((len(batch), S), dtype=torch.long)
    tin = torch.full((len(batch), T), pad, dtype=torch.long)
    lab = torch.full((len(batch), T), -100, dtype=torch.long)
    for i, (s, t) in enumerate(batch):
        src[i, :len(s)] = torch.tensor(s)
        smask[i, :len(s)] = 1
        tin[i, 0] = start
        tin[i, 1:len(t)] = torch.tensor(t[:-1])
        lab[i, :len(t)] = torch.tensor(t)
    return src, smask, tin, lab


# ------------------------------------------------------------------------------------ training
def lr_at(step, warmup, peak):
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/train-work/data")
    ap.add_argument("--spm", default="build/train-work/data/spm.model")
    ap.add_argument("--work", default="build/train-work/marian")
    ap.add_argument("--out", default=os.path.join(REPO, "resources/models/marian-de-en-tiny"))
    ap.add_argument("--train-split", default="train", choices=["train", "all"],
                    help="'all' also trains on the held-out sentences (final shipped model)")
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--enc-layers", type=int, default=3)
    ap.add_argument("--dec-layers", type=int, default=3)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=1024)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=800)
    ap.add_argument("--max-sent-len", type=int, default=0,
                    help="train only on sentence pairs with at most N pieces per side (incl. </s>); "
                         "0 = all (a compute-budget curriculum: short sentences first)")
    ap.add_argument("--new-epoch", action="store_true",
                    help="on --resume, start a fresh epoch (needed after changing the data options)")
    ap.add_argument("--phrase-frac", type=float, default=0.3)
    ap.add_argument("--extra", action="append", default=[], metavar="TSV",
                    help="more de<TAB>en sentence pairs (e.g. catalog_pairs.py's); sampled each epoch")
    ap.add_argument("--extra-frac", type=float, default=0.3,
                    help="share of an epoch's tokens drawn from the --extra pairs")
    ap.add_argument("--minutes", type=float, default=90.0, help="training wall-time budget")
    ap.add_argument("--more-minutes", type=float, default=0.0,
                    help="instead of --minutes: this many minutes more than the run has already had")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--ckpt-minutes", type=float, default=5.0)
    ap.add_argument("--snapshot-minutes", type=float, default=6.0,
                    help="save a weights snapshot for checkpoint averaging this often")
    ap.add_argument("--average", type=int, default=4, help="average the last N snapshots")
    ap.add_argument("--beam-test-limit", type=int, default=300,
                    help="beam-4 evaluation on the first N test sentences (greedy on all)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--init-from", default=None, metavar="FOLDER",
                    help="no checkpoint in --work: continue from an exported folder (weights, tokenizer and "
                         "the training record; the optimizer state restarts, warm-up included)")
    ap.add_argument("--export-only", action="store_true")
    ap.add_argument("--measure", type=int, default=0)
    ap.add_argument("--test-limit", type=int, default=0)
    ap.add_argument("--dev-limit", type=int, default=0)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high")  # TF32 matrix products for training on a GPU
    os.makedirs(args.work, exist_ok=True)
    tok_dir = os.path.join(args.work, "tok")
    ck_last = os.path.join(args.work, "last.pt")
    init = None
    if args.init_from and not os.path.exists(ck_last):
        init = load_for_training(args.init_from, tok_dir)
    if not os.path.exists(os.path.join(tok_dir, "vocab.json")):
        build_vocab(args.spm, tok_dir)
    tok = Tokenizer(tok_dir)
    V = len(tok.vocab)
    cfg = {"d_model": args.d, "encoder_layers": args.enc_layers, "decoder_layers": args.dec_layers,
           "encoder_attention_heads": args.heads, "decoder_attention_heads": args.heads,
           "encoder_ffn_dim": args.ffn, "decoder_ffn_dim": args.ffn, "vocab_size": V,
           "max_position_embeddings": 512, "pad_token_id": tok.pad, "eos_token_id": tok.eos,
           "decoder_start_token_id": tok.pad, "dropout": args.dropout, "attention_dropout": 0.0}
    state = {"epoch": 0, "batch": 0, "step": 0, "seconds": 0.0, "tokens": 0, "log": []}
    ck = None
    if (args.resume or args.export_only) and os.path.exists(ck_last):
        ck = torch.load(ck_last, weights_only=False)  # our own checkpoint (torch ≥ 2.6 defaults to True)
        cfg, state = ck["config"], ck["state"]
    elif init is not None:
        cfg, state, sd0 = init
        cfg = dict(cfg, dropout=args.dropout)
        ck = {"model": sd0}
        print(f"initialised from {args.init_from}: step {state['step']}", flush=True)
    model = MarianMTModel(cfg)
    if ck is not None:
        model.load_state_dict(ck["model"])
    nparams = sum(p.numel() for p in model.parameters())
    print(f"config {cfg}\nparams {nparams} device {device}", flush=True)

    sent_train = read_tsv(os.path.join(args.data, "sent_train.tsv"))
    if args.train_split == "all":
        sent_train += read_tsv(os.path.join(args.data, "sent_dev.tsv"))
        sent_train += read_tsv(os.path.join(args.data, "sent_test.tsv"))
    banned = eval_keys()  # the evaluation sets (tools/train/eval) are never trained on
    sent_train = [p for p in sent_train if not evaluated(p, banned)]
    test = read_tsv(os.path.join(args.data, "sent_test.tsv"))
    dev = read_tsv(os.path.join(args.data, "sent_dev.tsv"))
    # The dictionary's held-out sentences stay held out when another corpus has them too: such pairs
    # leave the --extra pool, and (conservatively, whatever an earlier run's pool held) those
    # sentences leave the dev and test measurements.
    extra_raw = [p for path in args.extra for p in read_tsv(path)]
    extra_de = {norm_key(d) for d, _ in extra_raw}
    held_de = {norm_key(d) for d, _ in test + dev}
    n_test, n_dev = len(test), len(dev)
    test = [p for p in test if norm_key(p[0]) not in extra_de]
    dev = [p for p in dev if norm_key(p[0]) not in extra_de]
    if len(test) < n_test or len(dev) < n_dev:
        print(f"held-out sentences also in --extra, left out of the measurements: test {n_test - len(test)}, "
              f"dev {n_dev - len(dev)}", flush=True)
    state["eval_excluded"] = {"test": n_test - len(test), "dev": n_dev - len(dev)}
    everyday = open(os.path.join(args.data, "everyday.txt"), encoding="utf-8").read().split("\n")
    everyday = [s for s in everyday if s]

    if not args.export_only:
        t0 = time.time()
        sents = encode_pairs(tok, sent_train, args.max_sent_len or 100)
        if args.new_epoch and state["batch"]:
            state["epoch"] += 1
            state["batch"] = 0
        state.setdefault("data_changes", []).append(
            {"at_step": state["step"], "max_sent_len": args.max_sent_len, "sentences": len(sents),
             "split": args.train_split})
        phrases = encode_pairs(tok, read_tsv(os.path.join(args.data, "phrase_train.tsv")), 40)
        extra = [p for p in extra_raw if not evaluated(p, banned) and norm_key(p[0]) not in held_de]
        extra = encode_pairs(tok, extra, args.max_sent_len or 100)
        pools = [(phrases, args.phrase_frac)] + ([(extra, args.extra_frac)] if extra else [])
        state["data_changes"][-1].update({"extra": [os.path.basename(x) for x in args.extra],
                                          "extra_pairs": len(extra), "extra_frac": args.extra_frac,
                                          "phrase_frac": args.phrase_frac})
        print(f"encoded {len(sents)} sentences, {len(phrases)} phrases, {len(extra)} extra pairs "
              f"in {time.time() - t0:.0f}s", flush=True)
        model.to(device)
        opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
        if ck is not None and "opt" in ck:
            opt.load_state_dict(ck["opt"])
        elif ck is not None:  # continued from an exported folder (--init-from): no Adam state
            state["warm_from"] = state["step"]
        start_seconds = state["seconds"]
        budget = start_seconds + args.more_minutes * 60 if args.more_minutes else args.minutes * 60
        t_start = time.time()
        last_ck = time.time()

        def save(path):
            torch.save({"config": cfg, "state": state, "model": model.state_dict(),
                        "opt": opt.state_dict()}, path + ".tmp")
            os.replace(path + ".tmp", path)

        stop = False
        while state["epoch"] < args.epochs and not stop:
            batches = make_epoch(sents, pools, args.max_tokens, args.seed * 1000 + state["epoch"])
            model.train()
            ep_loss, ep_tok = 0.0, 0
            t_ep = time.time()
            for bi in range(state["batch"], len(batches)):
                src, smask, tin, lab = [x.to(device) for x in collate(batches[bi], tok.pad, tok.pad)]
                for g in opt.param_groups:
                    # after a restart without optimizer state (--init-from): a fresh linear
                    # warm-up up to where the schedule stands
                    ramp = min(1.0, (state["step"] + 1 - state.get("warm_from", 0)) / args.warmup)
                    g["lr"] = lr_at(state["step"] + 1, args.warmup, args.lr) * ramp
                logits = model(src, smask, tin)
                loss = F.cross_entropy(logits.view(-1, V), lab.view(-1), ignore_index=-100,
                                       label_smoothing=0.1)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                ntok = int((lab != -100).sum())
                state["step"] += 1
                state["batch"] = bi + 1
                state["tokens"] += ntok + int(smask.sum())
                ep_loss += loss.item() * ntok
                ep_tok += ntok
                state["seconds"] = start_seconds + time.time() - t_start
                if state["step"] % 50 == 0:
                    el = time.time() - t_ep
                    print(f"ep {state['epoch'] + 1} batch {bi + 1}/{len(batches)} step {state['step']} "
                          f"loss {loss.item():.3f} lr {opt.param_groups[0]['lr']:.2e} "
                          f"{state['tokens'] / max(1.0, state['seconds']):.0f} tok/s "
                          f"ep {el:.0f}s total {state['seconds'] / 60:.1f}min", flush=True)
                if args.measure and state["step"] >= args.measure:
                    el = time.time() - t_start
                    print(f"MEASURE {args.measure} steps {el:.1f}s, {state['tokens'] / el:.0f} real tok/s, "
                          f"epoch has {len(batches)} batches -> ≈ {el / args.measure * len(batches) / 60:.1f} min/epoch")
                    return
                if time.time() - last_ck > args.ckpt_minutes * 60:
                    save(ck_last)
                    last_ck = time.time()
                if state["seconds"] - state.get("last_snap", 0.0) > args.snapshot_minutes * 60:
                    state["last_snap"] = state["seconds"]
                    torch.save({"model": model.state_dict(), "step": state["step"]},
                               os.path.join(args.work, f"snap{state['step']:07d}.pt"))
                if state["seconds"] > budget:
                    stop = True
                    break
            if not stop:
                state["epoch"] += 1
                state["batch"] = 0
                model.eval()
                hyp = translate(model, tok, [d for d, _ in dev[:150]])
                ref = [e for _, e in dev[:150]]
                entry = {"epoch": state["epoch"], "train_loss": ep_loss / max(1, ep_tok),
                         "dev150_bleu": metrics.corpus_bleu(hyp, ref),
                         "dev150_chrf": metrics.corpus_chrf(hyp, ref),
                         "minutes": state["seconds"] / 60, "step": state["step"]}
                state["log"].append(entry)
                print("== " + json.dumps(entry), flush=True)
                print("   Wie geht es dir? ->", translate(model, tok, ["Wie geht es dir?"])[0], flush=True)
            save(ck_last)
            last_ck = time.time()
        print("training stopped", json.dumps({k: state[k] for k in ["epoch", "step", "seconds"]}))

    # ---- average, evaluate (on the training device), export
    model.to(device).eval()
    dev_eval = dev[:args.dev_limit] if args.dev_limit else dev
    dsrc, dref = [d for d, _ in dev_eval], [e for _, e in dev_eval]
    last_chrf = metrics.corpus_chrf(translate(model, tok, dsrc), dref)
    eps = sorted(glob.glob(os.path.join(args.work, "snap*.pt")))[-args.average:]
    if len(eps) > 1:
        last_sd = {k: v.clone() for k, v in model.state_dict().items()}
        model.load_state_dict(average_checkpoints(eps))
        avg_chrf = metrics.corpus_chrf(translate(model, tok, dsrc), dref)
        print(f"dev chrF last {last_chrf:.2f} averaged({len(eps)}) {avg_chrf:.2f}", flush=True)
        if avg_chrf < last_chrf:
            model.load_state_dict(last_sd)
            eps = []
    state["dev_chrf_last"] = last_chrf
    state["averaged"] = [os.path.basename(p) for p in eps]
    # Everything below measures the weights as shipped: rounded to float16 (export_model's dtype).
    model.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
    test_eval = test[:args.test_limit] if args.test_limit else test
    src = [d for d, _ in test_eval]
    ref = [e for _, e in test_eval]
    t0 = time.time()
    hyp_g = translate(model, tok, src)
    nb = min(len(src), args.beam_test_limit)
    hyp_b = translate(model, tok, src[:nb], beam=4)
    res = {
        "test_sentences": len(src), "beam_test_sentences": nb,
        "greedy_bleu": metrics.corpus_bleu(hyp_g, ref), "greedy_chrf": metrics.corpus_chrf(hyp_g, ref),
        "copy_bleu": metrics.corpus_bleu(src, ref), "copy_chrf": metrics.corpus_chrf(src, ref),
        "greedy_bleu_subset": metrics.corpus_bleu(hyp_g[:nb], ref[:nb]),
        "greedy_chrf_subset": metrics.corpus_chrf(hyp_g[:nb], ref[:nb]),
        "beam4_bleu_subset": metrics.corpus_bleu(hyp_b, ref[:nb]),
        "beam4_chrf_subset": metrics.corpus_chrf(hyp_b, ref[:nb]),
        "copy_bleu_subset": metrics.corpus_bleu(src[:nb], ref[:nb]),
        "copy_chrf_subset": metrics.corpus_chrf(src[:nb], ref[:nb]),
        "eval_seconds": time.time() - t0,
    }
    print("TEST", json.dumps(res), flush=True)
    if not saw_heldout(state):  # a truly held-out measurement of these weights: keep it in the record
        evals = [e for e in state.get("heldout_evals", []) if e["at_step"] != state["step"]]
        state["heldout_evals"] = evals + [{"at_step": state["step"], "minutes": state["seconds"] / 60,
                                           "res": res}]
        if os.path.exists(ck_last):  # the checkpoint's weights are untouched (not the average)
            ck = torch.load(ck_last, weights_only=False)  # our own checkpoint (torch ≥ 2.6 defaults to True)
            torch.save({**ck, "state": state}, ck_last)
    every = list(zip(everyday, translate(model, tok, everyday, beam=4), translate(model, tok, everyday)))
    for s, b, g in every:
        print(f"  {s} -> {b}   (greedy: {g})")
    with open(os.path.join(args.work, "test_hyp_greedy.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(hyp_g) + "\n")
    samples = list(zip(src[:12], hyp_b[:12], ref[:12]))
    model.to("cpu")
    alignments = alignment_examples(model, tok, [s for s, _, _ in every[:8]])
    card = model_card(cfg, state, nparams, res, every, samples, eps, alignments, args)
    with open(os.path.join(args.work, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"test": res, "state": state, "everyday": every, "alignments": alignments}, f,
                  ensure_ascii=False, indent=1)
    export_model(model, tok_dir, args.out, card, state)
    print("exported", args.out)


@torch.no_grad()
def alignment_examples(model, tok, sentences):
    """Greedy translation + per target token the source token with the largest cross-attention
    weight averaged over heads of the last decoder layer (and over all layers)."""
    out = []
    for s in sentences:
        src = tok.encode(s)
        ids = greedy(model, torch.tensor([src]), 32)[0]
        enc, mask, _ = model.encode(torch.tensor([src]))
        _, _, ca = model.decode(torch.tensor([ids[:-1]]), enc, mask)
        last = ca[-1][0].mean(0)  # [T,S]
        allm = torch.stack([c[0].mean(0) for c in ca]).mean(0)
        sp, tp = tok.pieces(src), tok.pieces(ids[1:])
        out.append({"source": s, "translation": tok.decode(ids[1:]),
                    "last_layer": [(tp[t], sp[int(last[t].argmax())]) for t in range(len(tp))],
                    "all_layers": [(tp[t], sp[int(allm[t].argmax())]) for t in range(len(tp))]})
    return out


if __name__ == "__main__":
    main()
