"""An independent PyTorch MarianMT (inference only), written from docs/model-semantics.md.

It is the reference the C++ engine is tested against, so it deliberately shares no code with it and
does not use `transformers` (not installed). It covers:

* the MarianTokenizer path (language-code regex, source.spm pieces, vocab.json ids, appended </s>,
  target.spm decoding that skips special tokens),
* the model (scaled embeddings + sin-then-cos positions from 0, post-norm layers, q pre-scaled by
  head_dim^-0.5, additive float32-min masks, final_logits_bias, tied output projection),
* generation: greedy search and beam search with the semantics of transformers v4.33's
  BeamSearchScorer (2*num_beams candidates, eos only from the top num_beams ranks, hypotheses scored
  sum_logprobs / len(hyp)^length_penalty, is_done with early_stopping True/False/"never"),
  bad_words_ids (pad) and forced_eos_token_id at max_length - 1.

Use /usr/bin/python3 (Debian's torch, numpy, sentencepiece).
"""
import json
import math
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

NEG = torch.finfo(torch.float32).min

# ----------------------------------------------------------------------------------------------
# safetensors: the project's shared Python reader/writer (tools/golden/safetensors_io.py)

def write_safetensors(path, tensors, dtypes=None):
    """tensors: dict name -> float32 array; dtypes: dict name -> 'F32'|'F16'|'BF16' (default F32).
    BF16 rounds to nearest even (torch's conversion)."""
    dtypes = dtypes or {}
    out = {}
    for name, arr in tensors.items():
        a = np.ascontiguousarray(arr, dtype=np.float32)
        dt = dtypes.get(name, "F32")
        if dt == "F32":
            out[name] = a
        elif dt == "F16":
            out[name] = a.astype(np.float16)
        elif dt == "BF16":
            out[name] = torch.from_numpy(a).to(torch.bfloat16)
        else:
            raise ValueError(dt)
    safetensors_io.save_file(out, path)


def read_safetensors(path):
    """-> dict name -> float32 array (F16/BF16 widened exactly)."""
    return {k: v.astype(np.float32) for k, v in safetensors_io.load_file(path).items()}


# ----------------------------------------------------------------------------------------------
# tokenizer

class Tokenizer:
    LANG_RE = re.compile(">>.+<<")  # MarianTokenizer's language_code_re (greedy, first line)

    def __init__(self, folder):
        import sentencepiece as spm
        self.src = spm.SentencePieceProcessor(model_file=f"{folder}/source.spm")
        self.tgt = spm.SentencePieceProcessor(model_file=f"{folder}/target.spm")
        with open(f"{folder}/vocab.json", encoding="utf-8") as f:
            self.vocab = json.load(f)
        self.inv = {v: k for k, v in self.vocab.items()}
        self.eos, self.unk, self.pad = self.vocab["</s>"], self.vocab["<unk>"], self.vocab["<pad>"]

    def encode(self, text):
        m = self.LANG_RE.match(text)
        code = [m.group(0)] if m else []
        rest = self.LANG_RE.sub("", text)
        pieces = code + self.src.encode(rest, out_type=str)
        ids = [self.vocab.get(p, self.unk) for p in pieces] + [self.eos]
        return pieces + ["</s>"], ids

    def decode(self, ids):
        special = {"</s>", "<unk>", "<pad>"}
        tokens = [self.inv[i] for i in ids if self.inv[i] not in special]
        # (with skip_special_tokens there are no special tokens left to interleave)
        text = self.tgt.decode_pieces(tokens).replace("\u2581", " ").strip()
        # PreTrainedTokenizerBase.clean_up_tokenization (clean_up_tokenization_spaces defaults to True)
        for a, b in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
            text = text.replace(a, b)
        return text


# ----------------------------------------------------------------------------------------------
# model

def sinusoidal(n_pos, dim):
    half = (dim + 1) // 2
    out = np.zeros((n_pos, dim), dtype=np.float64)
    for i in range(dim // 2 + (dim % 2)):
        freq = 10000.0 ** (2.0 * i / dim)
        ang = np.arange(n_pos, dtype=np.float64) / freq
        out[:, i] = np.sin(ang)
        if half + i < dim:
            out[:, half + i] = np.cos(ang)
    return torch.from_numpy(out.astype(np.float32))


ACTS = {"swish": torch.nn.functional.silu, "silu": torch.nn.functional.silu,
        "gelu": torch.nn.functional.gelu, "relu": torch.relu}


class Marian:
    def __init__(self, config, weights, dtype=torch.float32):
        """config: dict from config.json; weights: dict name -> np.float32 array (as stored).
        dtype=torch.float64 computes with the same (float32-valued) weights in double precision:
        goldens made that way are the exact answer the float32 engine is compared with."""
        self.cfg = config
        W = {k: torch.from_numpy(np.array(v, dtype=np.float32)).to(dtype) for k, v in weights.items()}
        self.W = W
        D = config["d_model"]
        self.D = D
        self.scale = math.sqrt(D) if config.get("scale_embedding", False) else 1.0
        if "model.shared.weight" in W:
            shared = W["model.shared.weight"]
            self.enc_emb = W.get("model.encoder.embed_tokens.weight", shared)
            self.dec_emb = W.get("model.decoder.embed_tokens.weight", shared)
            self.lm_head = W.get("lm_head.weight", shared)
        else:
            self.enc_emb = W["model.encoder.embed_tokens.weight"]
            self.dec_emb = W["model.decoder.embed_tokens.weight"]
            self.lm_head = W.get("lm_head.weight", self.dec_emb)
        V = self.lm_head.shape[0]
        self.bias = W["final_logits_bias"].reshape(-1) if "final_logits_bias" in W else torch.zeros(V, dtype=dtype)
        self.pos = sinusoidal(config["max_position_embeddings"], D).to(dtype)
        self.act = ACTS[config["activation_function"]]
        # Head ablation as transformers' (cross_attn_)layer_head_mask: {("encoder"|"decoder"|"cross", layer):
        # tensor [H] of 0/1}; the post-softmax probabilities are multiplied by it (and returned so).
        self.head_mask = {}

    def _ln(self, x, p):
        return torch.nn.functional.layer_norm(x, (self.D,), self.W[p + ".weight"], self.W[p + ".bias"], 1e-5)

    def _lin(self, x, p):
        return x @ self.W[p + ".weight"].T + self.W[p + ".bias"]

    def _attn(self, x, kv, p, heads, mask, hmask=None):
        """x [n, D], kv [m, D], mask additive [n, m] or None, hmask [H] or None -> (out [n, D], probs [H, n, m])."""
        hd = self.D // heads
        q = self._lin(x, p + ".q_proj") * hd ** -0.5
        k = self._lin(kv, p + ".k_proj")
        v = self._lin(kv, p + ".v_proj")
        n, m = q.shape[0], k.shape[0]
        q = q.view(n, heads, hd).transpose(0, 1)
        k = k.view(m, heads, hd).transpose(0, 1)
        v = v.view(m, heads, hd).transpose(0, 1)
        s = q @ k.transpose(1, 2)
        if mask is not None:
            s = s + mask
        probs = torch.softmax(s, dim=-1)
        if hmask is not None:
            probs = probs * hmask.to(probs.dtype).view(heads, 1, 1)
        o = (probs @ v).transpose(0, 1).reshape(n, self.D)
        return self._lin(o, p + ".out_proj"), probs

    def _ffn(self, x, p):
        return self._lin(self.act(self._lin(x, p + ".fc1")), p + ".fc2")

    def encode(self, ids):
        ids = torch.tensor(ids)
        x = self.enc_emb[ids] * self.scale + self.pos[: len(ids)]
        attns = []
        for i in range(self.cfg["encoder_layers"]):
            p = f"model.encoder.layers.{i}"
            a, pr = self._attn(x, x, p + ".self_attn", self.cfg["encoder_attention_heads"], None,
                               self.head_mask.get(("encoder", i)))
            x = self._ln(x + a, p + ".self_attn_layer_norm")
            x = self._ln(x + self._ffn(x, p), p + ".final_layer_norm")
            attns.append(pr)
        return x, torch.stack(attns)  # [S, D], [L, H, S, S]

    def decode(self, enc, dec_ids):
        """Teacher-forced pass: dec_ids (starting with the start token) -> logits [T, V],
        self [L, H, T, T], cross [L, H, T, S]."""
        T = len(dec_ids)
        ids = torch.tensor(dec_ids)
        x = self.dec_emb[ids] * self.scale + self.pos[:T]
        causal = torch.triu(torch.full((T, T), NEG, dtype=x.dtype), diagonal=1)
        selfs, crosses = [], []
        H = self.cfg["decoder_attention_heads"]
        for i in range(self.cfg["decoder_layers"]):
            p = f"model.decoder.layers.{i}"
            a, ps = self._attn(x, x, p + ".self_attn", H, causal, self.head_mask.get(("decoder", i)))
            x = self._ln(x + a, p + ".self_attn_layer_norm")
            a, pc = self._attn(x, enc, p + ".encoder_attn", H, None, self.head_mask.get(("cross", i)))
            x = self._ln(x + a, p + ".encoder_attn_layer_norm")
            x = self._ln(x + self._ffn(x, p), p + ".final_layer_norm")
            selfs.append(ps)
            crosses.append(pc)
        logits = x @ self.lm_head.T + self.bias
        return logits, torch.stack(selfs), torch.stack(crosses)

    # -- generation ------------------------------------------------------------------------
    def _process(self, scores, cur_len, gen):
        """Logits processors on [.., V] scores: bad_words_ids (single tokens) then forced EOS."""
        scores = scores.clone()
        for bad in gen["bad_words_ids"]:
            if len(bad) == 1:
                scores[..., bad[0]] = -math.inf
        feos = gen.get("forced_eos_token_id")
        if feos is not None and cur_len == gen["max_length"] - 1:
            scores[..., :] = -math.inf
            scores[..., feos] = 0.0
        return scores

    def greedy(self, src_ids, gen):
        enc, _ = self.encode(src_ids)
        seq = [gen["decoder_start_token_id"]]
        while len(seq) < gen["max_length"]:
            logits, _, _ = self.decode(enc, seq)
            s = self._process(logits[-1], len(seq), gen)
            tok = int(torch.argmax(s))
            seq.append(tok)
            if tok == gen["eos_token_id"]:
                break
        return seq[1:]

    def beam(self, src_ids, gen):
        nb, lp, es = gen["num_beams"], gen["length_penalty"], gen["early_stopping"]
        eos, max_length = gen["eos_token_id"], gen["max_length"]
        enc, _ = self.encode(src_ids)
        beams = [[gen["decoder_start_token_id"]] for _ in range(nb)]
        beam_scores = torch.tensor([0.0] + [-1e9] * (nb - 1), dtype=self.pos.dtype)
        hyps = []  # (score, seq)
        worst = 1e9
        done = False

        def add(seq, sum_lp):
            nonlocal worst
            score = sum_lp / (len(seq) ** lp)
            if len(hyps) < nb or score > worst:
                hyps.append((score, list(seq)))
                if len(hyps) > nb:
                    order = sorted([(s, i) for i, (s, _) in enumerate(hyps)])
                    del hyps[order[0][1]]
                    worst = order[1][0]
                else:
                    worst = min(score, worst)

        def is_done(best_sum, cur_len):
            if len(hyps) < nb:
                return False
            if es is True:
                return True
            if es is False:
                return worst >= best_sum / cur_len ** lp
            denom = max_length if lp > 0 else cur_len  # "never"
            return worst >= best_sum / denom ** lp

        while True:
            cur_len = len(beams[0])
            rows = []
            for b in beams:
                logits, _, _ = self.decode(enc, b)
                rows.append(logits[-1])
            raw = torch.stack(rows)  # [nb, V]
            # MarianMTModel.adjust_logits_during_generation (beam search only): pad -> -inf before
            # the log-softmax.
            raw[:, self.cfg.get("pad_token_id", 58100)] = -math.inf
            logp = torch.log_softmax(raw, dim=-1)
            logp = self._process(logp, cur_len, gen)
            scores = (logp + beam_scores[:, None]).reshape(-1)
            V = logp.shape[-1]
            top_s, top_i = torch.topk(scores, 2 * nb, largest=True, sorted=True)
            nxt_beams, nxt_scores = [], []
            for rank, (s, idx) in enumerate(zip(top_s.tolist(), top_i.tolist())):
                src_beam, tok = idx // V, idx % V
                if tok == eos:
                    if rank >= nb:
                        continue
                    add(beams[src_beam], s)
                else:
                    nxt_beams.append(beams[src_beam] + [tok])
                    nxt_scores.append(s)
                if len(nxt_beams) == nb:
                    break
            # transformers 4.29-4.35: cur_len = input_ids.shape[-1] + 1 (the length next_scores
            # were computed on).
            done = done or is_done(float(top_s.max()), cur_len + 1)
            beams = nxt_beams
            beam_scores = torch.tensor(nxt_scores, dtype=self.pos.dtype)
            if done or len(beams[0]) >= max_length:
                break
        if not done:
            for b, s in zip(beams, beam_scores.tolist()):
                add(b, s)
        best_score, best = sorted(hyps, key=lambda h: h[0])[-1]
        out = best[1:]
        if len(best) < max_length:
            out = out + [eos]
        return out, best_score
