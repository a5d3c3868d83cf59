"""What the vision-encoder golden scripts share (make_dinov2_fixtures.py, make_clip_model_fixtures.py,
make_siglip_fixtures.py): the pictures, one golden file per (folder, picture, case) with its metadata, the index,
the slow tokenizers' AddedToken without the compiled package, and the command line.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PICTURES = ("photo_97x61", "portrait_45x71")


def copy_pictures(out):
    """tests/data/dinov2's two pictures into out/images; {name: path}."""
    src = os.path.join(ROOT, "tests", "data", "dinov2", "images")
    d = os.path.join(out, "images")
    os.makedirs(d, exist_ok=True)
    paths = {}
    for name in PICTURES:
        paths[name] = os.path.join(d, name + ".png")
        shutil.copyfile(os.path.join(src, name + ".png"), paths[name])
    return paths


def hashable_added_token(transformers):
    """Without the compiled tokenizers package v4.50.3 falls back to a dataclass AddedToken that cannot be hashed,
    which its own slow tokenizers hash and update: give it the compiled class's identity (its content) and
    setstate. The fetched code is not edited."""
    added = transformers.tokenization_utils_base.AddedToken
    added.__hash__ = lambda self: hash(self.content)
    added.__eq__ = lambda self, other: str(self) == str(other)
    added.__setstate__ = lambda self, state: self.__dict__.update(state)


def anonymize_sentencepiece(path):
    """A SentencePiece model keeps its trainer's input and output paths (trainer_spec.input, model_prefix): cleared,
    so no path of the machine that trained it is shipped. Encoding does not read them."""
    from sentencepiece import sentencepiece_model_pb2
    model = sentencepiece_model_pb2.ModelProto()
    with open(path, "rb") as f:
        model.ParseFromString(f.read())
    del model.trainer_spec.input[:]
    model.trainer_spec.ClearField("model_prefix")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def save_golden(save_file, out, folder, image_name, case, tensors, meta, index):
    """<out>/<folder>/golden_<image>_<case>.safetensors (float32, metadata "golden" = the JSON of meta); the
    index gets meta and the file's name."""
    name = f"golden_{image_name}_{case}.safetensors"
    save_file({k: v.detach().float().contiguous() for k, v in tensors.items()}, os.path.join(out, folder, name),
              {"golden": json.dumps(meta)})
    index.append(dict(meta, file=f"{folder}/{name}"))


def report_folder(out, folder, what):
    d = os.path.join(out, folder)
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print(f"{folder}: {what}, {size / 1000:.1f} kB")


def write_index(out, index, extra=""):
    with open(os.path.join(out, "goldens.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: {len(index)} goldens{extra}")


def main(argv, script, default_out, tag, worker):
    """`script [--out DIR]` runs `script --worker DIR` with transformers `tag` (make_llm_fixtures.run_worker);
    `--worker DIR` calls worker(DIR)."""
    if argv[:1] == ["--worker"]:
        return worker(argv[1])
    out = default_out
    if argv[:1] == ["--out"]:
        out, argv = argv[1], argv[2:]
    if argv:
        sys.exit(f"usage: {os.path.basename(script)} [--out DIR]")
    import make_llm_fixtures
    src = os.environ.get("TRANSFORMERS_SRC", "/tmp/llmgold")
    make_llm_fixtures.run_worker(src, tag, ["--worker", os.path.abspath(out)], script=script)
