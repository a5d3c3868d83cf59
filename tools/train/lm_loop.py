"""The training loop of the built-in causal language models (train_gpt2.py, train_llama.py): AdamW (betas 0.9/0.95,
weight decay 0.1) on random windows of one token stream, linear warm-up then a cosine to 10 % of the rate at
--total-steps, gradient clipping at 1, a log line every 100 steps with the validation loss every 500, a checkpoint
every 5 minutes and at the end (--resume / --export-only continue from it), and the weights with the lowest
validation loss kept (what the trainers export: the data is small and the models start to memorise it).
"""
import json
import math
import os
import time

import torch
import torch.nn.functional as F


def add_arguments(ap, work, minutes, heads, positions, total_steps):
    """The options both trainers take (data, schedule, the shared sizes); the defaults that differ are given."""
    ap.add_argument("--work", default=work)
    ap.add_argument("--dict", default="/usr/share/trans/de-en")
    ap.add_argument("--export", default="")
    ap.add_argument("--minutes", type=float, default=minutes)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--export-only", action="store_true")
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--d", type=int, default=192)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=heads)
    ap.add_argument("--positions", type=int, default=positions)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--total-steps", type=int, default=total_steps)


def write_card(folder, card, log):
    """README.md: `card` (markdown) with {log_table} replaced by the table of every logged step."""
    rows = [f"| {r['step']} | {r['minutes']:.1f} | {r['loss']:.3f} | "
            f"{format(r['valid'], '.3f') if 'valid' in r else '—'} |" for r in log]
    table = "\n".join(["| step | minutes | train loss | valid loss |", "|---|---|---|---|"] + rows)
    with open(os.path.join(folder, "README.md"), "w", encoding="utf-8") as f:
        f.write(card.replace("{log_table}", table))
    print("exported", folder, flush=True)


def evaluate(model, ids, context, batches=40):
    """Mean next-token loss over the first `batches` windows of `ids`."""
    model.eval()
    losses = []
    with torch.no_grad():
        for i in range(min(batches, (len(ids) - 1) // context)):
            x = ids[i * context: (i + 1) * context].unsqueeze(0)
            y = ids[i * context + 1: (i + 1) * context + 1].unsqueeze(0)
            logits = model(x)
            losses.append(F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1)).item())
    model.train()
    return sum(losses) / max(1, len(losses))


def token_streams(work, tok, data, stream):
    """(train ids, valid ids), made once by stream(tok, texts) and kept in work/ids.pt."""
    path = os.path.join(work, "ids.pt")
    if os.path.exists(path):
        return torch.load(path)
    ids = stream(tok, data["train"]), stream(tok, data["valid"])
    torch.save(ids, path)
    return ids


def train(model, args, train_ids, valid_ids, seed, warmup):
    """Trains (or, with args.export_only, only loads) and returns (step, log) with the best weights loaded into
    model; args: work, minutes, lr, total_steps, batch, context, resume, export_only."""
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    ckpt = os.path.join(args.work, "checkpoint.pt")
    step, log = 0, []
    best = {"valid": math.inf, "step": 0, "model": None}
    if (args.resume or args.export_only) and os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, log = state["step"], state["log"]
        best.update(state.get("best") or {})
        print(f"resumed at step {step}", flush=True)
    print(f"{len(train_ids)} training tokens, {len(valid_ids)} validation tokens", flush=True)
    elapsed0 = log[-1]["minutes"] if log else 0.0
    start, last_save = time.time(), time.time()
    rng = torch.Generator().manual_seed(seed + step)

    def save():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "log": log, "best": best},
                   ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)

    while not args.export_only and (time.time() - start) / 60 < args.minutes:
        progress = min(1.0, step / args.total_steps)
        lr = args.lr * min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for g in opt.param_groups:
            g["lr"] = lr
        starts = torch.randint(0, len(train_ids) - args.context - 1, (args.batch,), generator=rng)
        x = torch.stack([train_ids[s: s + args.context] for s in starts])
        y = torch.stack([train_ids[s + 1: s + args.context + 1] for s in starts])
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % 100 == 0:
            entry = {"step": step, "minutes": elapsed0 + (time.time() - start) / 60, "loss": loss.item()}
            if step % 500 == 0:
                entry["valid"] = evaluate(model, valid_ids, args.context)
                if entry["valid"] < best["valid"]:
                    best.update(valid=entry["valid"], step=step,
                                model={k: v.detach().clone() for k, v in model.state_dict().items()})
            log.append(entry)
            print(json.dumps(entry), flush=True)
        if time.time() - last_save > 300:
            save()
            last_save = time.time()
    if not args.export_only:
        save()
    if best["model"] is not None:
        model.load_state_dict(best["model"])
        step = best["step"]
    return step, log
