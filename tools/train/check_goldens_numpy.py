#!/usr/bin/env python3
"""Independent numpy re-implementation of Marian and ViT straight from docs/model-semantics.md (no
torch), checked against the goldens in tests/data/builtin/. Run from the repository root:
  /usr/bin/python3 tools/train/check_goldens_numpy.py
Prints the max abs differences (expected < 1e-5)."""
import json, sys, numpy as np
sys.path.insert(0, 'tools/golden'); import safetensors_io as st_io
from math import erf
W = {k: v.astype(np.float32) for k, v in st_io.load_file('resources/models/marian-de-en-tiny/model.safetensors').items()}
cfg = json.load(open('resources/models/marian-de-en-tiny/config.json'))
D = cfg['d_model']; H = cfg['encoder_attention_heads']; hd = D // H
def ln(x, p, eps=1e-5):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * W[p + '.weight'] + W[p + '.bias']
def lin(x, p): return x @ W[p + '.weight'].T + W[p + '.bias']
def pe(n):
    pos = np.arange(n, dtype=np.float64)[:, None]; i = np.arange(D // 2, dtype=np.float64)[None]
    a = pos / np.power(10000.0, 2 * i / D); return np.concatenate([np.sin(a), np.cos(a)], 1).astype(np.float32)
def attn(x, kv, p, mask):
    q = lin(x, p + '.q_proj') * hd ** -0.5; k = lin(kv, p + '.k_proj'); v = lin(kv, p + '.v_proj')
    q = q.reshape(-1, H, hd).transpose(1, 0, 2); k = k.reshape(-1, H, hd).transpose(1, 0, 2); v = v.reshape(-1, H, hd).transpose(1, 0, 2)
    s = q @ k.transpose(0, 2, 1) + mask
    s = np.exp(s - s.max(-1, keepdims=True)); pr = s / s.sum(-1, keepdims=True)
    o = (pr @ v).transpose(1, 0, 2).reshape(-1, D); return lin(o, p + '.out_proj'), pr
silu = lambda x: x / (1 + np.exp(-x))
E = W['model.shared.weight']
for n in (1, 2, 3):
    g = json.load(open(f'tests/data/builtin/marian_{n}.json'))
    s = np.array(g['source_ids']); t = np.array(g['decoder_input_ids'])
    x = E[s] * np.sqrt(D) + pe(len(s)); ea = []
    for l in range(cfg['encoder_layers']):
        p = f'model.encoder.layers.{l}'
        a, pr = attn(x, x, p + '.self_attn', 0); ea.append(pr); x = ln(x + a, p + '.self_attn_layer_norm')
        x = ln(x + lin(silu(lin(x, p + '.fc1')), p + '.fc2'), p + '.final_layer_norm')
    enc = x; T = len(t); causal = np.triu(np.full((T, T), np.finfo(np.float32).min, np.float32), 1)
    y = E[t] * np.sqrt(D) + pe(T); da = []; ca = []
    for l in range(cfg['decoder_layers']):
        p = f'model.decoder.layers.{l}'
        a, pr = attn(y, y, p + '.self_attn', causal); da.append(pr); y = ln(y + a, p + '.self_attn_layer_norm')
        a, pr = attn(y, enc, p + '.encoder_attn', 0); ca.append(pr); y = ln(y + a, p + '.encoder_attn_layer_norm')
        y = ln(y + lin(silu(lin(y, p + '.fc1')), p + '.fc2'), p + '.final_layer_norm')
    logits = y @ E.T + W['final_logits_bias'][0]
    R = g['logits_rows']
    print(n, 'logits', np.abs(logits[:R] - np.array(g['logits'])).max(),
          'enc', np.abs(np.array(ea) - np.array(g['attentions']['encoder'])).max(),
          'dec', np.abs(np.array(da) - np.array(g['attentions']['decoder'])).max(),
          'cross', np.abs(np.array(ca) - np.array(g['attentions']['cross'])).max(),
          'argmax==target', (logits.argmax(-1) == np.array(g['target_ids'])).all())
# ViT
W = {k: v.astype(np.float32) for k, v in st_io.load_file('resources/models/vit-fashion-mnist/model.safetensors').items()}
vc = json.load(open('resources/models/vit-fashion-mnist/config.json')); D = vc['hidden_size']; H = vc['num_attention_heads']; hd = D // H
from PIL import Image
erfv = np.vectorize(erf)
for f in ['ankle_boot_1', 'shirt_1', 'trouser_2']:
    g = json.load(open(f'tests/data/builtin/vit_{f}.json'))
    img = np.array(Image.open(g['image']).convert('L'), dtype=np.float64) * (1 / 255)
    pc = json.load(open('resources/models/vit-fashion-mnist/preprocessor_config.json'))
    px = (img.astype(np.float32) - np.float32(pc['image_mean'][0])) / np.float32(pc['image_std'][0])
    pw = W['vit.embeddings.patch_embeddings.projection.weight'].reshape(D, -1)
    patches = px.reshape(7, 4, 7, 4).transpose(0, 2, 1, 3).reshape(49, 16)
    x = np.concatenate([W['vit.embeddings.cls_token'][0], patches @ pw.T + W['vit.embeddings.patch_embeddings.projection.bias']]) + W['vit.embeddings.position_embeddings'][0]
    atts = []
    for l in range(vc['num_hidden_layers']):
        p = f'vit.encoder.layer.{l}'
        h = ln(x, p + '.layernorm_before', 1e-12)
        q = lin(h, p + '.attention.attention.query').reshape(-1, H, hd).transpose(1, 0, 2)
        k = lin(h, p + '.attention.attention.key').reshape(-1, H, hd).transpose(1, 0, 2)
        v = lin(h, p + '.attention.attention.value').reshape(-1, H, hd).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd); s = np.exp(s - s.max(-1, keepdims=True)); pr = s / s.sum(-1, keepdims=True); atts.append(pr)
        x = x + lin((pr @ v).transpose(1, 0, 2).reshape(-1, D), p + '.attention.output.dense')
        h = lin(ln(x, p + '.layernorm_after', 1e-12), p + '.intermediate.dense'); h = 0.5 * h * (1 + erfv(h / np.sqrt(2)))
        x = x + lin(h.astype(np.float32), p + '.output.dense')
    lg = lin(ln(x, 'vit.layernorm', 1e-12)[0], 'classifier')
    print(f, 'px', np.abs(px - np.array(g['pixel_values'])).max(), 'logits', np.abs(lg - np.array(g['logits'])).max(), 'att', np.abs(np.array(atts) - np.array(g['attentions'])).max())
