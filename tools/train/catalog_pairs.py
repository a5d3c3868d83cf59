#!/usr/bin/env python3
"""German->English sentence pairs from the translation catalogues Debian packages ship (issue 23).

Programs translated with gettext install compiled catalogues, `.../de/LC_MESSAGES/<domain>.mo`:
every English message (msgid) with its German translation (msgstr), written by the programs'
translators.  `fetch` downloads every Debian package that ships a German catalogue (found with
apt-file) and keeps only those files; `extract` turns them into de<TAB>en pairs.

Cleaning (extract), in this order:
 1. Untranslated, fuzzy-free entries only (a .mo holds no fuzzy ones); the header ("") is skipped;
    plural entries give their singular pair; a message context (ctxt\\x04id) is removed.
 2. Accelerator marks are removed ("_Open", "&Save"); entries with format or markup syntax
    (%, {, }, <, >, $, \\, |, @, [, ], #, ~, `, *, =) are dropped, they are not prose.
 3. Multi-line messages are split at blank lines / newlines into paragraphs, and paragraphs into
    sentences (at . ! ? followed by a space and a capital); a message is used only where both
    sides split into the same number of pieces, paired in order.
 4. A pair is kept when both sides are 3..40 words, the English side has no German umlaut/ß,
    the word-count ratio is within 1:2, the two sides differ, and the German side contains a
    lower-case letter (no all-caps labels).
 5. Pairs whose German or English matches an evaluation sentence (tools/train/eval, after
    prepare_data.norm_key) are dropped.  Exact duplicates are removed; a German sentence keeps
    at most 2 different English translations.
Output in --out: catalog_pairs.tsv (de, en), catalog_sentences.tsv (the pairs whose both sides end
with . ! or ?, i.e. sentences rather than labels), catalog_sources.tsv (package, pairs, sentences,
the licences its copyright file names).
"""
import argparse
import collections
import gettext
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_data import ascii_quotes, eval_keys, evaluated  # noqa: E402

BAD = re.compile(r"[%{}<>$\\|@\[\]#~`*=]")
UMLAUT = re.compile(r"[äöüÄÖÜß]")
SENT_END = re.compile(r"[.!?][\"']?$")
SPLIT = re.compile(r"(?<=[.!?])[\"']?\s+(?=[\"']?[A-ZÄÖÜ])")


def tidy(s):
    s = re.sub(r"(?<![\w&])[_&](?=\w)", "", ascii_quotes(s))  # accelerators
    return re.sub(r"[ \t]+", " ", s).strip()


def pieces(s):
    out = []
    for para in re.split(r"\n+", s):
        para = para.strip()
        if para:
            out.extend(p.strip() for p in SPLIT.split(para) if p.strip())
    return out


def keep(de, en):
    dw, ew = len(de.split()), len(en.split())
    if not (3 <= dw <= 40 and 3 <= ew <= 40):
        return False
    if max(dw, ew) > 2 * min(dw, ew):
        return False
    if UMLAUT.search(en) or de == en or not re.search(r"[a-zäöüß]", de):
        return False
    return True


def catalog(path):
    with open(path, "rb") as f:
        try:
            t = gettext.GNUTranslations(f)
        except Exception:  # noqa: BLE001 — a broken catalogue is skipped
            return {}
    cat = getattr(t, "_catalog", {})
    out = {}
    for k, v in cat.items():
        if isinstance(k, tuple):  # plural forms: (singular msgid, n); the singular form's pair is kept
            if k[1] != 0:
                continue
            k = k[0]
        if not k or not isinstance(v, str) or not v:
            continue
        k = k.split("\x04", 1)[-1]
        out[k] = v
    return out


LICENCE_WORDS = [("AGPL", r"\bAGPL|Affero"), ("LGPL", r"\bLGPL|Lesser General Public|Library General Public"),
                 ("GPL", r"\bGPL|(?<!Lesser )(?<!Library )General Public License"), ("MPL", r"\bMPL|Mozilla Public"),
                 ("Apache", r"Apache"), ("BSD", r"\bBSD"), ("MIT/Expat", r"\bMIT\b|Expat"),
                 ("CC-BY-SA", r"CC-BY-SA|Creative Commons Attribution-ShareAlike"), ("CC-BY", r"CC-BY(?!-SA)"),
                 ("CC0", r"CC0"), ("Artistic", r"Artistic"), ("ISC", r"\bISC\b"), ("Zlib", r"\bZlib\b"),
                 ("public domain", r"public[ -]domain")]


def licences(pkg_dir):
    """The licence names a package's copyright file mentions (DEP-5 License: fields, else keywords)."""
    files = glob.glob(os.path.join(pkg_dir, "usr", "share", "doc", "*", "copyright"))
    if not files:
        return "?"
    text = open(files[0], encoding="utf-8", errors="replace").read()
    found = sorted({m.strip() for m in re.findall(r"^License:[ \t]*(\S[^\n]*)", text, re.M)})
    if not found:
        found = [name for name, rx in LICENCE_WORDS if re.search(rx, text, re.I)]
    return ", ".join(found)[:200] or "?"


def extract(mo_root, out_dir):
    evk = eval_keys()
    pairs, per_pkg, per_pkg_sent = [], collections.Counter(), collections.Counter()
    seen, per_de = set(), collections.Counter()
    for pkg in sorted(os.listdir(mo_root)):
        files = sorted(glob.glob(os.path.join(mo_root, pkg, "**", "de", "LC_MESSAGES", "*.mo"), recursive=True)
                       + glob.glob(os.path.join(mo_root, pkg, "**", "de_DE", "LC_MESSAGES", "*.mo"), recursive=True))
        for path in files:
            for en, de in catalog(path).items():
                if BAD.search(en) or BAD.search(de):
                    continue
                en, de = tidy(en), tidy(de)
                pe, pd = pieces(en), pieces(de)
                if len(pe) != len(pd):
                    continue
                for e, d in zip(pe, pd):
                    if not keep(d, e):
                        continue
                    if evaluated((d, e), evk):
                        continue
                    key = (d, e)
                    if key in seen or per_de[d] >= 2:
                        continue
                    seen.add(key)
                    per_de[d] += 1
                    sentence = bool(SENT_END.search(d) and SENT_END.search(e))
                    pairs.append((d, e, sentence))
                    per_pkg[pkg] += 1
                    per_pkg_sent[pkg] += sentence
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "catalog_pairs.tsv"), "w", encoding="utf-8") as f:
        f.writelines(f"{d}\t{e}\n" for d, e, _ in pairs)
    with open(os.path.join(out_dir, "catalog_sentences.tsv"), "w", encoding="utf-8") as f:
        f.writelines(f"{d}\t{e}\n" for d, e, sentence in pairs if sentence)
    with open(os.path.join(out_dir, "catalog_sources.tsv"), "w", encoding="utf-8") as f:
        f.write("# package\tpairs\tsentences\tlicences named in its copyright file\n")
        for pkg, n in sorted(per_pkg.items(), key=lambda kv: (-per_pkg_sent[kv[0]], kv[0])):
            f.write(f"{pkg}\t{n}\t{per_pkg_sent[pkg]}\t{licences(os.path.join(mo_root, pkg))}\n")
    print(f"{len(pairs)} pairs from {len(per_pkg)} packages -> {out_dir}")


def fetch(work):
    """Download every package shipping a German catalogue; keep only the catalogues."""
    listing = subprocess.run(["apt-file", "search", "-x", r"/de(_DE)?/LC_MESSAGES/[^/]*\.mo$"],
                             check=True, capture_output=True, text=True).stdout
    pkgs = sorted({line.split(":", 1)[0] for line in listing.splitlines() if ":" in line})
    debs, mo = os.path.join(work, "debs"), os.path.join(work, "mo")
    os.makedirs(debs, exist_ok=True)
    for i in range(0, len(pkgs), 50):
        subprocess.run(["apt-get", "download", "-q", *pkgs[i:i + 50]], cwd=debs, check=False)
        for deb in glob.glob(os.path.join(debs, "*.deb")):
            pkg = os.path.basename(deb).split("_", 1)[0]
            dest = os.path.join(mo, pkg)
            os.makedirs(dest, exist_ok=True)
            subprocess.run(f"dpkg-deb --fsys-tarfile '{deb}' | tar -x -C '{dest}' --wildcards "
                           "'*/de/LC_MESSAGES/*.mo' '*/de_DE/LC_MESSAGES/*.mo' './usr/share/doc/*/copyright'",
                           shell=True, check=False)
            os.remove(deb)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["fetch", "extract"])
    ap.add_argument("--work", default="build/train-work", help="fetch: downloads go to WORK/debs, WORK/mo")
    ap.add_argument("--mo", default="build/train-work/mo", help="extract: the folder fetch filled")
    ap.add_argument("--out", default="build/train-work/catalog")
    a = ap.parse_args()
    if a.what == "fetch":
        fetch(a.work)
    else:
        extract(a.mo, a.out)


if __name__ == "__main__":
    main()
