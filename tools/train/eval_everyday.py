#!/usr/bin/python3
"""Scores a German→English model folder on the everyday evaluation set (tools/train/eval/everyday_de_en.tsv, issue 23)
with our own engine (`attnlens-cli translate`), greedy and beam 4: corpus BLEU and chrF (SacreBLEU-compatible,
tools/train/metrics.py), overall and per topic, and every hypothesis beside its reference for a human judgement.

  /usr/bin/python3 tools/train/eval_everyday.py [--model resources/models/marian-de-en-tiny]
      [--cli build/release/app/attnlens-cli] [--out build/train-work/everyday]
      [--judgements tools/train/eval/judgements.tsv] [--card MODEL/README.md]

Writes OUT/everyday_<greedy|beam4>.tsv (topic, German, reference, hypothesis) and OUT/everyday.json (the scores);
prints the scores.

Human judgement: --judgements names a TSV of German, beam-4 translation, verdict (yes / no: would a bilingual
reader accept it — meaning preserved, grammatical English), note.  A judgement counts only for the exact
translation it judged; new translations are listed as unjudged (written to OUT/unjudged.tsv, ready to fill in).
--card replaces (or appends) the model card's section between CARD_BEGIN and CARD_END with the scores, the
per-topic chrF, the accepted count and all 100 translations with their verdicts.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from metrics import corpus_bleu, corpus_chrf  # noqa: E402


def load_set(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            topic, de, en = line.rstrip("\n").split("\t")
            rows.append((topic, de, en))
    return rows


CARD_BEGIN = "<!-- everyday-eval:begin (tools/train/eval_everyday.py writes this section) -->"
CARD_END = "<!-- everyday-eval:end -->"


def load_judgements(path):
    out = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                cols = line.rstrip("\n").split("\t")
                if line.startswith("#") or len(cols) < 3:
                    continue
                if cols[2] not in ("yes", "no"):
                    raise SystemExit(f"{path}: verdict must be yes or no: {line!r}")
                out[(cols[0], cols[1])] = (cols[2], cols[3] if len(cols) > 3 else "")
    return out


def card_section(scores, rows, beam_hyps, judged):
    n_yes = sum(1 for (_, de, _), h in zip(rows, beam_hyps) if judged.get((de, h), ("",))[0] == "yes")
    n_judged = sum(1 for (_, de, _), h in zip(rows, beam_hyps) if (de, h) in judged)
    g, b = scores["greedy"], scores["beam4"]
    L = [CARD_BEGIN, "## Everyday evaluation set (issue 23)", "",
         f"`tools/train/eval/everyday_de_en.tsv`: {len(rows)} everyday German sentences of 8–14 words, ten per topic,",
         "written for this project with careful English references and never trained on. Scored with the app's own",
         "engine (`attnlens-cli translate`, transformers' beam search) by `tools/train/eval_everyday.py`;",
         "BLEU / chrF SacreBLEU-compatible (`tools/train/metrics.py`), one reference.", "",
         "| decoding | BLEU | chrF |", "|---|---|---|",
         f"| greedy | {g['bleu']:.1f} | {g['chrf']:.1f} |", f"| beam 4 | {b['bleu']:.1f} | **{b['chrf']:.1f}** |", "",
         "chrF per topic (beam 4): " + ", ".join(f"{t} {v:.1f}" for t, v in b["topics"].items()) + ".", "",
         f"**Accepted by a bilingual reader (meaning preserved, grammatical English): {n_yes} of {len(rows)}**"
         + (f" ({len(rows) - n_judged} not judged)" if n_judged < len(rows) else "") +
         ". The judgements (`tools/train/eval/judgements.tsv`) are ours, made sentence by sentence; a translation",
         "that drops or changes any content word, or is not grammatical English, is not accepted.", "",
         "| # | German | model (beam 4) | reference | accepted |", "|---|---|---|---|---|"]
    for i, ((_, de, en), h) in enumerate(zip(rows, beam_hyps)):
        v, note = judged.get((de, h), ("?", "not judged"))
        L.append(f"| {i} | {de} | {h} | {en} | {v}{f' — {note}' if note else ''} |")
    return "\n".join(L + ["", CARD_END]) + "\n", n_yes


def update_card(path, section):
    text = open(path, encoding="utf-8").read()
    if CARD_BEGIN in text and CARD_END in text:
        a, b = text.index(CARD_BEGIN), text.index(CARD_END) + len(CARD_END)
        text = text[:a] + section.rstrip("\n") + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def translate(cli, model, sentence, beam):
    out = subprocess.run([cli, "translate", "--model", model, "--beam", str(beam), sentence],
                         check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[0] if out.strip() else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "resources", "models", "marian-de-en-tiny"))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "attnlens-cli"))
    ap.add_argument("--set", default=os.path.join(HERE, "eval", "everyday_de_en.tsv"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "train-work", "everyday"))
    ap.add_argument("--judgements", default=os.path.join(HERE, "eval", "judgements.tsv"))
    ap.add_argument("--card", default=None, help="model card README.md whose everyday section to rewrite")
    args = ap.parse_args()
    rows = load_set(args.set)
    os.makedirs(args.out, exist_ok=True)
    scores = {"model": os.path.relpath(args.model, ROOT), "sentences": len(rows)}
    all_hyps = {}
    for name, beam in (("greedy", 1), ("beam4", 4)):
        hyps = [translate(args.cli, args.model, de, beam) for _, de, _ in rows]
        all_hyps[name] = hyps
        refs = [en for _, _, en in rows]
        with open(os.path.join(args.out, f"everyday_{name}.tsv"), "w", encoding="utf-8") as f:
            for (topic, de, en), hyp in zip(rows, hyps):
                f.write(f"{topic}\t{de}\t{en}\t{hyp}\n")
        by_topic = collections.defaultdict(lambda: ([], []))
        for (topic, _, en), hyp in zip(rows, hyps):
            by_topic[topic][0].append(hyp)
            by_topic[topic][1].append(en)
        scores[name] = {"bleu": round(corpus_bleu(hyps, refs), 2), "chrf": round(corpus_chrf(hyps, refs), 2),
                        "topics": {t: round(corpus_chrf(h, r), 2) for t, (h, r) in sorted(by_topic.items())}}
        print(f"{name}: BLEU {scores[name]['bleu']}, chrF {scores[name]['chrf']}", flush=True)
    judged = load_judgements(args.judgements)
    section, n_yes = card_section(scores, rows, all_hyps["beam4"], judged)
    scores["accepted"] = n_yes
    unjudged = [(de, h) for (_, de, _), h in zip(rows, all_hyps["beam4"]) if (de, h) not in judged]
    with open(os.path.join(args.out, "unjudged.tsv"), "w", encoding="utf-8") as f:
        for de, h in unjudged:
            f.write(f"{de}\t{h}\t\t\n")
    print(f"accepted {n_yes} of {len(rows)}; {len(unjudged)} not judged (OUT/unjudged.tsv)")
    with open(os.path.join(args.out, "everyday.json"), "w") as f:
        json.dump(scores, f, indent=1)
    if args.card:
        update_card(args.card, section)
        print("updated", args.card)


if __name__ == "__main__":
    main()
