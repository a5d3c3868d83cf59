#!/usr/bin/env python3
"""Golden cases for the playground's scaled dot-product attention (tests/fast/test_attention.cpp).

An independent PyTorch implementation of the seed's formulation, computed in float64:
  scores = Q·Kᵀ; scaled = scores / sqrt(d_k); masked = scaled with -1e9 where mask == 0;
  weights = softmax(masked, keys); output = weights·V; heads split Q/K (d_model) and V (d_v, which may
  differ) column-wise, outputs concatenated to [queries, d_v].
Run: /usr/bin/python3 tools/golden/attention_golden.py > tests/data/attention/cases.json
"""
import json
import math

import torch


def attention(q, k, v, mask, heads):
    nq, d_model = q.shape
    dk = d_model // heads
    dv = v.shape[1] // heads
    stages = {key: [] for key in ("scores", "scaled", "masked", "weights", "output")}
    outs = []
    for h in range(heads):
        sl = slice(h * dk, (h + 1) * dk)
        scores = q[:, sl] @ k[:, sl].T
        scaled = scores / math.sqrt(dk)
        masked = scaled.masked_fill(mask == 0, -1e9) if mask is not None else scaled.clone()
        weights = torch.softmax(masked, dim=-1)
        out = weights @ v[:, h * dv:(h + 1) * dv]
        for key, val in zip(stages, (scores, scaled, masked, weights, out)):
            stages[key].append(val.tolist())
        outs.append(out)
    stages["concat"] = torch.cat(outs, dim=1).tolist()
    return stages


def make_case(name, gen, nq, nk, d_model, heads, mask_kind, d_v=None):
    q = torch.randn(nq, d_model, generator=gen, dtype=torch.float64)
    k = torch.randn(nk, d_model, generator=gen, dtype=torch.float64)
    v = torch.randn(nk, d_model if d_v is None else d_v, generator=gen, dtype=torch.float64)
    # Round inputs to float32 so both sides start from identical values.
    q, k, v = (t.float().double() for t in (q, k, v))
    mask = None
    if mask_kind == "causal":
        mask = torch.tril(torch.ones(nq, nk, dtype=torch.float64))
    elif mask_kind == "padding":
        mask = torch.ones(nq, nk, dtype=torch.float64)
        mask[:, nk - 2:] = 0
    elif mask_kind == "custom":
        mask = (torch.rand(nq, nk, generator=gen) > 0.4).double()
        mask[:, 0] = 1  # keep every row attending somewhere
    case = {"name": name, "heads": heads, "query": q.tolist(), "key": k.tolist(), "value": v.tolist()}
    if mask is not None:
        case["mask"] = mask.tolist()
    case["expected"] = attention(q, k, v, mask, heads)
    return case


def main():
    gen = torch.Generator().manual_seed(20261129)
    specs = [
        ("no_mask_1head", 4, 4, 8, 1, None),
        ("causal_1head", 5, 5, 6, 1, "causal"),
        ("padding_2heads", 4, 6, 6, 2, "padding"),      # d_k = 3
        ("custom_3heads", 6, 7, 15, 3, "custom"),       # d_k = 5
        ("causal_4heads", 7, 7, 12, 4, "causal"),       # d_k = 3
        ("no_mask_rect_5heads", 3, 9, 10, 5, None),     # d_k = 2, more keys than queries
        ("custom_1head_dk7", 5, 5, 7, 1, "custom"),
        # d_v != d_k (the output is [queries, d_v])
        ("dv6_dmodel4_1head", 4, 5, 4, 1, None, 6),
        ("dv4_dmodel8_2heads_causal", 5, 5, 8, 2, "causal", 4),  # d_k = 4, d_v / h = 2
        ("dv9_dmodel6_3heads_custom", 4, 6, 6, 3, "custom", 9),  # d_k = 2, d_v / h = 3
    ]
    cases = [make_case(*s[:1], gen, *s[1:]) for s in specs]
    print(json.dumps({"generator": "tools/golden/attention_golden.py", "torch": torch.__version__,
                      "cases": cases}))


if __name__ == "__main__":
    main()
