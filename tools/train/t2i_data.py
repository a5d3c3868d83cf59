"""Captioned compositions of Fashion-MNIST items, for the built-in text-to-image model (issue 41), and the CLIP
tokenizer files its pipeline folder carries. Data only: numpy, no torch.

A picture is a 64×64 canvas of 2×2 cells of 32×32; one to three cells hold a Fashion-MNIST item (28×28, 2 pixels
in from the cell's edges; train split for training, test split for evaluation), the others are black. Its caption names every item by one word and says where
it is, in one of these forms (chosen at random):
    absolute    "a sneaker in the top left and a bag in the bottom right"
    stacked     "a sneaker above a bag" (same column), optionally "... on the left"
    side by side "a dress left of a coat" (same row), optionally "... at the bottom"
    one side    "a dress on the right" (one item, its row unsaid)
    place first "in the top left a sneaker and in the bottom right a bag", "on the right a dress": the absolute and
                one-side forms half the time with the place before the item — a causal (CLIP) text encoder lets a
                word see only the words before it, so here the item's own token knows where it goes
    mixed       "a sneaker above a bag, a dress on the right" (a stacked pair and a third item by its side)
HELD_OUT: 50 pairs ((class, cell), (class, cell)) never shown together in training: the evaluation prompts
"a A in the CELL_A and a B in the CELL_B" are compositions the model has not seen.

    /usr/bin/python3 tools/train/t2i_data.py --preview /tmp/t2i-preview.png   # 16 samples with their captions
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from fashion_data import load_split  # noqa: E402

# One word per Fashion-MNIST class (T-shirt/top is "tshirt": "top" names a row).
NAMES = ["tshirt", "trousers", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot"]
CELLS = ["top left", "top right", "bottom left", "bottom right"]  # cell index = 2·row + column
CANVAS, CELL, OFFSET, ITEM = 64, 32, 2, 28  # an item sits at OFFSET within its cell
MAX_TOKENS = 77


def held_out_pairs(count=50, seed=20261206):
    """`count` unordered pairs of (class, cell) with different classes and cells, fixed by the seed."""
    rng = np.random.default_rng(seed)
    pairs = set()
    while len(pairs) < count:
        a, b = rng.choice(10, 2, replace=False)
        ca, cb = rng.choice(4, 2, replace=False)
        pairs.add(tuple(sorted([(int(a), int(ca)), (int(b), int(cb))])))
    return sorted(pairs)


HELD_OUT = held_out_pairs()


def eval_prompt(pair, place_first=False):
    (a, ca), (b, cb) = pair
    if place_first:
        return f"in the {CELLS[ca]} a {NAMES[a]} and in the {CELLS[cb]} a {NAMES[b]}"
    return f"a {NAMES[a]} in the {CELLS[ca]} and a {NAMES[b]} in the {CELLS[cb]}"


def _shows_held_out(layout):
    items = sorted(layout)
    return any(tuple(sorted([p, q])) in HELD_OUT_SET for i, p in enumerate(items) for q in items[i + 1:])


HELD_OUT_SET = set(HELD_OUT)


def caption(layout, rng):
    """layout: [(class, cell)] in distinct cells → a caption that places every item."""
    n = len(layout)
    by_cell = {cell: cls for cls, cell in layout}
    stacked = [(c, c + 2) for c in (0, 1) if c in by_cell and c + 2 in by_cell]
    side = [(r, r + 1) for r in (0, 2) if r in by_cell and r + 1 in by_cell]
    form = rng.integers(0, 4)
    place_first = bool(rng.integers(0, 2))
    if n == 1 and form < 2:
        cls, cell = layout[0]
        word = ["left", "right"][cell % 2] if rng.integers(0, 2) else ["top", "bottom"][cell // 2]
        where = f"on the {word}" if word in ("left", "right") else f"at the {word}"
        return f"{where} a {NAMES[cls]}" if place_first else f"a {NAMES[cls]} {where}"
    if n == 2 and form == 1 and stacked:
        top, bottom = stacked[0]
        tail = f" on the {['left', 'right'][top % 2]}" if rng.integers(0, 2) else ""
        return f"a {NAMES[by_cell[top]]} above a {NAMES[by_cell[bottom]]}{tail}"
    if n == 2 and form == 2 and side:
        left, right = side[0]
        tail = f" at the {['top', 'bottom'][left // 2]}" if rng.integers(0, 2) else ""
        return f"a {NAMES[by_cell[left]]} left of a {NAMES[by_cell[right]]}{tail}"
    if n == 3 and form == 3 and stacked:
        top, bottom = stacked[0]
        (third,) = [cell for cls, cell in layout if cell not in (top, bottom)]
        return (f"a {NAMES[by_cell[top]]} above a {NAMES[by_cell[bottom]]}, "
                f"a {NAMES[by_cell[third]]} on the {['left', 'right'][third % 2]}")
    order = rng.permutation(n)
    parts = [f"in the {CELLS[layout[i][1]]} a {NAMES[layout[i][0]]}" if place_first else
             f"a {NAMES[layout[i][0]]} in the {CELLS[layout[i][1]]}" for i in order]
    return ", ".join(parts[:-1]) + (" and " if n > 1 else "") + parts[-1]


def layout_target(text, layout):
    """Per cell the class of its item, or len(NAMES) for an empty cell, when `text` names every item's cell
    ("... in the top left ..."); None otherwise (the relational and one-side forms leave cells open)."""
    if not all(f"in the {CELLS[cell]}" in text for _, cell in layout):
        return None
    cells = [len(NAMES)] * 4
    for cls, cell in layout:
        cells[cell] = cls
    return cells


class Compositions:
    """Draws (canvas uint8 [64, 64], caption, layout) from one split of Fashion-MNIST."""

    def __init__(self, split="train", seed=0):
        self.x, self.y = load_split(split)
        self.by_class = [np.flatnonzero(self.y == c) for c in range(10)]
        self.rng = np.random.default_rng(seed)
        self.training = split == "train"

    def layout(self):
        while True:
            n = int(self.rng.choice([1, 2, 2, 3]))
            cells = self.rng.choice(4, n, replace=False)
            classes = self.rng.choice(10, n, replace=n > 10)
            layout = [(int(c), int(cell)) for c, cell in zip(classes, cells)]
            if not (self.training and _shows_held_out(layout)):
                return layout

    def draw(self, layout):
        canvas = np.zeros((CANVAS, CANVAS), dtype=np.uint8)
        for cls, cell in layout:
            item = self.x[self.rng.choice(self.by_class[cls])]
            r, c = divmod(cell, 2)
            y, x = r * CELL + OFFSET, c * CELL + OFFSET
            canvas[y:y + ITEM, x:x + ITEM] = item
        return canvas

    def sample(self):
        layout = self.layout()
        return self.draw(layout), caption(layout, self.rng), layout

    def batch(self, n):
        images, captions, layouts = zip(*(self.sample() for _ in range(n)))
        return np.stack(images), list(captions), list(layouts)


# ------------------------------------------------------------------------------------------------ tokenizer
def bytes_to_unicode():
    """GPT-2 / CLIP's reversible byte → printable character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def caption_words():
    """Every word a caption can hold, as CLIP's pattern splits it (letters, "," apart)."""
    words = set(NAMES) | {"a", "in", "the", "and", "above", "left", "right", "of", "on", "at", "top", "bottom", ","}
    return sorted(words)


def learn_merges(words):
    """Plain BPE over `words` ("</w>" on each word's last symbol) until every word is one symbol: applying the
    merges by rank, as CLIP's tokenizer does, then rebuilds each word whole."""
    import collections
    enc = bytes_to_unicode()
    corpus = []
    for w in words:
        symbols = [enc[b] for b in w.encode("utf-8")]
        symbols[-1] += "</w>"
        corpus.append(tuple(symbols))
    merges = []
    while True:
        pairs = collections.Counter(p for w in corpus for p in zip(w, w[1:]))
        if not pairs:
            return merges
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        merged = []
        for w in corpus:
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged.append(tuple(out))
        corpus = merged


def clip_vocabulary():
    """CLIP's vocabulary layout for the caption words: the 256 byte characters, the same with "</w>", the merges
    that build each caption word whole, then <|startoftext|> and <|endoftext|> (the highest ids, as in CLIP).
    → (vocab dict, merges list)"""
    enc = bytes_to_unicode()
    base = list(enc.values())
    vocab = base + [b + "</w>" for b in base]
    merges = learn_merges(caption_words())
    vocab += ["".join(m) for m in merges]
    vocab = list(dict.fromkeys(vocab)) + ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(vocab)}, merges


def write_tokenizer(folder):
    """vocab.json, merges.txt, tokenizer_config.json and special_tokens_map.json as CLIPTokenizer saves them."""
    vocab, merges = clip_vocabulary()
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    special = {"bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
               "unk_token": "<|endoftext|>"}
    with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
        json.dump(special, f, indent=2)
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(dict(special, tokenizer_class="CLIPTokenizer", model_max_length=MAX_TOKENS, errors="replace",
                       do_lower_case=True, clean_up_tokenization_spaces=True), f, indent=2)
    return vocab


def encode(captions, vocab):
    """The pipeline's ids for captions made here: BOS, one token per word, EOS, padded with EOS to 77."""
    bos, eos = vocab["<|startoftext|>"], vocab["<|endoftext|>"]
    out = np.full((len(captions), MAX_TOKENS), eos, dtype=np.int64)
    for i, c in enumerate(captions):
        words = c.replace(",", " , ").split()
        ids = [bos] + [vocab[w + "</w>"] for w in words] + [eos]
        out[i, :len(ids)] = ids[:MAX_TOKENS]
    return out


def main(argv):
    if "--preview" in argv:
        from PIL import Image, ImageDraw
        data = Compositions("train", seed=1)
        images, captions, _ = data.batch(16)
        sheet = Image.new("L", (4 * 200, 4 * 90), 0)
        draw = ImageDraw.Draw(sheet)
        for i, (img, cap) in enumerate(zip(images, captions)):
            x, y = (i % 4) * 200, (i // 4) * 90
            sheet.paste(Image.fromarray(img), (x + 72, y))
            draw.text((x + 2, y + 60), cap[:34], fill=255)
            draw.text((x + 2, y + 72), cap[34:68], fill=255)
        sheet.save(argv[argv.index("--preview") + 1])
        print("\n".join(captions))


if __name__ == "__main__":
    main(sys.argv[1:])
