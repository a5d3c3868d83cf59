#!/usr/bin/env python3
"""Export and reload of the built-in translator's folder (Hugging Face layout: config.json,
generation_config.json, tokenizer_config.json, vocab.json, source/target.spm, model.safetensors with
the training record in its metadata), checkpoint averaging, and recovery of an old folder's training
record from its model card."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fast_blas  # noqa: F401,E402  (sets OPENBLAS_CORETYPE before numpy and torch load OpenBLAS)
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
import safetensors_io as st_io  # noqa: E402  (the one shared writer, tools/golden)
from marian_torch import MarianMTModel  # noqa: E402
import hf_folder  # noqa: E402


# -------------------------------------------------------------------------------------- export
def hf_config(c):
    return {
        "_name_or_path": "attention-lens/marian-de-en-tiny",
        "activation_dropout": 0.0, "activation_function": "swish",
        "architectures": ["MarianMTModel"], "attention_dropout": c["attention_dropout"],
        "bad_words_ids": [[c["pad_token_id"]]], "bos_token_id": 0, "classifier_dropout": 0.0,
        "d_model": c["d_model"], "decoder_attention_heads": c["decoder_attention_heads"],
        "decoder_ffn_dim": c["decoder_ffn_dim"], "decoder_layerdrop": 0.0,
        "decoder_layers": c["decoder_layers"], "decoder_start_token_id": c["pad_token_id"],
        "decoder_vocab_size": c["vocab_size"], "dropout": c["dropout"],
        "encoder_attention_heads": c["encoder_attention_heads"],
        "encoder_ffn_dim": c["encoder_ffn_dim"], "encoder_layerdrop": 0.0,
        "encoder_layers": c["encoder_layers"], "eos_token_id": 0, "forced_eos_token_id": 0,
        "init_std": 0.02, "is_encoder_decoder": True, "max_length": 128,
        "max_position_embeddings": c["max_position_embeddings"], "model_type": "marian",
        "normalize_embedding": False, "num_beams": 4,
        "num_hidden_layers": c["encoder_layers"], "pad_token_id": c["pad_token_id"],
        "scale_embedding": True, "share_encoder_decoder_embeddings": True,
        "static_position_embeddings": True, "torch_dtype": "float16",
        "transformers_version": "4.33.3", "use_cache": True, "vocab_size": c["vocab_size"],
    }


def generation_config(c):
    return {"bad_words_ids": [[c["pad_token_id"]]], "bos_token_id": 0,
            "decoder_start_token_id": c["pad_token_id"], "eos_token_id": 0,
            "forced_eos_token_id": 0, "max_length": 128, "num_beams": 4,
            "pad_token_id": c["pad_token_id"], "transformers_version": "4.33.3"}


def tokenizer_config():
    return {"model_max_length": 512, "source_lang": "de", "target_lang": "en",
            "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
            "separate_vocabs": False, "sp_model_kwargs": {},
            "tokenizer_class": "MarianTokenizer"}


def config_from_hf(hc):
    keys = ["d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
            "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim", "vocab_size",
            "max_position_embeddings", "pad_token_id", "eos_token_id", "decoder_start_token_id"]
    c = {k: hc[k] for k in keys}
    c.update(dropout=0.0, attention_dropout=0.0)
    return c


def export_model(model, tok_dir, out_dir, card_text, state=None):
    import shutil
    os.makedirs(out_dir, exist_ok=True)
    c = model.config
    sd = model.state_dict()
    tensors = {k: v.detach().numpy().astype(np.float16) for k, v in sd.items()}
    # The training record travels with the weights (--init-from continues from the folder alone).
    md = {"format": "pt"}
    if state is not None:
        md[st_io.TRAINING_RECORD_KEY] = json.dumps(state, separators=(",", ":"))
    st_io.save_file(tensors, os.path.join(out_dir, "model.safetensors"), md)
    # tok_dir's files were written by build_vocab (copy_spm: no training paths) or copied from an
    # exported folder: copied as they are (no protobuf needed where the model is exported)
    for n in ["source.spm", "target.spm", "vocab.json"]:
        shutil.copyfile(os.path.join(tok_dir, n), os.path.join(out_dir, n))
    for name, obj in [("config.json", hf_config(c)), ("generation_config.json", generation_config(c)),
                      ("tokenizer_config.json", tokenizer_config())]:
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    with open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8") as f:
        f.write(card_text)


def load_exported(folder):
    return hf_folder.load_exported(folder, lambda hc: MarianMTModel(config_from_hf(hc)))


def state_from_card(text):
    """The training record of a folder exported before it was stored in the safetensors metadata,
    recovered from the model card that model_card() wrote."""
    m = re.search(r"\* (\d+) epochs \((\d+) steps\) in (\d+) minutes", text)
    state = {"epoch": int(m.group(1)), "batch": 0, "step": int(m.group(2)),
             "seconds": 60.0 * int(m.group(3)), "tokens": 0, "log": [], "data_changes": []}
    for m in re.finditer(r"^\| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|$", text, re.M):
        state["log"].append({"epoch": int(m.group(1)), "train_loss": float(m.group(2)),
                             "dev150_bleu": float(m.group(3)), "dev150_chrf": float(m.group(4)),
                             "minutes": float(m.group(5))})
    for m in re.finditer(r"from step (\d+): (?:sentences of at most (\d+) pieces per side|all sentences)"
                         r" \((\d+) pairs\)", text):
        state["data_changes"].append({"at_step": int(m.group(1)), "max_sent_len": int(m.group(2) or 0),
                                      "sentences": int(m.group(3))})
    rows = {}
    for name, n, b, c in re.findall(r"^\| (this model, greedy|this model, beam 4|copy the source \(baseline\)) "
                                    r"\| (\d+) \| ([\d.]+) \| ([\d.]+) \|$", text, re.M):
        rows.setdefault(name, []).append((int(n), float(b), float(c)))
    if rows:  # the held-out test numbers of these weights (the card's table: all, then the subset)
        (n_all, gb, gc), (n_sub, gbs, gcs) = rows["this model, greedy"][:2]
        (_, cb, cc), (_, cbs, ccs) = rows["copy the source (baseline)"][:2]
        (_, bb, bc), = rows["this model, beam 4"][:1]
        state["heldout_evals"] = [{"at_step": state["step"], "minutes": state["seconds"] / 60, "res": {
            "test_sentences": n_all, "beam_test_sentences": n_sub, "greedy_bleu": gb, "greedy_chrf": gc,
            "copy_bleu": cb, "copy_chrf": cc, "greedy_bleu_subset": gbs, "greedy_chrf_subset": gcs,
            "beam4_bleu_subset": bb, "beam4_chrf_subset": bc, "copy_bleu_subset": cbs,
            "copy_chrf_subset": ccs}}]
    state["last_snap"] = state["seconds"]
    return state


def load_for_training(folder, tok_dir):
    """An exported folder as a checkpoint without optimizer state: weights, its tokenizer files
    (copied into tok_dir) and the training record."""
    import shutil
    model, hc = load_exported(folder)
    os.makedirs(tok_dir, exist_ok=True)
    for n in ["source.spm", "target.spm", "vocab.json"]:
        shutil.copyfile(os.path.join(folder, n), os.path.join(tok_dir, n))
    state = st_io.training_record(folder, state_from_card)
    state["batch"] = 0
    state.setdefault("restarts", []).append({"at_step": state["step"], "from": os.path.basename(folder.rstrip("/"))})
    return config_from_hf(hc), state, model.state_dict()


def average_checkpoints(paths):
    avg = None
    for p in paths:
        sd = torch.load(p, weights_only=False)["model"]
        if avg is None:
            avg = {k: v.clone().float() for k, v in sd.items()}
        else:
            for k in avg:
                avg[k] += sd[k].float()
    return {k: v / len(paths) for k, v in avg.items()}
