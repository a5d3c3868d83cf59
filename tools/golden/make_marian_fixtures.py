#!/usr/bin/python3
"""Creates the tiny Marian fixture checkpoints and goldens under tests/data/marian/.

  /usr/bin/python3 tools/golden/make_marian_fixtures.py [--out tests/data/marian]

Everything is seeded; rerunning reproduces the weights, vocab.json and goldens. spm_train may write
.spm files that differ in a few bytes between runs (same pieces, same segmentations); the
committed .spm files are the reference. Variants, all in the Hugging Face Marian layout:

  tiny-f32       shared embeddings, only `model.shared.weight` stored, random final_logits_bias
  tiny-f16       F16 weights, every name of the tied group stored (duplicates), no final_logits_bias
  tiny-unshared  share_encoder_decoder_embeddings=false: encoder embed, decoder embed, lm_head

The vocabulary (vocab.json: piece -> model id) follows opus-mt: </s>=0, <unk>=1, pad=V-1, plus
language codes >>en<< / >>de<<; a few pieces of the SentencePiece models are left out on purpose so
that they map to <unk>. Goldens (golden/<variant>.json + .safetensors) come from marian_reference.py.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import marian_reference as ref  # noqa: E402

torch.set_num_threads(1)

GERMAN = """Der Hund läuft schnell über die Straße.
Die Katze schläft auf dem Sofa.
Ich möchte heute Abend ins Kino gehen.
Wir fahren am Wochenende nach München.
Das Wetter ist schön, aber es ist kalt.
Können Sie mir bitte helfen?
Er hat 3 Äpfel und 12 Birnen gekauft.
Die Brücke über den Fluss ist sehr alt.
Meine Großmutter wohnt in einem kleinen Dorf.
Das Frühstück ist um 7 Uhr fertig.
Wie spät ist es jetzt?
Ich weiß nicht, wo der Schlüssel ist.
Die Kinder spielen im Garten.
Öffnen Sie bitte das Fenster!
Der Zug kommt um 14:30 Uhr an.
Ich trinke gern Kaffee mit Milch und Zucker.
Übermorgen beginnt der Sommer.
Die Straße ist nass, weil es geregnet hat.
Das Buch liegt auf dem Tisch neben der Lampe.
Sie hat 25 Jahre in Köln gelebt.
Ich höre gern Musik, besonders am Abend.
Der Lehrer erklärt die Aufgabe noch einmal.
Wir müssen um 8 Uhr am Bahnhof sein.
Fußball ist in Deutschland sehr beliebt.
Die Äpfel sind süß und die Zitronen sind sauer.
Ist das Geschäft am Sonntag geöffnet?
Mein Bruder studiert Physik in Berlin.
Das Essen war gut; der Nachtisch war besser.
Heute ist der 1. Mai.
Ich habe keine Zeit, leider.
"""

ENGLISH = """The dog runs quickly across the street.
The cat sleeps on the sofa.
I would like to go to the cinema tonight.
We are driving to Munich at the weekend.
The weather is nice, but it is cold.
Can you help me, please?
He bought 3 apples and 12 pears.
The bridge over the river is very old.
My grandmother lives in a small village.
Breakfast is ready at 7 o'clock.
What time is it now?
I don't know where the key is.
The children are playing in the garden.
Please open the window!
The train arrives at 14:30.
I like to drink coffee with milk and sugar.
Summer begins the day after tomorrow.
The street is wet because it has rained.
The book is on the table next to the lamp.
She lived in Cologne for 25 years.
I like listening to music, especially in the evening.
The teacher explains the task once more.
We have to be at the station at 8 o'clock.
Football is very popular in Germany.
The apples are sweet and the lemons are sour.
Is the shop open on Sunday?
My brother studies physics in Berlin.
The food was good; the dessert was better.
Today is the 1st of May.
I have no time, unfortunately.
"""

# Sentences the goldens are made for (source side).
GOLDEN_SENTENCES = [
    "Der Hund läuft schnell über die Straße.",
    ">>en<< Ich weiß nicht, wo der Schlüssel ist!",
]

# Tokenizer parity sentences: umlauts, ß, punctuation, digits, emoji, extra spaces, empty, codes.
TOKENIZER_SENTENCES = [
    "Der Hund läuft schnell über die Straße.",
    "Größe, Maße & Gewicht: 12,5 kg (ca. 3 Stück)!",
    "Übermorgen um 14:30 Uhr — am Bahnhof?",
    "Ich liebe Kaffee ☕ und Kuchen 🍰.",
    "   viele    Leerzeichen   hier   ",
    "",
    ">>en<< Das ist ein Test.",
    ">>de<<",
    "ÄÖÜ äöü ß ẞ 0123456789",
    "Zeile eins\nZeile zwei",
    "Er sagt : \" Ich bin's ! \" , nicht ? Das ist nicht wahr . I don't know .",
]

SPECIAL_FIRST = ["</s>", "<unk>"]
# Random-weight scales chosen so that generation is non-trivial (varied tokens, some early </s>)
# while attention stays well-conditioned (float32 rounding far below the 1e-4 test tolerance).
QK_SCALE = 0.45
EMB_SCALE = 0.35
EOS_BIAS = 2.5
LANG_CODES = [">>en<<", ">>de<<"]
# Pieces dropped from vocab.json so that they become <unk> (if the spm models produce them).
DROPPED = ["▁Birnen", "▁Zitronen", "▁pears", "▁lemons"]


def train_spm(text, prefix, vocab_size):
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "input.txt")
        with open(inp, "w", encoding="utf-8") as f:
            f.write(text)
        subprocess.run(["spm_train", f"--input={inp}", f"--model_prefix={prefix}", f"--vocab_size={vocab_size}",
                        "--model_type=unigram", "--character_coverage=1.0", "--num_threads=1",
                        "--seed_sentencepiece_size=100000", "--minloglevel=2"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import vision_goldens  # no temporary paths in the committed model (trainer_spec)
    vision_goldens.anonymize_sentencepiece(prefix + ".model")


def spm_pieces(path):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=path)
    out = []
    for i in range(sp.get_piece_size()):
        if sp.is_control(i) or sp.is_unknown(i):
            continue
        out.append(sp.id_to_piece(i))
    return out


def build_vocab(src_spm, tgt_spm):
    pieces = []
    seen = set(SPECIAL_FIRST)
    for p in LANG_CODES + spm_pieces(src_spm) + spm_pieces(tgt_spm):
        if p in seen or p in DROPPED:
            continue
        seen.add(p)
        pieces.append(p)
    vocab = {}
    for p in SPECIAL_FIRST + pieces:
        vocab[p] = len(vocab)
    vocab["<pad>"] = len(vocab)
    return vocab


def make_config(V, shared):
    return {
        "architectures": ["MarianMTModel"],
        "model_type": "marian",
        "activation_function": "swish",
        "d_model": 32,
        "encoder_layers": 2,
        "decoder_layers": 2,
        "encoder_attention_heads": 4,
        "decoder_attention_heads": 4,
        "encoder_ffn_dim": 64,
        "decoder_ffn_dim": 64,
        "vocab_size": V,
        "decoder_vocab_size": V,
        "max_position_embeddings": 64,
        "scale_embedding": True,
        "share_encoder_decoder_embeddings": shared,
        "eos_token_id": 0,
        "pad_token_id": V - 1,
        "decoder_start_token_id": V - 1,
        "forced_eos_token_id": 0,
        "bad_words_ids": [[V - 1]],
        "num_beams": 3,
        "max_length": 64,
        "torch_dtype": "float32",
    }


def make_weights(cfg, seed, shared, with_bias):
    rng = np.random.default_rng(seed)
    D, F, V = cfg["d_model"], cfg["encoder_ffn_dim"], cfg["vocab_size"]

    def mat(out, inp, scale):
        return (rng.standard_normal((out, inp)) * scale).astype(np.float32)

    def vec(n, scale):
        return (rng.standard_normal(n) * scale).astype(np.float32)

    W = {}

    def attn(p):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            # a larger q/k scale makes attention peaked (non-uniform rows) in a random model
            s = QK_SCALE if n in ("q_proj", "k_proj") else 0.45
            W[f"{p}.{n}.weight"] = mat(D, D, s)
            W[f"{p}.{n}.bias"] = vec(D, 0.1)

    def ln(p):
        W[f"{p}.weight"] = (1.0 + vec(D, 0.1)).astype(np.float32)
        W[f"{p}.bias"] = vec(D, 0.1)

    def ffn(p):
        W[f"{p}.fc1.weight"] = mat(F, D, 0.3)
        W[f"{p}.fc1.bias"] = vec(F, 0.1)
        W[f"{p}.fc2.weight"] = mat(D, F, 0.35)
        W[f"{p}.fc2.bias"] = vec(D, 0.1)

    emb = mat(V, D, EMB_SCALE)
    emb[V - 1] = 0.0  # pad row zero, as at HF's random init
    if shared:
        W["model.shared.weight"] = emb
    else:
        W["model.encoder.embed_tokens.weight"] = emb
        dec = mat(V, D, EMB_SCALE)
        dec[V - 1] = 0.0
        W["model.decoder.embed_tokens.weight"] = dec
        W["lm_head.weight"] = dec.copy()
    for i in range(cfg["encoder_layers"]):
        p = f"model.encoder.layers.{i}"
        attn(p + ".self_attn")
        ln(p + ".self_attn_layer_norm")
        ffn(p)
        ln(p + ".final_layer_norm")
    for i in range(cfg["decoder_layers"]):
        p = f"model.decoder.layers.{i}"
        attn(p + ".self_attn")
        ln(p + ".self_attn_layer_norm")
        attn(p + ".encoder_attn")
        ln(p + ".encoder_attn_layer_norm")
        ffn(p)
        ln(p + ".final_layer_norm")
    if with_bias:
        bias = vec(V, 0.5)
        bias[0] = EOS_BIAS  # eos likely enough that some generations end before max_new_tokens
        W["final_logits_bias"] = bias.reshape(1, V)
    return W


def gen_config(cfg, num_beams, max_new, lp=1.0, es=False):
    return {"decoder_start_token_id": cfg["decoder_start_token_id"], "eos_token_id": cfg["eos_token_id"],
            "pad_token_id": cfg["pad_token_id"], "bad_words_ids": cfg["bad_words_ids"],
            "forced_eos_token_id": cfg["forced_eos_token_id"], "num_beams": num_beams,
            "max_length": 1 + max_new, "length_penalty": lp, "early_stopping": es}


def write_variant(out, name, tok_dir, vocab, seed, shared, f16, with_bias, duplicates):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    V = len(vocab)
    cfg = make_config(V, shared)
    W = make_weights(cfg, seed, shared, with_bias)
    if duplicates:
        W["model.encoder.embed_tokens.weight"] = W["model.shared.weight"].copy()
        W["model.decoder.embed_tokens.weight"] = W["model.shared.weight"].copy()
        W["lm_head.weight"] = W["model.shared.weight"].copy()
    if f16:
        W = {k: v.astype(np.float16).astype(np.float32) for k, v in W.items()}  # what the engine will see
        cfg["torch_dtype"] = "float16"
    ref.write_safetensors(os.path.join(folder, "model.safetensors"), W,
                          {k: ("F16" if f16 else "F32") for k in W})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    gen = {"bad_words_ids": cfg["bad_words_ids"], "decoder_start_token_id": V - 1, "eos_token_id": 0,
           "forced_eos_token_id": 0, "max_length": 64, "num_beams": 3, "pad_token_id": V - 1}
    with open(os.path.join(folder, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2)
    for fn in ("source.spm", "target.spm"):
        shutil.copy(os.path.join(tok_dir, fn), os.path.join(folder, fn))
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=1)
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"source_lang": "de", "target_lang": "en", "separate_vocabs": False,
                   "model_max_length": 64, "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
                   "tokenizer_class": "MarianTokenizer"}, f, indent=2)
    return folder, cfg, W


def make_goldens(out, name, folder, cfg, W):
    tok = ref.Tokenizer(folder)
    model = ref.Marian(cfg, W, torch.float64)  # exact answer for the float32 weights
    cases, tensors = [], {}
    for si, text in enumerate(GOLDEN_SENTENCES):
        pieces, ids = tok.encode(text)
        case = {"source": text, "source_tokens": pieces, "source_ids": ids}
        with torch.no_grad():
            g = gen_config(cfg, 1, 20)
            greedy = model.greedy(ids, g)
            case["greedy"] = {"max_new_tokens": 20, "ids": greedy, "translation": tok.decode(greedy)}
            beams = []
            for nb, lp, es, mx in [(3, 1.0, False, 20), (4, 0.6, True, 12), (2, 1.5, "never", 16)]:
                b_ids, b_score = model.beam(ids, gen_config(cfg, nb, mx, lp, es))
                beams.append({"num_beams": nb, "length_penalty": lp, "early_stopping": es, "max_new_tokens": mx,
                              "ids": b_ids, "score": b_score})
            case["beam"] = beams
            enc, enc_att = model.encode(ids)
            dec_in = [cfg["decoder_start_token_id"]] + greedy[:-1]
            logits, dself, dcross = model.decode(enc, dec_in)
        tensors[f"s{si}.encoder"] = enc_att.float().numpy()
        tensors[f"s{si}.decoder"] = dself.float().numpy()
        tensors[f"s{si}.cross"] = dcross.float().numpy()
        tensors[f"s{si}.logits"] = logits.float().numpy()
        cases.append(case)
        print(f"{name} s{si}: S={len(ids)} greedy T={len(greedy)} {greedy[:8]}... "
              f"beams {[len(b['ids']) for b in beams]}")
    gdir = os.path.join(out, "golden")
    os.makedirs(gdir, exist_ok=True)
    with open(os.path.join(gdir, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump({"variant": name, "cases": cases}, f, ensure_ascii=False, indent=1)
    ref.write_safetensors(os.path.join(gdir, f"{name}.safetensors"), tensors)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "data", "marian"))
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tok_dir:
        train_spm(GERMAN, os.path.join(tok_dir, "source"), 160)
        train_spm(ENGLISH, os.path.join(tok_dir, "target"), 150)
        os.rename(os.path.join(tok_dir, "source.model"), os.path.join(tok_dir, "source.spm"))
        os.rename(os.path.join(tok_dir, "target.model"), os.path.join(tok_dir, "target.spm"))
        vocab = build_vocab(os.path.join(tok_dir, "source.spm"), os.path.join(tok_dir, "target.spm"))
        print("vocab size", len(vocab))
        variants = [("tiny-f32", 1, True, False, True, False),
                    ("tiny-f16", 6, True, True, False, True),
                    ("tiny-unshared", 5, False, False, True, False)]
        for name, seed, shared, f16, bias, dup in variants:
            folder, cfg, W = write_variant(out, name, tok_dir, vocab, seed, shared, f16, bias, dup)
            make_goldens(out, name, folder, cfg, W)

    # tokenizer parity golden (the tokenizer files are identical in every variant)
    tok = ref.Tokenizer(os.path.join(out, "tiny-f32"))
    rows = []
    for text in TOKENIZER_SENTENCES:
        pieces, ids = tok.encode(text)
        tgt_ids = [tok.vocab.get(p, tok.unk) for p in tok.tgt.encode(text, out_type=str)] + [tok.eos]
        rows.append({"text": text, "pieces": pieces, "ids": ids, "target_ids": tgt_ids,
                     "decoded": tok.decode(tgt_ids)})
    with open(os.path.join(out, "golden", "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
