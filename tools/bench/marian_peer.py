#!/usr/bin/python3
"""The PyTorch side of the translation speed comparison: greedy or beam decoding of one sentence with a
key/value cache and every head's attention kept, as transformers' MarianMTModel.generate(...,
output_attentions=True, return_dict_in_generate=True) runs it, timed as `attnlens-cli bench --src` times
its own (tokenize + encode, then every decoder step; per_token_ms = (total - encode) / new tokens).

Written here to transformers' semantics (v4.33; transformers itself is not installed): the encoder once;
per step one decoder pass over the last token only, self-attention keys/values appended to the cache with
torch.cat, cross-attention keys/values computed at the first step from the encoder output expanded to one
row per beam, logits for the whole vocabulary plus final_logits_bias; greedy takes the argmax of the
processed logits; beam search keeps num_beams rows, log-softmax, 2*num_beams candidates, and reorders the
self-attention cache with index_select (MarianMTModel._reorder_cache). Logits processors: bad_words_ids
(pad) and forced_eos_token_id at max_length - 1, with max_length = 1 + new tokens.
Weights and the tokenizer come from tools/golden/marian_reference.py (our independent reference).

  /usr/bin/python3 tools/bench/marian_peer.py MODEL_DIR "SENTENCE" [--new-tokens 32] [--beam 1] [--repeat 5]

stdout: one JSON object {"peer", "threads", "repeat", "median_ms", "min_ms", "max_ms", "encode_ms",
"per_token_ms", "source_tokens", "new_tokens", "beams"} (medians over the repeats).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

# One thread on both sides: OpenBLAS (pthreads build) has its own pool that torch.set_num_threads does
# not reach.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ATTNLENS_THREADS", "1")  # our side: one thread too (`attnlens-cli --threads`)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before torch loads OpenBLAS)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import marian_reference as ref  # noqa: E402


class CachedMarian:
    """MarianMTModel's inference path with past_key_values, on marian_reference's weights."""

    def __init__(self, folder):
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
            self.cfg = json.load(f)
        weights = ref.read_safetensors(os.path.join(folder, "model.safetensors"))
        self.m = ref.Marian(self.cfg, weights)
        self.W = self.m.W
        self.D = self.m.D
        self.heads_enc = self.cfg["encoder_attention_heads"]
        self.heads_dec = self.cfg["decoder_attention_heads"]

    def _lin(self, x, p):
        return F.linear(x, self.W[p + ".weight"], self.W[p + ".bias"])

    def _split(self, x, heads):  # [b, n, D] -> [b, H, n, hd]
        b, n, _ = x.shape
        return x.view(b, n, heads, self.D // heads).transpose(1, 2)

    def _attend(self, q, k, v, p, mask=None):
        """q [b, H, n, hd] (pre-scaled), k/v [b, H, m, hd] -> (out [b, n, D] projected, probs [b, H, n, m])."""
        s = torch.matmul(q, k.transpose(-1, -2))
        if mask is not None:
            s = s + mask
        probs = torch.softmax(s, dim=-1)
        o = torch.matmul(probs, v).transpose(1, 2).reshape(q.shape[0], q.shape[2], self.D)
        return self._lin(o, p + ".out_proj"), probs

    def _ln(self, x, p):
        return F.layer_norm(x, (self.D,), self.W[p + ".weight"], self.W[p + ".bias"], 1e-5)

    def encode(self, ids):
        ids = torch.tensor([ids])
        x = self.m.enc_emb[ids] * self.m.scale + self.m.pos[: ids.shape[1]]
        attns = []
        H, hd = self.heads_enc, self.D // self.heads_enc
        for i in range(self.cfg["encoder_layers"]):
            p = f"model.encoder.layers.{i}"
            q = self._split(self._lin(x, p + ".self_attn.q_proj") * hd ** -0.5, H)
            k = self._split(self._lin(x, p + ".self_attn.k_proj"), H)
            v = self._split(self._lin(x, p + ".self_attn.v_proj"), H)
            a, probs = self._attend(q, k, v, p + ".self_attn")
            x = self._ln(x + a, p + ".self_attn_layer_norm")
            x = self._ln(x + self._lin(self.m.act(self._lin(x, p + ".fc1")), p + ".fc2"), p + ".final_layer_norm")
            attns.append(probs)
        return x, attns

    def step(self, tokens, pos, enc, past):
        """One decoder pass over the last token of each row: tokens [b], enc [b, S, D]; past: per layer
        [self_k, self_v, cross_k, cross_v] (None at the first step) -> logits [b, V], self and cross probs."""
        x = (self.m.dec_emb[tokens] * self.m.scale + self.m.pos[pos])[:, None, :]
        H, hd = self.heads_dec, self.D // self.heads_dec
        selfs, crosses = [], []
        for i in range(self.cfg["decoder_layers"]):
            p = f"model.decoder.layers.{i}"
            q = self._split(self._lin(x, p + ".self_attn.q_proj") * hd ** -0.5, H)
            k = self._split(self._lin(x, p + ".self_attn.k_proj"), H)
            v = self._split(self._lin(x, p + ".self_attn.v_proj"), H)
            if past[i] is not None:
                k = torch.cat([past[i][0], k], dim=2)
                v = torch.cat([past[i][1], v], dim=2)
                ck, cv = past[i][2], past[i][3]
            else:
                ck = self._split(self._lin(enc, p + ".encoder_attn.k_proj"), H)
                cv = self._split(self._lin(enc, p + ".encoder_attn.v_proj"), H)
            a, ps = self._attend(q, k, v, p + ".self_attn")
            x = self._ln(x + a, p + ".self_attn_layer_norm")
            cq = self._split(self._lin(x, p + ".encoder_attn.q_proj") * hd ** -0.5, H)
            a, pc = self._attend(cq, ck, cv, p + ".encoder_attn")
            x = self._ln(x + a, p + ".encoder_attn_layer_norm")
            x = self._ln(x + self._lin(self.m.act(self._lin(x, p + ".fc1")), p + ".fc2"), p + ".final_layer_norm")
            past[i] = [k, v, ck, cv]
            selfs.append(ps)
            crosses.append(pc)
        logits = F.linear(x[:, 0, :], self.m.lm_head, self.m.bias)
        return logits, selfs, crosses


def process(scores, cur_len, gen):
    """bad_words_ids (single tokens), then forced EOS at max_length - 1, on [b, V] scores in place."""
    for bad in gen["bad_words_ids"]:
        if len(bad) == 1:
            scores[:, bad[0]] = -math.inf
    if gen.get("forced_eos_token_id") is not None and cur_len == gen["max_length"] - 1:
        scores[:, :] = -math.inf
        scores[:, gen["forced_eos_token_id"]] = 0.0
    return scores


def greedy(model, enc, gen, kept):
    seq = [gen["decoder_start_token_id"]]
    past = [None] * model.cfg["decoder_layers"]
    while len(seq) < gen["max_length"]:
        logits, selfs, crosses = model.step(torch.tensor([seq[-1]]), len(seq) - 1, enc, past)
        kept.append((selfs, crosses))
        tok = int(torch.argmax(process(logits, len(seq), gen)[0]))
        seq.append(tok)
        if tok == gen["eos_token_id"]:
            break
    return len(seq) - 1


class Hypotheses:
    """transformers' BeamHypotheses (early_stopping False, the Marian default)."""

    def __init__(self, nb, lp):
        self.nb, self.lp, self.items, self.worst = nb, lp, [], 1e9

    def add(self, length, sum_lp):
        score = sum_lp / (length ** self.lp)
        if len(self.items) < self.nb or score > self.worst:
            self.items.append(score)
            if len(self.items) > self.nb:
                self.items.sort()
                self.items.pop(0)
                self.worst = self.items[0]
            else:
                self.worst = min(score, self.worst)

    def is_done(self, best_sum, cur_len):
        return len(self.items) >= self.nb and self.worst >= best_sum / cur_len ** self.lp


def beam(model, enc, gen, nb, kept):
    eos, pad = gen["eos_token_id"], model.cfg.get("pad_token_id")
    enc = enc.expand(nb, -1, -1)
    tokens = torch.full((nb,), gen["decoder_start_token_id"], dtype=torch.long)
    beam_scores = torch.tensor([0.0] + [-1e9] * (nb - 1))
    hyps = Hypotheses(nb, gen.get("length_penalty", 1.0))
    past = [None] * model.cfg["decoder_layers"]
    cur_len, new_tokens = 1, 0
    while True:
        logits, selfs, crosses = model.step(tokens, cur_len - 1, enc, past)
        kept.append((selfs, crosses))
        new_tokens += 1
        if pad is not None:
            logits[:, pad] = -math.inf  # MarianMTModel.adjust_logits_during_generation
        logp = process(torch.log_softmax(logits, dim=-1), cur_len, gen)
        V = logp.shape[-1]
        scores = (logp + beam_scores[:, None]).view(-1)
        top_s, top_i = torch.topk(scores, 2 * nb, largest=True, sorted=True)
        nxt_tok, nxt_beam, nxt_score = [], [], []
        for rank, (s, idx) in enumerate(zip(top_s.tolist(), top_i.tolist())):
            src, tok = idx // V, idx % V
            if tok == eos:
                if rank < nb:
                    hyps.add(cur_len, s)
            else:
                nxt_tok.append(tok)
                nxt_beam.append(src)
                nxt_score.append(s)
            if len(nxt_tok) == nb:
                break
        done = hyps.is_done(float(top_s.max()), cur_len + 1)
        beam_idx = torch.tensor(nxt_beam)
        for layer in past:  # _reorder_cache: the self-attention states of every layer
            layer[0] = layer[0].index_select(0, beam_idx)
            layer[1] = layer[1].index_select(0, beam_idx)
        tokens = torch.tensor(nxt_tok)
        beam_scores = torch.tensor(nxt_score)
        cur_len += 1
        if done or cur_len >= gen["max_length"]:
            return new_tokens


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("sentence")
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))  # 1 unless compare.py --threads
    model = CachedMarian(args.model)
    tok = ref.Tokenizer(args.model)
    cfg = model.cfg
    gen = {"decoder_start_token_id": cfg.get("decoder_start_token_id", cfg["pad_token_id"]),
           "eos_token_id": cfg["eos_token_id"], "bad_words_ids": cfg.get("bad_words_ids", []),
           "forced_eos_token_id": cfg.get("forced_eos_token_id"), "max_length": 1 + args.new_tokens,
           "length_penalty": cfg.get("length_penalty", 1.0)}
    totals, encodes, per_token = [], [], []
    n_src = new = 0
    with torch.no_grad():
        for i in range(args.warmup + args.repeat):
            kept = []
            start = time.perf_counter()
            _, ids = tok.encode(args.sentence)
            enc, enc_attns = model.encode(ids)
            enc_ms = (time.perf_counter() - start) * 1000.0
            new = greedy(model, enc, gen, kept) if args.beam == 1 else beam(model, enc, gen, args.beam, kept)
            total = (time.perf_counter() - start) * 1000.0
            if i < args.warmup:
                continue
            n_src = len(ids)
            totals.append(total)
            encodes.append(enc_ms)
            per_token.append((total - enc_ms) / max(new, 1))
    print(json.dumps({"peer": "torch " + torch.__version__, "threads": torch.get_num_threads(),
                      "repeat": args.repeat, "median_ms": statistics.median(totals), "min_ms": min(totals),
                      "max_ms": max(totals), "encode_ms": statistics.median(encodes),
                      "per_token_ms": statistics.median(per_token), "min_per_token_ms": min(per_token),
                      "source_tokens": n_src, "new_tokens": new, "beams": args.beam}))


if __name__ == "__main__":
    main()
