"""Golden for head ablation on the tiny-f32 Marian fixture (transformers' layer_head_mask and
cross_attn_layer_head_mask = 0 for the heads below), without regenerating the other goldens:
tests/data/marian/golden/ablate-tiny-f32.json (source ids, ablated heads, greedy ids with them) and
ablate-tiny-f32.safetensors (encoder/decoder/cross attentions and logits of the teacher-forced pass over that
greedy output), from the independent reference (marian_reference.py) in float64 like the other goldens.

Run with Debian's interpreter: /usr/bin/python3 tools/golden/make_marian_ablation_golden.py
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import marian_reference as ref  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDER = os.path.join(ROOT, "tests", "data", "marian", "tiny-f32")
OUT = os.path.join(ROOT, "tests", "data", "marian", "golden")
SENTENCE = "Der Hund läuft schnell über die Straße."
# (kind, layer, head), layers and heads from 0; the C++ test switches off the same ones.
ABLATED = [("encoder", 0, 1), ("decoder", 1, 0), ("cross", 1, 1)]


def main():
    torch.set_num_threads(1)
    with open(os.path.join(FOLDER, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    model = ref.Marian(cfg, ref.read_safetensors(os.path.join(FOLDER, "model.safetensors")), torch.float64)
    heads = {"encoder": cfg["encoder_attention_heads"], "decoder": cfg["decoder_attention_heads"],
             "cross": cfg["decoder_attention_heads"]}
    for kind, layer, head in ABLATED:
        mask = model.head_mask.setdefault((kind, layer), torch.ones(heads[kind], dtype=torch.float64))
        mask[head] = 0
    tok = ref.Tokenizer(FOLDER)
    _, ids = tok.encode(SENTENCE)
    gen = {"decoder_start_token_id": cfg["decoder_start_token_id"], "eos_token_id": cfg["eos_token_id"],
           "pad_token_id": cfg["pad_token_id"], "bad_words_ids": cfg["bad_words_ids"],
           "forced_eos_token_id": cfg["forced_eos_token_id"], "num_beams": 1, "max_length": 21,
           "length_penalty": 1.0, "early_stopping": False}
    with torch.no_grad():
        greedy = model.greedy(ids, gen)
        enc, enc_att = model.encode(ids)
        logits, dself, dcross = model.decode(enc, [cfg["decoder_start_token_id"]] + greedy[:-1])
    case = {"source": SENTENCE, "source_ids": ids, "ablated": [list(a) for a in ABLATED],
            "greedy": {"max_new_tokens": 20, "ids": greedy}}
    with open(os.path.join(OUT, "ablate-tiny-f32.json"), "w", encoding="utf-8") as f:
        json.dump(case, f, ensure_ascii=False, indent=1)
    ref.write_safetensors(os.path.join(OUT, "ablate-tiny-f32.safetensors"),
                          {"encoder": enc_att.float().numpy(), "decoder": dself.float().numpy(),
                           "cross": dcross.float().numpy(), "logits": logits.float().numpy()})
    print(f"greedy with {len(ABLATED)} heads off: {greedy}")


if __name__ == "__main__":
    main()
