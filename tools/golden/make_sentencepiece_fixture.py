"""A Llama-family `tokenizer.model` (SentencePiece) for the folders that bring no tokenizer.json: rebuilt from
Mistral-7B's real tokenizer.json (tests/data/tokenizers/mistral, the file converted from Mistral's own
tokenizer.model by transformers' LlamaConverter), so that core/text/sentencepiece_tokenizer can be held to the
ids Hugging Face's Rust `tokenizers` gives on the original file (tests/data/tokenizers/mistral/golden.json).

The conversion inverts LlamaConverter: pieces in id order; <unk> UNKNOWN, <s> and </s> CONTROL, <0xXX> BYTE;
every other piece NORMAL with score -(id - 259) (the converter orders the merges by score, and the vocabulary
follows it), whitespace-only pieces ("▁▁", …) -1e9 as in Meta's and Mistral's files (their merges come last);
Llama 2's trainer and normalizer settings (BPE, byte_fallback, split_digits, identity normalization,
add_dummy_prefix, no removal of extra whitespace). Mistral's tokenizer_config.json is kept as it is.

    /usr/bin/python3 tools/golden/make_sentencepiece_fixture.py BUILD_TOKENIZERS_DIR
    # BUILD_TOKENIZERS_DIR: build/release/tokenizers (the unpacked tokenizer.tar.xz files)
    # writes tests/data/tokenizers/mistral-spm/tokenizer.tar.xz and checks the library's own encoding

Needs apt python3-sentencepiece and python3-protobuf.
"""
import io
import json
import os
import sys
import tarfile

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data", "tokenizers")


def model_from(tokenizer_json):
    vocab = sorted(tokenizer_json["model"]["vocab"].items(), key=lambda kv: kv[1])
    assert [i for _, i in vocab] == list(range(len(vocab)))
    m = pb.ModelProto()
    kinds = pb.ModelProto.SentencePiece
    for piece, i in vocab:
        p = m.pieces.add()
        p.piece = piece
        if piece == "<unk>":
            p.type, p.score = kinds.UNKNOWN, 0
        elif piece in ("<s>", "</s>"):
            p.type, p.score = kinds.CONTROL, 0
        elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            p.type, p.score = kinds.BYTE, 0
        else:
            p.type = kinds.NORMAL
            p.score = -1e9 if set(piece) == {"\u2581"} else -float(i - 259)
    t = m.trainer_spec
    t.model_type, t.vocab_size, t.byte_fallback, t.split_digits = pb.TrainerSpec.BPE, len(vocab), True, True
    t.unk_id, t.bos_id, t.eos_id, t.pad_id, t.allow_whitespace_only_pieces = 0, 1, 2, -1, True
    n = m.normalizer_spec
    n.name, n.add_dummy_prefix, n.remove_extra_whitespaces, n.escape_whitespaces = "identity", True, False, True
    return m.SerializeToString()


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 0, 0o644
    tar.addfile(info, io.BytesIO(data))


def main():
    src = os.path.join(sys.argv[1], "mistral")
    model = model_from(json.load(open(os.path.join(src, "tokenizer.json"), encoding="utf-8")))
    sp = spm.SentencePieceProcessor(model_proto=model)
    golden = json.load(open(os.path.join(DATA, "mistral", "golden.json"), encoding="utf-8"))
    special = ("<s>", "</s>", "<unk>")
    same = [c for c in golden["cases"] if not any(s in c["text"] for s in special)]
    for c in same:  # without special-token strings in the text, the library alone gives the golden ids
        assert sp.encode(c["text"]) == c["ids_no_special"], c["text"]
    print(f"sentencepiece {spm.__version__}: {len(same)} of {len(golden['cases'])} cases equal the golden ids "
          "(the others type special tokens, which the tokenizer finds before SentencePiece runs)")
    out = os.path.join(DATA, "mistral-spm")
    os.makedirs(out, exist_ok=True)
    with tarfile.open(os.path.join(out, "tokenizer.tar.xz"), "w:xz") as tar:
        add(tar, "tokenizer.model", model)
        add(tar, "tokenizer_config.json", open(os.path.join(src, "tokenizer_config.json"), "rb").read())
    print("wrote", os.path.join(out, "tokenizer.tar.xz"))


if __name__ == "__main__":
    main()
