"""Independent reference of the text models the C++ engine loads (issue 24): transformers v4.33's slow BertTokenizer
(basic tokenization + WordPiece) and GPT2Tokenizer (byte-level BPE), and the BERT (post-LN encoder, masked-LM head)
and GPT-2 (pre-LN causal decoder, tied LM head) forward passes in plain PyTorch, written from the papers and
transformers' documented semantics — not a copy of its code.

Used by make_text_fixtures.py (goldens for tests/data/text) and the text benchmark.
"""
import collections
import heapq
import json
import math
import os
import unicodedata

import regex
import torch

# --- WordPiece (BertTokenizer) -------------------------------------------------------------------------------


def _is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def _is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


class WordPiece:
    """BertTokenizer: [CLS] + pieces + [SEP]; special tokens in the text are kept whole."""

    SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

    def __init__(self, vocab_path, do_lower_case=True, strip_accents=None, tokenize_chinese_chars=True):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
        self.inv = {i: t for t, i in self.vocab.items()}
        self.lower = do_lower_case
        self.strip_accents = strip_accents
        self.chinese = tokenize_chinese_chars

    def _basic(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            out.append(" " if _is_whitespace(ch) else ch)
        text = "".join(out)
        if self.chinese:
            text = "".join(f" {ch} " if _is_cjk(ord(ch)) else ch for ch in text)
        text = unicodedata.normalize("NFC", text)
        tokens = []
        for token in text.strip().split():
            if self.lower:
                token = token.lower()
                if self.strip_accents is not False:
                    token = self._strip(token)
            elif self.strip_accents:
                token = self._strip(token)
            tokens.extend(self._split_punct(token))
        return " ".join(tokens).strip().split()

    @staticmethod
    def _strip(token):
        return "".join(c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn")

    @staticmethod
    def _split_punct(token):
        pieces, current = [], []
        for ch in token:
            if _is_punctuation(ch):
                if current:
                    pieces.append("".join(current))
                    current = []
                pieces.append(ch)
            else:
                current.append(ch)
        if current:
            pieces.append("".join(current))
        return pieces

    def _wordpiece(self, word):
        if len(word) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = piece
                    break
                end -= 1
            if found is None:
                return ["[UNK]"]
            pieces.append(found)
            start = end
        return pieces

    def tokenize(self, text):
        if self.lower:  # lower everything but the special tokens (as PreTrainedTokenizer.tokenize does)
            pattern = "(" + "|".join(map(regex.escape, self.SPECIALS)) + ")|(.+?)"
            text = regex.sub(pattern, lambda m: m.group(1) or m.group(2).lower(), text, flags=regex.DOTALL)
        chunks = regex.split("(" + "|".join(map(regex.escape, self.SPECIALS)) + ")", text)
        tokens = []
        for i, chunk in enumerate(chunks):
            if chunk in self.SPECIALS:
                tokens.append(chunk)
                continue
            if i > 0 and chunks[i - 1] in self.SPECIALS:
                chunk = chunk.lstrip()
            if i + 1 < len(chunks) and chunks[i + 1] in self.SPECIALS:
                chunk = chunk.rstrip()
            for word in self._basic(chunk):
                tokens.extend(self._wordpiece(word))
        return tokens

    def encode(self, text):
        tokens = ["[CLS]"] + self.tokenize(text) + ["[SEP]"]
        return tokens, [self.vocab.get(t, self.vocab["[UNK]"]) for t in tokens]


# --- byte-level BPE (GPT2Tokenizer) --------------------------------------------------------------------------

GPT2_PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    """The printable stand-in for each byte (GPT-2's table): printable Latin-1 bytes map to themselves, the rest
    to code points from 256 upwards in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def learn_bpe(texts, vocab_size):
    """Byte-level BPE learned on `texts` until the vocabulary (256 byte tokens, the merges, <|endoftext|>) has
    `vocab_size` tokens: the most frequent pair first, ties to the smaller pair. -> (vocab dict, merges list)."""
    table = bytes_to_unicode()
    counts = collections.Counter()
    for text in texts:
        for piece in GPT2_PATTERN.findall(text):
            counts["".join(table[b] for b in piece.encode("utf-8"))] += 1
    words = [list(w) for w in counts]
    freq = list(counts.values())
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pairs[(a, b)] += freq[i]
            where[(a, b)].add(i)
    heap = [(-c, p) for p, c in pairs.items()]
    heapq.heapify(heap)
    merges = []
    while heap and 257 + len(merges) < vocab_size:
        c, best = heapq.heappop(heap)
        if pairs.get(best, 0) != -c or c == 0:
            continue  # stale
        merges.append(best)
        a, b = best
        touched = collections.Counter()
        for i in list(where.pop(best, ())):
            w = words[i]
            for x, y in zip(w, w[1:]):
                pairs[(x, y)] -= freq[i]
                touched[(x, y)] += 0
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    out.append(a + b)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for x, y in zip(out, out[1:]):
                pairs[(x, y)] += freq[i]
                where[(x, y)].add(i)
                touched[(x, y)] += 0
        pairs.pop(best, None)
        for p in touched:
            if pairs.get(p, 0) > 0:
                heapq.heappush(heap, (-pairs[p], p))
    vocab = {table[b]: i for i, b in enumerate(sorted(table))}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges


class ByteBpe:
    SPECIAL = "<|endoftext|>"

    def __init__(self, vocab_path, merges_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = json.load(f)
        with open(merges_path, encoding="utf-8") as f:
            lines = f.read().split("\n")[1:-1]  # the version line and the empty last one, as GPT2Tokenizer drops them
        merges = [tuple(line.split()) for line in lines]
        self.ranks = {pair: i for i, pair in enumerate(merges)}
        self.byte_map = bytes_to_unicode()
        self.inv = {i: t for t, i in self.vocab.items()}

    def _bpe(self, word):
        parts = list(word)
        while len(parts) > 1:
            best = min(((self.ranks.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))))
            if best[0] == math.inf:
                break
            a, b = parts[best[1]], parts[best[1] + 1]
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        return parts

    def tokenize(self, text):
        tokens = []
        for i, chunk in enumerate(text.split(self.SPECIAL)):
            if i > 0:
                tokens.append(self.SPECIAL)
            for piece in GPT2_PATTERN.findall(chunk):
                mapped = "".join(self.byte_map[b] for b in piece.encode("utf-8"))
                tokens.extend(self._bpe(mapped))
        return tokens

    def encode(self, text):
        tokens = self.tokenize(text)
        return tokens, [self.vocab[t] for t in tokens]


# --- models --------------------------------------------------------------------------------------------------


def _act(name, x):
    if name == "gelu":
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))
    if name == "relu":
        return torch.relu(x)
    raise ValueError(name)


def _ln(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def _heads(x, heads):
    t, d = x.shape
    return x.reshape(t, heads, d // heads).transpose(0, 1)  # [H, T, hd]


def bert_forward(w, config, ids, prefix, head_mask=None):
    """-> (attentions [L, H, T, T], hidden [T, D], logits [T, V] or None, pooled [D] or None).
    head_mask [L, H] (transformers' semantics): the probabilities are multiplied by it after the softmax, so
    a head at 0 contributes nothing and its returned attention is all zeros."""
    p = prefix
    eps = config["layer_norm_eps"]
    heads = config["num_attention_heads"]
    t = len(ids)
    ids_t = torch.tensor(ids)
    x = w[p + "embeddings.word_embeddings.weight"][ids_t] + w[p + "embeddings.position_embeddings.weight"][:t] + \
        w[p + "embeddings.token_type_embeddings.weight"][0]
    x = _ln(x, w[p + "embeddings.LayerNorm.weight"], w[p + "embeddings.LayerNorm.bias"], eps)
    attentions = []
    for layer in range(config["num_hidden_layers"]):
        q = f"{p}encoder.layer.{layer}."
        lin = lambda name, v: v @ w[q + name + ".weight"].T + w[q + name + ".bias"]  # noqa: E731
        qh = _heads(lin("attention.self.query", x), heads)
        kh = _heads(lin("attention.self.key", x), heads)
        vh = _heads(lin("attention.self.value", x), heads)
        scores = qh @ kh.transpose(1, 2) / math.sqrt(qh.shape[-1])
        probs = torch.softmax(scores, dim=-1)
        if head_mask is not None:
            probs = probs * head_mask[layer].reshape(-1, 1, 1)
        attentions.append(probs)
        context = (probs @ vh).transpose(0, 1).reshape(t, -1)
        x = _ln(lin("attention.output.dense", context) + x, w[q + "attention.output.LayerNorm.weight"],
                w[q + "attention.output.LayerNorm.bias"], eps)
        h = _act(config["hidden_act"], lin("intermediate.dense", x))
        x = _ln(lin("output.dense", h) + x, w[q + "output.LayerNorm.weight"], w[q + "output.LayerNorm.bias"], eps)
    logits = pooled = None
    if "cls.predictions.transform.dense.weight" in w:
        h = x @ w["cls.predictions.transform.dense.weight"].T + w["cls.predictions.transform.dense.bias"]
        h = _ln(_act(config["hidden_act"], h), w["cls.predictions.transform.LayerNorm.weight"],
                w["cls.predictions.transform.LayerNorm.bias"], eps)
        logits = h @ w[p + "embeddings.word_embeddings.weight"].T + w["cls.predictions.bias"]
    if p + "pooler.dense.weight" in w:
        pooled = torch.tanh(x[0] @ w[p + "pooler.dense.weight"].T + w[p + "pooler.dense.bias"])
    return torch.stack(attentions), x, logits, pooled


def gpt2_forward(w, config, ids, prefix, head_mask=None):
    """-> (attentions [L, H, T, T], logits [T, V]); head_mask as in bert_forward."""
    p = prefix
    eps = config["layer_norm_epsilon"]
    heads = config["n_head"]
    t = len(ids)
    x = w[p + "wte.weight"][torch.tensor(ids)] + w[p + "wpe.weight"][:t]
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
    attentions = []
    for layer in range(config["n_layer"]):
        q = f"{p}h.{layer}."
        a = _ln(x, w[q + "ln_1.weight"], w[q + "ln_1.bias"], eps)
        qkv = a @ w[q + "attn.c_attn.weight"] + w[q + "attn.c_attn.bias"]  # Conv1D: [in, out]
        qh, kh, vh = (_heads(part, heads) for part in qkv.split(qkv.shape[-1] // 3, dim=-1))
        scores = qh @ kh.transpose(1, 2)
        if config.get("scale_attn_weights", True):
            scores = scores / math.sqrt(qh.shape[-1])
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        probs = torch.softmax(scores, dim=-1)
        if head_mask is not None:
            probs = probs * head_mask[layer].reshape(-1, 1, 1)
        attentions.append(probs)
        context = (probs @ vh).transpose(0, 1).reshape(t, -1)
        x = x + context @ w[q + "attn.c_proj.weight"] + w[q + "attn.c_proj.bias"]
        m = _ln(x, w[q + "ln_2.weight"], w[q + "ln_2.bias"], eps)
        m = _act(config.get("activation_function", "gelu_new"), m @ w[q + "mlp.c_fc.weight"] + w[q + "mlp.c_fc.bias"])
        x = x + m @ w[q + "mlp.c_proj.weight"] + w[q + "mlp.c_proj.bias"]
    x = _ln(x, w[p + "ln_f.weight"], w[p + "ln_f.bias"], eps)
    logits = x @ w[p + "wte.weight"].T
    return torch.stack(attentions), logits


def gpt2_greedy(w, config, ids, prefix, steps):
    ids = list(ids)
    out = []
    for _ in range(steps):
        _, logits = gpt2_forward(w, config, ids, prefix)
        nxt = int(torch.argmax(logits[-1]))
        out.append(nxt)
        ids.append(nxt)
    return out


def load_config(folder):
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        return json.load(f)
