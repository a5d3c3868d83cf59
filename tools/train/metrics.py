#!/usr/bin/env python3
"""SacreBLEU-compatible corpus BLEU (13a tokenizer, exp smoothing) and chrF (char 6-grams,
word order 0, beta 2, whitespace ignored), single reference. No dependencies.

  metrics.py HYP.txt REF.txt      prints BLEU and chrF
"""
import math
import re
import sys
from collections import Counter

_13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tok_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                .replace("&gt;", ">"))
    line = f" {line} "
    for r, s in _13A:
        line = r.sub(s, line)
    return line.split()


def _ngrams(words, n_max):
    c = Counter()
    for n in range(1, n_max + 1):
        for i in range(len(words) - n + 1):
            c[tuple(words[i:i + n])] += 1
    return c


def corpus_bleu(hyps, refs, max_n=4):
    correct = [0] * max_n
    total = [0] * max_n
    sys_len = ref_len = 0
    for h, r in zip(hyps, refs):
        hw, rw = tok_13a(h), tok_13a(r)
        sys_len += len(hw)
        ref_len += len(rw)
        hc, rc = _ngrams(hw, max_n), _ngrams(rw, max_n)
        for ng, cnt in hc.items():
            n = len(ng) - 1
            total[n] += cnt
            correct[n] += min(cnt, rc.get(ng, 0))
    precisions = [0.0] * max_n
    smooth = 1.0
    for n in range(max_n):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    if sys_len == 0:
        return 0.0
    bp = 1.0 if sys_len >= ref_len else math.exp(1 - ref_len / sys_len)
    if min(precisions) <= 0:
        return 0.0
    return bp * math.exp(sum(math.log(p) for p in precisions) / max_n)


def _char_ngrams(s, n):
    s = "".join(s.split())
    return Counter(s[i:i + n] for i in range(len(s) - n + 1))


def corpus_chrf(hyps, refs, order=6, beta=2):
    stats = [[0, 0, 0] for _ in range(order)]  # hyp, ref, match per order
    for h, r in zip(hyps, refs):
        for n in range(1, order + 1):
            hc, rc = _char_ngrams(h, n), _char_ngrams(r, n)
            st = stats[n - 1]
            st[0] += sum(hc.values())
            st[1] += sum(rc.values())
            st[2] += sum(min(c, rc[g]) for g, c in hc.items() if g in rc)
    factor = beta ** 2
    avg_p = avg_r = 0.0
    eff = 0
    for n_hyp, n_ref, n_match in stats:
        avg_p += n_match / n_hyp if n_hyp > 0 else 0.0
        avg_r += n_match / n_ref if n_ref > 0 else 0.0
        if n_hyp > 0 and n_ref > 0:
            eff += 1
    if eff == 0:
        return 0.0
    avg_p /= eff
    avg_r /= eff
    if avg_p + avg_r == 0:
        return 0.0
    return 100 * (1 + factor) * avg_p * avg_r / (factor * avg_p + avg_r)


def _selftest():
    # Reference values from the sacrebleu-based HF metric card (chrF, char_order 6, beta 2).
    v1 = corpus_chrf(["The relationship between Obama and Netanyahu is not exactly friendly."],
                     ["The ties between Obama and Netanyahu are not particularly friendly."])
    v2 = corpus_chrf(["The relationship between cats and dogs is not exactly friendly.",
                      "a good bookshop is just a genteel black hole that knows how to read."],
                     ["The relationship between dogs and cats is not exactly friendly.",
                      "A good bookshop is just a genteel Black Hole that knows how to read."])
    assert abs(v1 - 61.576379378113785) < 1e-9, v1
    assert abs(v2 - 84.64214891738334) < 1e-9, v2
    assert abs(corpus_bleu(["a b c d"], ["a b c d"]) - 100.0) < 1e-9
    assert tok_13a("Hello, world. It's 3.5-4!") == ["Hello", ",", "world", ".", "It's",
                                                    "3.5", "-", "4", "!"]
    print("metrics self-test ok")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        H = open(sys.argv[1], encoding="utf-8").read().splitlines()
        R = open(sys.argv[2], encoding="utf-8").read().splitlines()
        print(f"BLEU {corpus_bleu(H, R):.2f} chrF {corpus_chrf(H, R):.2f}")
    else:
        _selftest()
