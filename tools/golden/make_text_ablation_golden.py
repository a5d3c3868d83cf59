"""Goldens for head ablation (transformers' head_mask) on the BERT and GPT-2 fixtures, without regenerating the
others: tests/data/text/{bert-mlm,bert-cased,gpt2}/golden_ablate.safetensors hold head_mask [L, H] (0 = off),
attentions [L, H, T, T] (the heads off all zero), logits [T, V] (LM heads) or hidden [T, D] (BertModel) of the
independent reference (text_reference.py) for the ids of the folder's first golden case.

Run with Debian's interpreter after tools/golden/make_text_fixtures.py:
    /usr/bin/python3 tools/golden/make_text_ablation_golden.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
import fast_blas  # noqa: F401,E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import load_file, save_file  # noqa: E402
from text_reference import bert_forward, gpt2_forward, load_config  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TEXT = os.path.join(ROOT, "tests", "data", "text")

# The C++ test switches off the same heads: layer 0 head 1, layer 1 heads 0 and 3.
OFF = [(0, 1), (1, 0), (1, 3)]


def first_ids(folder):
    with open(os.path.join(folder, "golden.json"), encoding="utf-8") as f:
        return json.load(f)["cases"][0]["ids"]


def head_mask(layers, heads):
    mask = torch.ones(layers, heads)
    for layer, head in OFF:
        mask[layer, head] = 0
    return mask


def weights(folder, gamma):
    w = {k: torch.from_numpy(v) for k, v in load_file(os.path.join(folder, "model.safetensors")).items()}
    if gamma:
        w = {k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias"): v
             for k, v in w.items()}
    return w


def make_bert(name, prefix, gamma):
    folder = os.path.join(TEXT, name)
    c = load_config(folder)
    mask = head_mask(c["num_hidden_layers"], c["num_attention_heads"])
    attentions, hidden, logits, _ = bert_forward(weights(folder, gamma), c, first_ids(folder), prefix, mask)
    out = {"head_mask": mask, "attentions": attentions, "hidden": hidden}
    if logits is not None:
        out["logits"] = logits
    save_file({k: v.float().contiguous() for k, v in out.items()}, os.path.join(folder, "golden_ablate.safetensors"))
    print("wrote", name)


def make_gpt2(name, prefix):
    folder = os.path.join(TEXT, name)
    c = load_config(folder)
    mask = head_mask(c["n_layer"], c["n_head"])
    attentions, logits = gpt2_forward(weights(folder, False), c, first_ids(folder), prefix, mask)
    out = {"head_mask": mask, "attentions": attentions, "logits": logits}
    save_file({k: v.float().contiguous() for k, v in out.items()}, os.path.join(folder, "golden_ablate.safetensors"))
    print("wrote", name)


def main():
    torch.set_num_threads(1)
    with torch.no_grad():
        make_bert("bert-mlm", "bert.", gamma=False)
        make_bert("bert-cased", "", gamma=True)
        make_gpt2("gpt2", "transformer.")


if __name__ == "__main__":
    main()
