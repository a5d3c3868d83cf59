#!/usr/bin/env python3
"""Extract German->English training pairs from the Ding dictionary (Debian trans-de-en, GPL-2+).

Cleaning rules (applied in this order):
 1. Skip comment lines ('#'). Split each line at ' :: ' into German and English sides.
 2. Split both sides at ' | ' into sub-entries; they are aligned by position. Lines whose two sides
    have different sub-entry counts are dropped.
 3. The domain tags of a sub-entry are its [..] tags; a *technical* tag (TECH_TAGS: [med.],
    [chem.], [techn.], [zool.], [comp.], ...) anywhere in the line marks all phrase pairs of the
    line as technical; those are dropped.  Sentences are kept regardless of tags.
 4. Each sub-entry side is split at '; ' into synonyms.
 5. Annotations are removed from every synonym: {..} (grammar), [..] (domain/region/register),
    (..) (explanations and optional words), <..> (alternative spellings), /ABC/ (acronyms).
    Typographic quotes and apostrophes are mapped to ASCII (" and '), whitespace is collapsed,
    stray separators are trimmed.
 6. A sub-entry pair is a *sentence* pair if both sides (first synonym) end with . ! or ? (also
    inside closing quotes) and have >= 2 words, or both have >= 4 words and neither contains a
    dictionary placeholder (jd./etw./sb./sth.).  Everything else is a phrase/word pair.
 7. Sentence synonyms: every German synonym is paired with the first English one and every
    English synonym with the first German one.  Phrase synonyms: the same rule (no full cross
    product, which would explode long synonym lists).
 8. Pairs with an empty side, a side over 200 characters, or a length ratio over 4 (in characters,
    for sentences) are dropped; exact duplicates are removed.
 9. Held-out split: German sentences are normalised (lower case, punctuation and whitespace
    removed); the set of distinct normalised German sentences is shuffled with a fixed seed and
    DEV_N / TEST_N of them are held out, with every pair (and every phrase pair) whose normalised
    German matches going to that split.  The everyday sentences listed in EVERYDAY are never held
    out (they are the demonstration list; the shipped model should know them).
10. Training pairs whose German or English side matches a sentence of the evaluation sets
    (tools/train/eval/*.tsv, after norm_key) are dropped (after the split, which stays unchanged).
Outputs TSV files (de<TAB>en) in --out.
"""
import argparse
import glob
import os
import random
import re
import unicodedata

TECH_TAGS = {
    "techn.", "med.", "chem.", "geogr.", "bot.", "zool.", "ornith.", "comp.", "econ.", "fin.",
    "jur.", "adm.", "electr.", "mil.", "constr.", "min.", "anat.", "textil.", "phys.", "agr.",
    "math.", "geol.", "biol.", "ling.", "envir.", "naut.", "mach.", "aviat.", "telco.",
    "biochem.", "pharm.", "meteo.", "astron.", "statist.", "photo.", "print", "print.", "myc.",
    "sci.", "arch.", "astrol.", "phil.", "tm",
}
EVERYDAY = [
    "Wie geht es dir?", "Guten Morgen!", "Ich habe Hunger.", "Das Wetter ist heute schön.",
    "Wo ist der Bahnhof?", "Ich liebe dich.", "Kannst du mir helfen?", "Vielen Dank!",
    "Ich verstehe das nicht.", "Wie spät ist es?", "Das ist mein Bruder.",
    "Ich komme aus Deutschland.", "Wir gehen morgen ins Kino.", "Der Hund schläft.",
    "Das Buch ist sehr interessant.", "Wie heißt du?", "Ich bin müde.",
]
# The model card shows these with EVERYDAY (25 demonstration sentences in all); unlike EVERYDAY
# they do not steer the held-out split, which stays as it was when the list had 17 sentences.
DEMO_MORE = [
    "Ich trinke morgens gern Kaffee.", "Wo wohnst du?", "Es regnet schon den ganzen Tag.",
    "Ich habe heute keine Zeit.", "Das Essen schmeckt sehr gut.", "Wir sehen uns morgen.",
    "Was kostet das?", "Mein Zug kommt um acht Uhr an.",
]
DEV_N, TEST_N = 300, 1000
SEED = 20260129

QUOTES = {"„": '"', "“": '"', "”": '"', "‚": "'", "‘": "'", "’": "'", "«": '"', "»": '"',
          "‹": "'", "›": "'", "–": "-", "—": "-", "…": "...", "\u00a0": " "}
ANN_RE = [re.compile(r"\{[^{}]*\}"), re.compile(r"\[[^\[\]]*\]"), re.compile(r"<[^<>]*>"),
          re.compile(r"(^|\s)/[A-Za-z0-9.]+/(?=\s|$)")]
PAREN_RE = re.compile(r"\([^()]*\)")
TAG_RE = re.compile(r"\[([^\[\]]*)\]")
PLACEHOLDER_RE = re.compile(r"\b(jd|jdn|jdm|jds|etw|sb|sth|sb's)\.", re.I)
SENT_END_RE = re.compile(r"[.!?][\"']?$")


def clean(s):
    s = ascii_quotes(s)
    for r in ANN_RE:
        s = r.sub(" ", s)
    prev = None
    while prev != s:  # nested parentheses
        prev = s
        s = PAREN_RE.sub(" ", s)
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"\s+([,.!?;:])", r"\1", s)
    s = s.strip(" ;,/")
    return s


def norm_key(s):
    s = unicodedata.normalize("NFC", s).lower()
    s = re.sub(r"[^\w]+", " ", s)
    return " ".join(s.split())


def eval_keys():
    """norm_keys of every German and English sentence of the evaluation sets (tools/train/eval/*.tsv:
    topic, German, English); training data matching one of them is dropped."""
    keys = set()
    for path in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval", "*.tsv")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                cols = line.rstrip("\n").split("\t")
                if line.startswith("#") or len(cols) < 3:
                    continue
                keys.update(norm_key(c) for c in cols[1:])
    return keys


def evaluated(pair, banned):
    """Whether a (German, English) pair matches an evaluation sentence (banned = eval_keys())."""
    return norm_key(pair[0]) in banned or norm_key(pair[1]) in banned


def ascii_quotes(s):
    for a, b in QUOTES.items():
        s = s.replace(a, b)
    return s


def is_sentence(de, en):
    dw, ew = len(de.split()), len(en.split())
    if SENT_END_RE.search(de) and SENT_END_RE.search(en) and dw >= 2 and ew >= 2:
        return True
    return dw >= 4 and ew >= 4 and not PLACEHOLDER_RE.search(de) and not PLACEHOLDER_RE.search(en)


def synonyms(side):
    out = []
    for part in side.split("; "):
        c = clean(part)
        if c:
            out.append(c)
    return out


def extract(path):
    sents, phrases = [], []
    stats = {"lines": 0, "misaligned": 0, "technical_lines": 0}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#") or " :: " not in line:
                continue
            stats["lines"] += 1
            de_side, en_side = line.split(" :: ", 1)
            de_subs, en_subs = de_side.split(" | "), en_side.split(" | ")
            if len(de_subs) != len(en_subs):
                stats["misaligned"] += 1
                continue
            tags = {t.strip() for t in TAG_RE.findall(line)}
            technical = bool(tags & TECH_TAGS)
            stats["technical_lines"] += technical
            for ds, es in zip(de_subs, en_subs):
                dsyn, esyn = synonyms(ds), synonyms(es)
                if not dsyn or not esyn:
                    continue
                pairs = [(d, esyn[0]) for d in dsyn] + [(dsyn[0], e) for e in esyn[1:]]
                sent = is_sentence(dsyn[0], esyn[0])
                if not sent and technical:
                    continue
                for d, e in pairs:
                    if len(d) > 200 or len(e) > 200:
                        continue
                    if sent and (max(len(d), len(e)) > 4 * min(len(d), len(e))):
                        continue
                    (sents if sent else phrases).append((d, e))
    return sents, phrases, stats


def dedupe(pairs):
    seen, out = set(), []
    for p in pairs:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def write_tsv(path, pairs):
    with open(path, "w", encoding="utf-8") as f:
        for d, e in pairs:
            f.write(f"{d}\t{e}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dict", default="/usr/share/trans/de-en")
    ap.add_argument("--out", default="build/train-work/data")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    sents, phrases, stats = extract(args.dict)
    sents, phrases = dedupe(sents), dedupe(phrases)
    sent_set = set(sents)
    phrases = [p for p in phrases if p not in sent_set]

    keys = sorted({norm_key(d) for d, _ in sents})
    protected = {norm_key(s) for s in EVERYDAY}
    cand = [k for k in keys if k not in protected]
    random.Random(SEED).shuffle(cand)
    dev_keys, test_keys = set(cand[:DEV_N]), set(cand[DEV_N:DEV_N + TEST_N])
    split = {"train": [], "dev": [], "test": []}
    for d, e in sents:
        k = norm_key(d)
        split["dev" if k in dev_keys else "test" if k in test_keys else "train"].append((d, e))
    held = dev_keys | test_keys
    phr_train = [p for p in phrases if norm_key(p[0]) not in held]
    # never train on an evaluation sentence (the split above stays as it was for comparability)
    banned = eval_keys()
    split["train"] = [p for p in split["train"] if not evaluated(p, banned)]
    phr_train = [p for p in phr_train if not evaluated(p, banned)]
    for name, pairs in split.items():
        write_tsv(os.path.join(args.out, f"sent_{name}.tsv"), pairs)
    write_tsv(os.path.join(args.out, "sent_all.tsv"), sents)
    write_tsv(os.path.join(args.out, "phrase_train.tsv"), phr_train)
    write_tsv(os.path.join(args.out, "phrase_all.tsv"), phrases)
    with open(os.path.join(args.out, "everyday.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(EVERYDAY + DEMO_MORE) + "\n")
    # SentencePiece training text: sentences x10, phrases x1, per language.
    for li, lang in enumerate(["de", "en"]):
        with open(os.path.join(args.out, f"spm_{lang}.txt"), "w", encoding="utf-8") as f:
            for _ in range(10):
                for p in split["train"]:
                    f.write(p[li] + "\n")
            for p in phr_train:
                f.write(p[li] + "\n")
    print(f"lines {stats['lines']} misaligned {stats['misaligned']} technical lines "
          f"{stats['technical_lines']}")
    print(f"sentence pairs {len(sents)} (train {len(split['train'])} dev {len(split['dev'])} "
          f"test {len(split['test'])}), distinct German sentences {len(keys)}")
    print(f"phrase pairs {len(phrases)} (train {len(phr_train)})")


if __name__ == "__main__":
    main()
