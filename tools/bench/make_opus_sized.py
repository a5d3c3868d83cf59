#!/usr/bin/python3
"""Writes a random Marian checkpoint with opus-mt-de-en's sizes (d_model 512, 6+6 layers, 8 heads,
ffn 2048, vocab 58101; F32, about 300 MB) for load-time and per-token timings. Not committed.

  /usr/bin/python3 tools/bench/make_opus_sized.py [--out /tmp/opus-sized]
  build/app/attnlens-cli bench --model /tmp/opus-sized --src "Der Hund läuft schnell über die Straße." \
      --new-tokens 32 --repeat 3

The tokenizer files are the test fixture's (tests/data/marian/tiny-f32); vocab.json is padded with
filler pieces to 58101 entries so that it matches the checkpoint (pad = 58100, as in opus-mt).
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import marian_reference as ref  # noqa: E402

D, F, L, H, V, P = 512, 2048, 6, 8, 58101, 512


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/opus-sized")
    args = ap.parse_args()
    fixture = os.path.join(HERE, "..", "..", "tests", "data", "marian", "tiny-f32")
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)

    def mat(o, i, s):
        return (rng.standard_normal((o, i), dtype=np.float32) * s)

    def vec(n, s):
        return (rng.standard_normal(n, dtype=np.float32) * s)

    W = {"model.shared.weight": mat(V, D, 0.05), "final_logits_bias": np.zeros((1, V), np.float32)}

    def attn(p):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            W[f"{p}.{n}.weight"] = mat(D, D, 0.04)
            W[f"{p}.{n}.bias"] = vec(D, 0.01)

    def ln(p):
        W[f"{p}.weight"] = np.ones(D, np.float32)
        W[f"{p}.bias"] = np.zeros(D, np.float32)

    def ffn(p):
        W[f"{p}.fc1.weight"] = mat(F, D, 0.04)
        W[f"{p}.fc1.bias"] = vec(F, 0.01)
        W[f"{p}.fc2.weight"] = mat(D, F, 0.02)
        W[f"{p}.fc2.bias"] = vec(D, 0.01)

    for i in range(L):
        p = f"model.encoder.layers.{i}"
        attn(p + ".self_attn"), ln(p + ".self_attn_layer_norm"), ffn(p), ln(p + ".final_layer_norm")
        p = f"model.decoder.layers.{i}"
        attn(p + ".self_attn"), ln(p + ".self_attn_layer_norm"), attn(p + ".encoder_attn")
        ln(p + ".encoder_attn_layer_norm"), ffn(p), ln(p + ".final_layer_norm")
    ref.write_safetensors(os.path.join(args.out, "model.safetensors"), W)

    cfg = {"model_type": "marian", "architectures": ["MarianMTModel"], "activation_function": "swish",
           "d_model": D, "encoder_layers": L, "decoder_layers": L, "encoder_attention_heads": H,
           "decoder_attention_heads": H, "encoder_ffn_dim": F, "decoder_ffn_dim": F, "vocab_size": V,
           "decoder_vocab_size": V, "max_position_embeddings": P, "scale_embedding": True,
           "share_encoder_decoder_embeddings": True, "eos_token_id": 0, "pad_token_id": V - 1,
           "decoder_start_token_id": V - 1, "forced_eos_token_id": 0, "bad_words_ids": [[V - 1]],
           "num_beams": 4, "max_length": 512}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(fixture, "vocab.json"), encoding="utf-8") as f:
        small = json.load(f)
    vocab = {k: v for k, v in small.items() if k != "<pad>"}
    i = 0
    while len(vocab) < V - 1:
        vocab[f"\u2581filler{i}"] = len(vocab)
        i += 1
    vocab["<pad>"] = V - 1
    with open(os.path.join(args.out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    for fn in ("source.spm", "target.spm"):
        shutil.copy(os.path.join(fixture, fn), os.path.join(args.out, fn))
    print("wrote", args.out, f"{os.path.getsize(os.path.join(args.out, 'model.safetensors')) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
