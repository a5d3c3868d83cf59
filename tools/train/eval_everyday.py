#!/usr/bin/python3
"""Scores a German→English model folder on the everyday evaluation set (tools/train/eval/everyday_de_en.tsv, issue 23)
with our own engine (`attnlens-cli translate`), greedy and beam 4: corpus BLEU and chrF (SacreBLEU-compatible,
tools/train/metrics.py), overall and per topic, and every hypothesis beside its reference for a human judgement.

  /usr/bin/python3 tools/train/eval_everyday.py [--model resources/models/marian-de-en-tiny]
      [--cli build/release/app/attnlens-cli] [--out build/train-work/everyday]

Writes OUT/everyday_<greedy|beam4>.tsv (topic, German, reference, hypothesis) and OUT/everyday.json (the scores);
prints the scores.
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
    args = ap.parse_args()
    rows = load_set(args.set)
    os.makedirs(args.out, exist_ok=True)
    scores = {"model": os.path.relpath(args.model, ROOT), "sentences": len(rows)}
    for name, beam in (("greedy", 1), ("beam4", 4)):
        hyps = [translate(args.cli, args.model, de, beam) for _, de, _ in rows]
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
    with open(os.path.join(args.out, "everyday.json"), "w") as f:
        json.dump(scores, f, indent=1)


if __name__ == "__main__":
    main()
