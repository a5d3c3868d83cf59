#!/usr/bin/env python3
"""The built-in translator's PyTorch side with exact Hugging Face Marian semantics: the tokenizer
(MarianTokenizer, slow), vocab.json builder, MarianMTModel (state-dict names equal transformers'),
greedy and beam decoding. Used by train_marian.py and make_goldens.py; semantics in
docs/model-semantics.md (post-norm layers, LayerNorm eps 1e-5, SiLU, q scaled by head_dim^-0.5 after
the bias, additive masks with finfo(float32).min, embeddings x sqrt(d_model) + sinusoidal positions,
lm_head tied to model.shared + final_logits_bias).
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before numpy and torch load OpenBLAS)
import numpy as np  # noqa: E402,F401
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

NEG = torch.finfo(torch.float32).min


# ------------------------------------------------------------------------------------ tokenizer
class Tokenizer:
    """MarianTokenizer (slow) semantics: spm pieces -> vocab.json ids, unknown -> <unk>, + </s>."""

    def __init__(self, folder_or_files):
        import sentencepiece as spm
        d = folder_or_files
        self.src = spm.SentencePieceProcessor(model_file=os.path.join(d, "source.spm"))
        self.tgt = spm.SentencePieceProcessor(model_file=os.path.join(d, "target.spm"))
        with open(os.path.join(d, "vocab.json"), encoding="utf-8") as f:
            self.vocab = json.load(f)
        self.inv = {i: p for p, i in self.vocab.items()}
        self.eos, self.unk, self.pad = self.vocab["</s>"], self.vocab["<unk>"], self.vocab["<pad>"]

    def encode(self, text, side="src"):
        sp = self.src if side == "src" else self.tgt
        pieces = sp.encode(text, out_type=str)
        return [self.vocab.get(p, self.unk) for p in pieces] + [self.eos]

    def pieces(self, ids):
        return [self.inv.get(int(i), "<unk>") for i in ids]

    def decode(self, ids):
        toks = [self.inv.get(int(i), "") for i in ids if int(i) not in (self.eos, self.pad)]
        toks = [t if t != "<unk>" else " ⁇ " for t in toks]
        return self.tgt.decode_pieces(toks).strip() if toks else ""


def build_vocab(spm_model, out_dir):
    """Marian convention: </s>=0, <unk>=1, spm pieces (spm order, minus control/unk), <pad>=last."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=spm_model)
    vocab = {"</s>": 0, "<unk>": 1}
    for i in range(sp.get_piece_size()):
        if sp.is_unknown(i) or sp.is_control(i):
            continue
        p = sp.id_to_piece(i)
        if p not in vocab:
            vocab[p] = len(vocab)
    vocab["<pad>"] = len(vocab)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=1)
    copy_spm(spm_model, os.path.join(out_dir, "source.spm"))
    copy_spm(spm_model, os.path.join(out_dir, "target.spm"))
    return vocab


def copy_spm(src, dst):
    """Copy a SentencePiece model without the training machine's paths: spm_train records its
    --input files and --model_prefix in the model's trainer_spec. Pieces, scores and the
    normaliser are untouched, so tokenization is identical."""
    from sentencepiece import sentencepiece_model_pb2 as pb  # needs python3-protobuf
    m = pb.ModelProto()
    with open(src, "rb") as f:
        m.ParseFromString(f.read())
    del m.trainer_spec.input[:]
    m.trainer_spec.model_prefix = os.path.basename(m.trainer_spec.model_prefix)
    with open(dst, "wb") as f:
        f.write(m.SerializeToString())


# ---------------------------------------------------------------------------------------- model
def sinusoidal_table(n_pos, dim):
    pos = np.arange(n_pos, dtype=np.float64)[:, None]
    i = np.arange(dim // 2, dtype=np.float64)[None, :]
    angle = pos / np.power(10000.0, 2 * i / dim)
    half = (dim + 1) // 2
    out = np.zeros((n_pos, dim), dtype=np.float64)
    out[:, :dim // 2] = np.sin(angle)
    out[:, half:half + dim // 2] = np.cos(angle)
    return torch.from_numpy(out.astype(np.float32))


class MarianAttention(nn.Module):
    def __init__(self, d, h, dropout):
        super().__init__()
        self.h, self.hd = h, d // h
        self.scaling = self.hd ** -0.5
        self.q_proj, self.k_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.dropout = dropout

    def forward(self, x, kv, mask):
        """x [B,Tq,D], kv [B,Tk,D], mask additive [B or 1,1,Tq or 1,Tk]."""
        b, tq, d = x.shape
        tk = kv.shape[1]
        q = (self.q_proj(x) * self.scaling).view(b, tq, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(kv).view(b, tk, self.h, self.hd).transpose(1, 2)
        v = self.v_proj(kv).view(b, tk, self.h, self.hd).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2))
        if mask is not None:
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        p = F.dropout(probs, self.dropout, self.training) if self.dropout else probs
        out = torch.matmul(p, v).transpose(1, 2).reshape(b, tq, d)
        return self.out_proj(out), probs


class EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MarianAttention(d, c["encoder_attention_heads"], c["attention_dropout"])
        self.self_attn_layer_norm = nn.LayerNorm(d, eps=1e-5)
        self.fc1 = nn.Linear(d, c["encoder_ffn_dim"])
        self.fc2 = nn.Linear(c["encoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d, eps=1e-5)
        self.dropout = c["dropout"]

    def forward(self, x, mask):
        a, probs = self.self_attn(x, x, mask)
        x = self.self_attn_layer_norm(x + F.dropout(a, self.dropout, self.training))
        f = self.fc2(F.silu(self.fc1(x)))
        x = self.final_layer_norm(x + F.dropout(f, self.dropout, self.training))
        return x, probs


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MarianAttention(d, c["decoder_attention_heads"], c["attention_dropout"])
        self.self_attn_layer_norm = nn.LayerNorm(d, eps=1e-5)
        self.encoder_attn = MarianAttention(d, c["decoder_attention_heads"], c["attention_dropout"])
        self.encoder_attn_layer_norm = nn.LayerNorm(d, eps=1e-5)
        self.fc1 = nn.Linear(d, c["decoder_ffn_dim"])
        self.fc2 = nn.Linear(c["decoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d, eps=1e-5)
        self.dropout = c["dropout"]

    def forward(self, x, enc, self_mask, cross_mask):
        a, sp = self.self_attn(x, x, self_mask)
        x = self.self_attn_layer_norm(x + F.dropout(a, self.dropout, self.training))
        a, cp = self.encoder_attn(x, enc, cross_mask)
        x = self.encoder_attn_layer_norm(x + F.dropout(a, self.dropout, self.training))
        f = self.fc2(F.silu(self.fc1(x)))
        x = self.final_layer_norm(x + F.dropout(f, self.dropout, self.training))
        return x, sp, cp


class Stack(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)


class MarianModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = Stack([EncoderLayer(c) for _ in range(c["encoder_layers"])])
        self.decoder = Stack([DecoderLayer(c) for _ in range(c["decoder_layers"])])


class MarianMTModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.model = MarianModel(c)
        self.register_buffer("final_logits_bias", torch.zeros(1, c["vocab_size"]))
        self.register_buffer("pos", sinusoidal_table(c["max_position_embeddings"], c["d_model"]),
                             persistent=False)
        self.embed_scale = math.sqrt(c["d_model"])
        self.dropout = c["dropout"]
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)
        nn.init.normal_(self.model.shared.weight, std=c["d_model"] ** -0.5)
        with torch.no_grad():
            self.model.shared.weight[c["pad_token_id"]].zero_()

    def embed(self, ids, offset=0):
        x = self.model.shared(ids) * self.embed_scale + self.pos[offset:offset + ids.shape[1]]
        return F.dropout(x, self.dropout, self.training)

    def encode(self, src, src_mask=None, output_attentions=False):
        """src [B,S]; src_mask [B,S] 1 = token, 0 = pad."""
        mask = None
        if src_mask is not None:
            mask = (1.0 - src_mask[:, None, None, :].float()) * NEG
        x = self.embed(src)
        atts = []
        for layer in self.model.encoder.layers:
            x, p = layer(x, mask)
            atts.append(p)
        return x, mask, atts

    def decode(self, tgt_in, enc, cross_mask, output_attentions=False):
        t = tgt_in.shape[1]
        causal = torch.triu(torch.full((t, t), NEG, device=tgt_in.device), diagonal=1)[None, None]
        x = self.embed(tgt_in)
        sa, ca = [], []
        for layer in self.model.decoder.layers:
            x, sp, cp = layer(x, enc, causal, cross_mask)
            sa.append(sp)
            ca.append(cp)
        logits = F.linear(x, self.model.shared.weight) + self.final_logits_bias
        return logits, sa, ca

    def forward(self, src, src_mask, tgt_in):
        enc, mask, _ = self.encode(src, src_mask)
        logits, _, _ = self.decode(tgt_in, enc, mask)
        return logits


# ----------------------------------------------------------------------------------- generation
@torch.no_grad()
def greedy(model, src_ids, max_new_tokens=32, batch_src_mask=None):
    """HF generate() semantics with num_beams=1: start = decoder_start (pad), pad banned
    (bad_words_ids), forced eos at max_length-1, stop at eos. src_ids [B,S] tensor.
    Returns list of id lists (start token included, final eos included)."""
    c = model.config
    pad, eos = c["pad_token_id"], c["eos_token_id"]
    enc, mask, _ = model.encode(src_ids, batch_src_mask)
    b, dev = src_ids.shape[0], src_ids.device
    out = torch.full((b, 1), c["decoder_start_token_id"], dtype=torch.long, device=dev)
    done = torch.zeros(b, dtype=torch.bool, device=dev)
    max_length = 1 + max_new_tokens
    for _ in range(max_new_tokens):
        logits, _, _ = model.decode(out, enc, mask)
        lg = logits[:, -1].clone()
        lg[:, pad] = -float("inf")
        if out.shape[1] == max_length - 1:
            forced = torch.full_like(lg, -float("inf"))
            forced[:, eos] = 0
            lg = forced
        nxt = lg.argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], 1)
        done |= nxt == eos
        if done.all():
            break
    res = []
    for row in out.tolist():
        r = [row[0]]
        for t in row[1:]:
            r.append(t)
            if t == eos:
                break
        res.append(r)
    return res


# Incremental (cached) decoding for evaluation speed; numerically the same computation as
# decode() restricted to the last position. greedy() above (full recompute) is the reference used
# for the goldens.
def _heads(x, attn):
    b, t, d = x.shape
    return x.view(b, t, attn.h, attn.hd).transpose(1, 2)


def _attend(attn, q, k, v, mask):
    scores = torch.matmul(q, k.transpose(-1, -2))
    if mask is not None:
        scores = scores + mask
    out = torch.matmul(torch.softmax(scores, -1), v)
    b, h, t, hd = out.shape
    return attn.out_proj(out.transpose(1, 2).reshape(b, t, h * hd))


@torch.no_grad()
def decoder_step(model, tok_new, pos, enc, cross_mask, cache):
    """tok_new [B,1] at position pos; cache: list per layer of dicts (filled in place)."""
    x = model.embed(tok_new, offset=pos)
    for li, layer in enumerate(model.model.decoder.layers):
        c = cache[li]
        sa = layer.self_attn
        k, v = _heads(sa.k_proj(x), sa), _heads(sa.v_proj(x), sa)
        c["k"] = k if "k" not in c else torch.cat([c["k"], k], 2)
        c["v"] = v if "v" not in c else torch.cat([c["v"], v], 2)
        q = _heads(sa.q_proj(x) * sa.scaling, sa)
        x = layer.self_attn_layer_norm(x + _attend(sa, q, c["k"], c["v"], None))
        ca = layer.encoder_attn
        if "ck" not in c:
            c["ck"], c["cv"] = _heads(ca.k_proj(enc), ca), _heads(ca.v_proj(enc), ca)
        q = _heads(ca.q_proj(x) * ca.scaling, ca)
        x = layer.encoder_attn_layer_norm(x + _attend(ca, q, c["ck"], c["cv"], cross_mask))
        x = layer.final_layer_norm(x + layer.fc2(F.silu(layer.fc1(x))))
    return F.linear(x, model.model.shared.weight)[:, -1] + model.final_logits_bias[0]


def _reorder(cache, idx):
    for c in cache:
        for key in ("k", "v", "ck", "cv"):
            if key in c:
                c[key] = c[key].index_select(0, idx)


@torch.no_grad()
def greedy_fast(model, src_ids, max_new_tokens=32, batch_src_mask=None):
    """Same semantics as greedy(), with a key/value cache."""
    c = model.config
    pad, eos = c["pad_token_id"], c["eos_token_id"]
    enc, mask, _ = model.encode(src_ids, batch_src_mask)
    b, dev = src_ids.shape[0], src_ids.device
    cache = [dict() for _ in model.model.decoder.layers]
    cur = torch.full((b, 1), c["decoder_start_token_id"], dtype=torch.long, device=dev)
    outs = [cur[:, 0]]
    done = torch.zeros(b, dtype=torch.bool, device=dev)
    for step in range(max_new_tokens):
        lg = decoder_step(model, cur, step, enc, mask, cache)
        lg[:, pad] = -float("inf")
        if step == max_new_tokens - 1:
            forced = torch.full_like(lg, -float("inf"))
            forced[:, eos] = 0
            lg = forced
        nxt = lg.argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        outs.append(nxt)
        done |= nxt == eos
        cur = nxt[:, None]
        if done.all():
            break
    res = []
    for row in torch.stack(outs, 1).tolist():
        r = [row[0]]
        for t in row[1:]:
            r.append(t)
            if t == eos:
                break
        res.append(r)
    return res


@torch.no_grad()
def beam_search_fast(model, src_ids, num_beams=4, max_new_tokens=64, length_penalty=1.0):
    """One sentence (src_ids [1,S]); beam search with a key/value cache, pad masked before the
    log-softmax, forced eos at the end, hypotheses scored by sum log-prob / length**length_penalty
    (HF BeamHypotheses style, simplified: the evaluation beam of this script, not the app's)."""
    c = model.config
    pad, eos = c["pad_token_id"], c["eos_token_id"]
    enc, mask, _ = model.encode(src_ids)
    cache = [dict() for _ in model.model.decoder.layers]
    dev = src_ids.device
    beams = [([c["decoder_start_token_id"]], 0.0)]
    finished = []
    for step in range(max_new_tokens):
        cur = torch.tensor([[b[0][-1]] for b in beams], device=dev)
        lg = decoder_step(model, cur, step, enc.expand(len(beams), -1, -1), None, cache)
        lg[:, pad] = -float("inf")  # Marian's adjust_logits_during_generation: before the log-softmax
        lp = torch.log_softmax(lg, -1)
        if step == max_new_tokens - 1:
            keep = lp[:, eos].clone()
            lp[:] = -float("inf")
            lp[:, eos] = keep
        scores = lp + torch.tensor([b[1] for b in beams], device=dev)[:, None]
        top = torch.topk(scores.view(-1), 2 * num_beams)
        new, src_rows = [], []
        for sc, idx in zip(top.values.tolist(), top.indices.tolist()):
            bi, tok = divmod(idx, lp.shape[1])
            seq = beams[bi][0] + [tok]
            if tok == eos:
                finished.append((seq, sc / ((len(seq) - 1) ** length_penalty)))
            else:
                new.append((seq, sc))
                src_rows.append(bi)
            if len(new) == num_beams:
                break
        if not new:
            break
        beams = new
        _reorder(cache, torch.tensor(src_rows, device=dev))
        if len(finished) >= num_beams:
            best_open = max(b[1] for b in beams) / (len(beams[0][0]) ** length_penalty)
            if max(f[1] for f in finished) >= best_open:
                break
    if not finished:
        finished = [(b[0], b[1] / (len(b[0]) - 1)) for b in beams]
    return max(finished, key=lambda f: f[1])[0]


def translate(model, tok, sentences, beam=1, max_new_tokens=64):
    """Translations of sentences, computed on the device the model's weights are on."""
    model.eval()
    dev = model.final_logits_bias.device
    outs = []
    if beam == 1:
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        res = [None] * len(sentences)
        for s in range(0, len(order), 64):
            idx = order[s:s + 64]
            enc = [tok.encode(sentences[i]) for i in idx]
            L = max(len(e) for e in enc)
            src = torch.full((len(enc), L), tok.pad, dtype=torch.long)
            m = torch.zeros((len(enc), L), dtype=torch.long)
            for j, e in enumerate(enc):
                src[j, :len(e)] = torch.tensor(e)
                m[j, :len(e)] = 1
            cap = min(max_new_tokens, 2 * L + 8)
            for j, o in zip(idx, greedy_fast(model, src.to(dev), cap, m.to(dev))):
                res[j] = tok.decode(o[1:])
        return res
    for s in sentences:
        src = tok.encode(s)
        ids = beam_search_fast(model, torch.tensor([src], device=dev), beam, min(max_new_tokens, 2 * len(src) + 8))
        outs.append(tok.decode(ids[1:]))
    return outs
