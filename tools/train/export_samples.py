#!/usr/bin/env python3
"""Write 3 Fashion-MNIST TEST images per class as 28x28 8-bit grayscale PNGs into
resources/samples/fashion-mnist/<class_slug>_<n>.png (the first 3 test images of each class,
in test-set order). The test index of each is listed in index.json.

  export_samples.py               the gallery samples
  export_samples.py --all DIR     all 10 000 test images + DIR/labels.csv (for C++ accuracy runs)"""
import json
import os
import sys

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fashion_data import CLASSES, REPO, load_split  # noqa: E402


def slug(name):
    return name.lower().replace("/", "_").replace(" ", "_")


def export_all(out):
    """All 10 000 test images as PNGs + labels.csv (file,label), e.g. for measuring the C++
    engine's accuracy over the whole test set. Not committed."""
    os.makedirs(out, exist_ok=True)
    x, y = load_split("test")
    with open(os.path.join(out, "labels.csv"), "w") as f:
        f.write("file,label,class\n")
        for i in range(len(y)):
            fn = f"test_{i:05d}.png"
            Image.fromarray(x[i], mode="L").save(os.path.join(out, fn))
            f.write(f"{fn},{int(y[i])},{CLASSES[int(y[i])]}\n")
    print(f"wrote {len(y)} test PNGs to {out}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--all":
        export_all(sys.argv[2])
        return
    out = os.path.join(REPO, "resources/samples/fashion-mnist")
    os.makedirs(out, exist_ok=True)
    x, y = load_split("test")
    index = []
    for c, name in enumerate(CLASSES):
        idx = [i for i in range(len(y)) if y[i] == c][:3]
        for n, i in enumerate(idx, 1):
            fn = f"{slug(name)}_{n}.png"
            Image.fromarray(x[i], mode="L").save(os.path.join(out, fn), optimize=True)
            index.append({"file": fn, "label": c, "class": name, "test_index": int(i)})
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    print(f"wrote {len(index)} samples to {out}")


if __name__ == "__main__":
    main()
