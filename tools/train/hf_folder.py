#!/usr/bin/env python3
"""Reloading an exported Hugging Face folder (config.json + model.safetensors, any float dtype) into a
PyTorch model of our own, shared by the trainers (train_vit.py, marian_io.py) and make_goldens.py."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before numpy and torch load OpenBLAS)
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
import safetensors_io as st_io  # noqa: E402  (the one shared reader/writer, tools/golden)


def load_exported(folder, make_model):
    """(model, config.json as a dict): make_model(config) builds the module, the weights are loaded
    strictly as float32 and the model is put in eval mode."""
    with open(os.path.join(folder, "config.json")) as f:
        hc = json.load(f)
    model = make_model(hc)
    sd = {k: torch.from_numpy(v.astype(np.float32)) for k, v in
          st_io.load_file(os.path.join(folder, "model.safetensors")).items()}
    model.load_state_dict(sd, strict=True)
    model.eval()
    return model, hc
