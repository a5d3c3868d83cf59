"""The model card (README.md) of the exported translator, written from the training record.

tools/train/eval_everyday.py later adds the everyday evaluation set's section (issue 23) between
its markers; everything else here comes from train_marian.py's state and measurements.
"""
import os


def heldout_lines(state):
    """The held-out measurements taken before any phase trained on the held-out sentences."""
    evals = state.get("heldout_evals", [])
    if not evals or not saw_heldout(state):
        return []
    L = ["Held-out measurements (the test sentences unseen in training; taken before the final phase):", "",
         "| weights | sentences | copy BLEU / chrF | greedy BLEU / chrF | beam 4: sentences | copy | greedy | beam 4 |",
         "|---|---|---|---|---|---|---|---|"]
    for e in evals:
        r = e["res"]
        L.append(f"| step {e['at_step']} ({e['minutes']:.0f} min) | {r['test_sentences']} | "
                 f"{r['copy_bleu']:.2f} / {r['copy_chrf']:.2f} | **{r['greedy_bleu']:.2f} / {r['greedy_chrf']:.2f}** | "
                 f"{r['beam_test_sentences']} | {r['copy_bleu_subset']:.2f} / {r['copy_chrf_subset']:.2f} | "
                 f"{r['greedy_bleu_subset']:.2f} / {r['greedy_chrf_subset']:.2f} | "
                 f"**{r['beam4_bleu_subset']:.2f} / {r['beam4_chrf_subset']:.2f}** |")
    return L + [""]


def data_phases(state):
    """state['data_changes'] without the repeats that plain resumes with unchanged settings add."""
    def key(c):
        return c["max_sent_len"], c["sentences"], c.get("split", "train"), c.get("extra_frac") if c.get("extra") else None

    out = []
    for c in state.get("data_changes", []):
        if not out or key(out[-1]) != key(c):
            out.append(c)
    return out


def saw_heldout(state):
    """Whether any training phase used the held-out dev/test sentences (--train-split all)."""
    return any(c.get("split") == "all" for c in state.get("data_changes", []))


def describe_change(c):
    lim = f"sentences of at most {c['max_sent_len']} pieces per side" if c["max_sent_len"] else "all sentences"
    extra = ", the held-out dev and test sentences included" if c.get("split") == "all" else ""
    cat = (f"; catalogue sentences {int(c['extra_frac'] * 100)} % of the tokens" if c.get("extra") else "")
    return f"from step {c['at_step']}: {lim} ({c['sentences']} pairs{extra}{cat})"


def model_card(cfg, state, nparams, res, every, samples, eps, alignments, args):
    extra = next((c for c in reversed(state.get("data_changes", [])) if c.get("extra_pairs")), None)
    L = [
        "---", "license: gpl-2.0", "language:", "- de", "- en", "library_name: transformers",
        "pipeline_tag: translation", "tags:", "- marian", "---", "",
        "# marian-de-en-tiny — Attention Lens built-in German→English translator", "",
        "A small MarianMT (Hugging Face `MarianMTModel` layout and semantics) trained from",
        "scratch on CPU by `tools/train/train_marian.py` in the Attention Lens repository. It exists",
        "to make attention visible offline, on everyday sentences; it is no match for a real",
        "translation system. Do not use it for real translation.", "",
        "## Data and licence", "",
        "* The **Ding German–English dictionary** (Frank Richter, TU Chemnitz,",
        "  https://dict.tu-chemnitz.de/) as shipped by Debian's `trans-de-en` package, licensed under the",
        "  **GNU GPL version 2 or later**: its example sentences and its phrase/word pairs.",
        *(["* **Translation catalogues of Debian packages**: the German gettext catalogues (`.mo`) that",
           f"  programs and games in Debian main ship, {extra['extra_pairs']:,} sentence pairs (messages whose",
           "  both sides end in . ! or ?, written by each program's translators; `tools/train/catalog_pairs.py`,",
           "  its docstring lists the cleaning). Their licences are those of the packages — all DFSG-free,",
           "  mostly GPL / LGPL, also MPL, BSD, MIT, CC-BY-SA; `tools/train/records/catalog_sources.tsv` lists",
           "  every package with its pair count and the licences its copyright file names. The largest",
           "  contributors are games with dialogue and story text (Cataclysm DDA, Naev, FreedroidRPG,",
           "  Widelands, Wesnoth) and office/desktop programs (LibreOffice, GIMP, Inkscape, Gramps)."]
          if extra else []),
        "",
        "Whether trained weights are a derived work of their training text is unsettled; like the",
        "first version, the model is distributed under GPL-2.0-or-later (the dictionary's terms), and the",
        "sources' own licences are recorded above so that a user can judge.", "",
        "Extraction (`tools/train/prepare_data.py`): ` | ` sub-entries aligned by position, `; `",
        "synonyms split, annotations `{..} [..] (..) <..> /ABC/` removed, typographic quotes mapped to",
        "ASCII, phrase pairs from lines with a technical-domain tag ([med.], [chem.], [techn.], [zool.],",
        "[comp.], …) dropped, duplicates removed. Sentence pairs: both sides end in . ! ? (or ≥ 4 words",
        "without jd./etw./sb./sth. placeholders). Held out by normalised German sentence (fixed seed):",
        "300 dev and 1000 test German sentences (all their variants); a list of everyday",
        "demonstration sentences is never held out. Pairs matching a sentence of the everyday",
        "evaluation set (`tools/train/eval/`) are dropped from every training source.", "",
        ("Training used the training split, then (the recipe's last step, once the held-out numbers "
         "below were measured) all sentences, the held-out ones included:" if saw_heldout(state) else
         "Training used the training split only:") +
        " every dictionary sentence pair in every epoch plus fresh random samples of phrase/word pairs"
        f" (~{int(args.phrase_frac * 100)} % of each epoch's tokens)" +
        (f" and of catalogue sentences (~{int(extra['extra_frac'] * 100)} %)." if extra else "."), "",
        *([f"Data phases: "
           f"{'; '.join(describe_change(c) for c in data_phases(state))}.", ""]
          if state.get("data_changes") else []),
        *([f"Restarts from the exported folder (work directory lost; the Adam state restarted with a "
           f"{args.warmup}-step linear warm-up to the scheduled learning rate): at step "
           f"{', '.join(str(r['at_step']) for r in state['restarts'])}.", ""] if state.get("restarts") else []),
        "## Tokenizer", "",
        "One joint SentencePiece unigram model (`spm_train`, vocabulary 7998 incl. `<unk>`), trained on",
        "German+English text with the dictionary's sentences weighted ×10" +
        (" and the catalogue sentences ×3" if extra else "") + "; `source.spm` and `target.spm` are the same",
        "file. `vocab.json` follows Marian's convention: `</s>` = 0, `<unk>` = 1, the pieces, and",
        f"`<pad>` = {cfg['pad_token_id']} = decoder start token = last id (vocab size {cfg['vocab_size']}).",
        "", "## Model", "",
        f"* d_model {cfg['d_model']}, {cfg['encoder_layers']} encoder + {cfg['decoder_layers']} decoder "
        f"layers, {cfg['encoder_attention_heads']} heads, FFN {cfg['encoder_ffn_dim']}, swish, post-norm, "
        "sinusoidal positions, scaled + shared (tied) embeddings",
        f"* {nparams:,} parameters; stored as float16 safetensors (`model.safetensors`)",
        "", "## Training", "",
        f"* Adam (0.9, 0.98), peak lr {args.lr}, {args.warmup} warm-up steps then inverse square root,",
        f"  label smoothing 0.1, dropout {cfg['dropout']}, batches of ≤ {args.max_tokens} padded tokens",
        f"* {state['epoch']} epochs ({state['step']} steps) in {state['seconds'] / 60:.0f} minutes on "
        f"{'ONE CPU thread' if args.threads == 1 else f'{args.threads} CPU threads'} (PyTorch 1.13 + OpenBLAS)",
        (f"* exported weights: average of the last {len(eps)} weight snapshots (taken every "
         f"{args.snapshot_minutes:g} minutes): {', '.join(os.path.basename(p) for p in eps)}"
         if eps else "* exported weights: the final weights (averaging snapshots did not improve dev chrF)"), "",
        "| epoch | train loss (smoothed CE) | dev-150 BLEU | dev-150 chrF | minutes |", "|---|---|---|---|---|",
    ]
    all_from = min((c["at_step"] for c in state.get("data_changes", []) if c.get("split") == "all"),
                   default=None)
    for e in state["log"]:
        seen = all_from is not None and e.get("step", 0) > all_from
        L.append(f"| {e['epoch']}{' †' if seen else ''} | {e['train_loss']:.3f} | {e['dev150_bleu']:.1f} | "
                 f"{e['dev150_chrf']:.1f} | {e['minutes']:.0f} |")
    if all_from is not None:
        L += ["", f"† trained on the dev sentences too (all-data phase from step {all_from}): not a held-out score."]
    L += [
        "", "## Evaluation (test sentences, SacreBLEU-compatible `tools/train/metrics.py`)", "",
        *heldout_lines(state),
        *([f"{state['eval_excluded']['test']} test and {state['eval_excluded']['dev']} dev sentences are left out "
           "of these measurements because a catalogue (the extra data) contains them too.", ""]
          if any(state.get("eval_excluded", {}).values()) else []),
        ("The same test sentences after the final phase, which trained on them (so NOT a held-out "
         "measure; shown to compare with the numbers above): " if saw_heldout(state) else "") +
        f"{res['test_sentences']} {'' if saw_heldout(state) else 'held-out '}sentence pairs (single reference, BLEU with the 13a tokenizer,"
        " chrF with character 6-grams and β = 2). Beam search (the training script's simplified"
        " version: the app's follows transformers' BeamSearchScorer exactly) was run on the first "
        f"{res['beam_test_sentences']} of them (CPU time):", "",
        "| system | sentences | BLEU | chrF |", "|---|---|---|---|",
        f"| copy the source (baseline) | {res['test_sentences']} | {res['copy_bleu']:.2f} | {res['copy_chrf']:.2f} |",
        f"| this model, greedy | {res['test_sentences']} | {res['greedy_bleu']:.2f} | {res['greedy_chrf']:.2f} |",
        f"| copy the source (baseline) | {res['beam_test_sentences']} | {res['copy_bleu_subset']:.2f} | {res['copy_chrf_subset']:.2f} |",
        f"| this model, greedy | {res['beam_test_sentences']} | {res['greedy_bleu_subset']:.2f} | {res['greedy_chrf_subset']:.2f} |",
        f"| this model, beam 4 | {res['beam_test_sentences']} | {res['beam4_bleu_subset']:.2f} | {res['beam4_chrf_subset']:.2f} |",
        "", "## Everyday sentences (beam 4; greedy in brackets where different)", "",
        "| German | English (model) |", "|---|---|",
    ]
    for s, b, g in every:
        L.append(f"| {s} | {b}{'' if g == b else f' ({g})'} |")
    L += ["", "## Test examples (beam 4; seen in the final phase)" if saw_heldout(state) else
          "## Held-out test examples (beam 4)", "", "| German | model | reference |", "|---|---|---|"]
    for s, h, r in samples:
        L.append(f"| {s} | {h} | {r} |")
    L += ["", "## Cross-attention alignments (greedy; argmax over source pieces of the head-averaged",
          "cross-attention of the last decoder layer)", ""]
    for a in alignments:
        L.append(f"* {a['source']} → {a['translation']}: " +
                 ", ".join(f"`{t}`←`{s}`" for t, s in a["last_layer"]))
    L += [
        "", "## Known weaknesses", "",
        f"* Under-trained: {state['epoch']} passes over the training sentences in {state['seconds'] / 60:.0f} minutes "
        f"of {'one CPU thread' if args.threads == 1 else f'{args.threads} CPU threads'}, far less compute than",
        "  the model could use: long or unusual sentences are mangled, names and numbers are dropped or",
        "  hallucinated, repetition happens. `tools/train/run_marian.sh` resumes from its checkpoint: a",
        "  larger `--minutes` (or a GPU) gives a better model from the same scripts.",
        "* The data are dictionary examples and software / game messages: no news, web or conversation",
        "  text, so idioms and register of everyday speech are thin.",
        "* Many held-out 'errors' are valid alternative translations; single-reference BLEU is harsh.", "",
    ]
    return "\n".join(L)
