"""Fashion-MNIST as the training tools read it (Debian's dataset-fashion-mnist): the IDX files, the class
names, ViTImageProcessor's exact preprocessing, the training augmentation and a classifier's test accuracy.
Shared by train_vit, train_teacher, train_unet, eval_unet and export_samples; imports none of them.
"""
import gzip
import os

import fast_blas  # noqa: F401  (sets OPENBLAS_CORETYPE before numpy loads OpenBLAS)
import numpy as np

DATA_DIR = "/usr/share/datasets/fashion-mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
           "Bag", "Ankle boot"]
# Mean / std of the Fashion-MNIST training pixels after /255 (rounded; these exact values are
# written to preprocessor_config.json and used in training).
IMAGE_MEAN = 0.2860
IMAGE_STD = 0.3530
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


# ----------------------------------------------------------------------------------------- data
def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_split(split):
    prefix = "train" if split == "train" else "t10k"
    x = read_idx(os.path.join(DATA_DIR, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(DATA_DIR, f"{prefix}-labels-idx1-ubyte.gz"))
    return x.copy(), y.astype(np.int64)


def start_run(args):
    """What a training run on Fashion-MNIST does first (train_vit, train_teacher): torch's threads and seed from
    --threads / --seed, the --work folder, and the splits -> (x_train, y_train, x_test, y_test)."""
    import torch  # here, so that the data-only tools never load torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.work, exist_ok=True)
    return (*load_split("train"), *load_split("test"))


def preprocess_uint8(x_u8, mean=IMAGE_MEAN, std=IMAGE_STD):
    """[B,H,W] uint8 -> [B,1,H,W] float32, exactly as ViTImageProcessor (rescale in f64, cast,
    normalise in f32)."""
    x = (np.asarray(x_u8, dtype=np.float64) * (1.0 / 255.0)).astype(np.float32)
    x = (x - np.float32(mean)) / np.float32(std)
    return x[:, None, :, :].astype(np.float32)


def augment(x_u8, rng, pad=2):
    """Random crop with zero padding + horizontal flip, on uint8 [B,H,W]."""
    b, h, w = x_u8.shape
    padded = np.zeros((b, h + 2 * pad, w + 2 * pad), dtype=np.uint8)
    padded[:, pad:pad + h, pad:pad + w] = x_u8
    dy = rng.integers(0, 2 * pad + 1, size=b)
    dx = rng.integers(0, 2 * pad + 1, size=b)
    out = np.empty_like(x_u8)
    for i in range(b):
        out[i] = padded[i, dy[i]:dy[i] + h, dx[i]:dx[i] + w]
    flip = rng.random(b) < 0.5
    out[flip] = out[flip, :, ::-1]
    return out


def evaluate(model, x_u8, y, bs=500):
    import torch  # only the evaluation needs it; the data helpers are numpy

    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x_u8), bs):
            logits, _ = model(torch.from_numpy(preprocess_uint8(x_u8[i:i + bs])))
            correct += int((logits.argmax(-1).numpy() == y[i:i + bs]).sum())
    return correct / len(x_u8)
