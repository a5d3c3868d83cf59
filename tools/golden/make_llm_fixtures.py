"""Tiny seeded decoder-LLM folders (Llama, Mistral, Qwen2, Qwen3, Gemma 3) with goldens from Hugging Face
transformers' OWN modeling classes, run on Debian's torch 1.13, for the C++ LLM engine tests.

    TRANSFORMERS_SRC=/tmp/llmgold /usr/bin/python3 tools/golden/make_llm_fixtures.py [NAME ...]
    # rewrites tests/data/llm/<NAME> (all folders by default)

Folders (tests/data/llm/<name>/: config.json, generation_config.json, model.safetensors as the class's own
save_pretrained(safe_serialization=True) writes them; vocab 256, hidden 64, bos 1, max_position_embeddings 128;
weights random and seeded, q/k projections x3 (qk-norm models: q/k norm weights ~2) so rows are peaked, RMSNorm
weights ~1 (Gemma ~0, it scales by 1 + w), tied embeddings small (rms 0.15 after Gemma's sqrt(hidden) scale)):
  llama-gqa            v4.33.3 LlamaForCausalLM, 2 layers, 8 heads / 2 kv, intermediate 8, untied, float32,
                       eos [2, 3] (prompts 6/12/17 tokens so the folder stays < 300 KB)
  llama-q4k            v4.33.3, hidden 256 and intermediate 256 (rows of whole 256-value K-quant super-blocks, for
                       the Q4_K / Q6_K GGUF files of make_gguf_fixtures.py), 4 heads / 2 kv, untied, bfloat16
  llama-sharded        the same weights saved with max_shard_size so that model.safetensors.index.json + 2 shards
  llama-mqa-tied-bf16  v4.33.3, 4 heads / 1 kv, tied (no lm_head.weight), stored bfloat16, rope_scaling linear 2
  llama-dynamic        v4.33.3, rope_scaling dynamic 2, max_position_embeddings 16, prompts up to 20 tokens
  llama3-rope          v4.43.4, rope_scaling rope_type llama3 (factor 8, low 1, high 4, original max 32)
  mistral-window       v4.37.2 MistralForCausalLM, sliding_window 4, 4 heads / 2 kv, tied
  qwen2-bias           v4.37.2 Qwen2ForCausalLM (q/k/v biases), 4 heads / 2 kv, tied, no sliding window
  qwen2-window         v4.53.3 Qwen2ForCausalLM, use_sliding_window, sliding_window 4, max_window_layers 1
                       (layer 0 full, layer 1 windowed: only >= 4.53 honours this per layer in eager attention)
  qwen3-qknorm         v4.51.3 Qwen3ForCausalLM, 4 heads / 2 kv, head_dim 32, q_norm / k_norm, tied, bfloat16
  gemma3               v4.50.3 Gemma3ForCausalLM (gemma3_text), 3 layers (sliding, sliding, full:
                       sliding_window_pattern 3), 4 heads / 1 kv, head_dim 32, query_pre_attn_scalar 24,
                       sliding_window 4, rope_theta 1e6 / rope_local_base_freq 1e4, gelu_pytorch_tanh, tied, bfloat16
  gemma3-gguf          the same with what a GGUF file can say (llama.cpp fixes them for gemma3): 6 layers, every
                       6th full (sliding_window_pattern 6), query_pre_attn_scalar = head_dim 32
Goldens (golden.safetensors + golden.json): 3 prompts (first id 1, then seeded ids in [4, 255]); t{i}.attentions
[L, H, T, T] (output_attentions, eager) and t{i}.logits [T, V] in float32 (bfloat16 folders are loaded back and run
in float32); "greedy" = model.generate(do_sample=False, max_new_tokens=6, eos disabled) with the KV cache, checked
against an argmax loop without cache ("greedy_nocache" is stored only where the two differ: llama-dynamic case 2,
since v4.33.3's dynamic NTK rotates each new q/k with the base of the length at that step and keeps the cached keys
as rotated before); prompts whose greedy steps have a top-1 / top-2 logit gap under MIN_GAP in either run are
redrawn ("greedy_min_gap" is stored). Every run loads the saved folder afresh (dynamic RoPE keeps state).

No PyPI here: the sources come from the `fetch` tool (github:yunkchen/transformers has the upstream tags,
github:huggingface/huggingface_hub likewise), unpacked with git archive:
    G=<fetched git dir>; for t in v4.33.3 v4.37.2 v4.43.4 v4.50.3 v4.51.3 v4.53.3; do
      mkdir -p /tmp/llmgold/tf-$t && git --git-dir=$G archive $t src/transformers | tar -x -C /tmp/llmgold/tf-$t; done
    H=<fetched hub git dir>; mkdir -p /tmp/llmgold/hub-0.30.2
    git --git-dir=$H archive v0.30.2 src/huggingface_hub | tar -x -C /tmp/llmgold/hub-0.30.2
TRANSFORMERS_SRC (or --src DIR) is the folder holding tf-<tag>/src/transformers and hub-*/src/huggingface_hub.
Needs apt python3-{numpy,regex,requests,yaml,tqdm,filelock,packaging}. The compiled safetensors and tokenizers
packages are replaced by stand-ins written here (safetensors over safetensors_io.py; tokenizers: names only), and
torch >= 2 APIs that the newer tags touch at import or load time are patched at runtime (see install_shims); the
fetched code is never edited. Every fixture runs on transformers' own code: no independent reference is needed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "llm")

MIN_GAP = 0.02  # smallest top-1 minus top-2 logit accepted at a greedy step (float32 engines differ by ~1e-5)
BASE = dict(vocab_size=256, hidden_size=64, max_position_embeddings=128, bos_token_id=1, eos_token_id=2)
LLAMA_GQA = dict(num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=2, intermediate_size=8,
                 tie_word_embeddings=False, rope_theta=10000.0, hidden_act="silu", eos_token_id=[2, 3])
SMALL = dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=32,
             tie_word_embeddings=True)
FIXTURES = {  # name: (tag, model class, config class, config, stored dtype, prompt lengths, seed, max_shard_size)
    "llama-gqa": ("v4.33.3", "LlamaForCausalLM", "LlamaConfig", LLAMA_GQA, "float32", (6, 12, 17), 11, None),
    "llama-q4k": ("v4.33.3", "LlamaForCausalLM", "LlamaConfig",
                  dict(SMALL, hidden_size=256, intermediate_size=256, tie_word_embeddings=False), "bfloat16",
                  (6, 12, 20), 20, None),
    "llama-sharded": ("v4.33.3", "LlamaForCausalLM", "LlamaConfig", LLAMA_GQA, "float32", (6, 12, 17), 11,
                      "140KB"),
    "llama-mqa-tied-bf16": ("v4.33.3", "LlamaForCausalLM", "LlamaConfig",
                            dict(SMALL, num_key_value_heads=1, intermediate_size=128,
                                 rope_scaling={"type": "linear", "factor": 2.0}), "bfloat16", (6, 12, 20), 12, None),
    "llama-dynamic": ("v4.33.3", "LlamaForCausalLM", "LlamaConfig",
                      dict(SMALL, max_position_embeddings=16, rope_scaling={"type": "dynamic", "factor": 2.0}),
                      "float32", (6, 12, 20), 13, None),
    "llama3-rope": ("v4.43.4", "LlamaForCausalLM", "LlamaConfig",
                    dict(SMALL, rope_theta=500000.0, rope_scaling={
                        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                        "original_max_position_embeddings": 32}), "float32", (6, 12, 20), 14, None),
    "mistral-window": ("v4.37.2", "MistralForCausalLM", "MistralConfig", dict(SMALL, sliding_window=4),
                       "float32", (6, 12, 20), 15, None),
    "qwen2-bias": ("v4.37.2", "Qwen2ForCausalLM", "Qwen2Config", dict(SMALL), "float32", (6, 12, 20), 16, None),
    "qwen2-window": ("v4.53.3", "Qwen2ForCausalLM", "Qwen2Config",
                     dict(SMALL, use_sliding_window=True, sliding_window=4, max_window_layers=1), "float32",
                     (6, 12, 20), 17, None),
    "qwen3-qknorm": ("v4.51.3", "Qwen3ForCausalLM", "Qwen3Config",
                     dict(SMALL, head_dim=32, intermediate_size=64, sliding_window=None), "bfloat16", (6, 12, 20),
                     18, None),
    "gemma3": ("v4.50.3", "Gemma3ForCausalLM", "Gemma3TextConfig",
               dict(SMALL, num_hidden_layers=3, num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=24,
                    sliding_window=4, sliding_window_pattern=3, rope_local_base_freq=10000.0,
                    rope_theta=1000000.0, hidden_activation="gelu_pytorch_tanh", pad_token_id=0,
                    final_logit_softcapping=None, attn_logit_softcapping=None), "bfloat16", (6, 12, 20), 19, None),
    "gemma3-gguf": ("v4.50.3", "Gemma3ForCausalLM", "Gemma3TextConfig",
                    dict(SMALL, num_hidden_layers=6, num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=32,
                         sliding_window=4, sliding_window_pattern=6, rope_local_base_freq=10000.0,
                         rope_theta=1000000.0, hidden_activation="gelu_pytorch_tanh", pad_token_id=0,
                         final_logit_softcapping=None, attn_logit_softcapping=None), "bfloat16", (6, 12, 20), 21,
                    None),
}

SAFETENSORS_STUB = '''"""Pure-python stand-in for the compiled safetensors package, over safetensors_io."""
import json, struct
__version__ = "0.4.5"

class _Slice:
    def __init__(self, t): self.t = t
    def get_shape(self): return list(self.t.shape)
    def get_dtype(self): return {"torch.bfloat16": "BF16", "torch.float16": "F16"}.get(str(self.t.dtype), "F32")
    def __getitem__(self, i): return self.t[i]

class safe_open:
    def __init__(self, filename, framework="pt", device="cpu"):
        from safetensors_io import load_metadata, load_torch
        self._meta = load_metadata(filename) or None
        self._t = load_torch(filename, stored_dtype=True)
    def __enter__(self): return self
    def __exit__(self, *a): return False
    def keys(self): return list(self._t)
    def metadata(self): return self._meta
    def get_tensor(self, k): return self._t[k]
    def get_slice(self, k): return _Slice(self._t[k])
'''
SAFETENSORS_TORCH_STUB = '''from safetensors import safe_open

def save_file(tensors, filename, metadata=None):
    from safetensors_io import save_file as _save
    _save({k: v.contiguous() for k, v in tensors.items()}, filename, metadata)

def load_file(filename, device="cpu"):
    with safe_open(filename) as f:
        return {k: f.get_tensor(k) for k in f.keys()}

def storage_ptr(t):
    return t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr()

def storage_size(t):
    return t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else t.storage().size() * t.element_size()
'''
TOKENIZERS_STUB = '''"""Stand-in for the compiled tokenizers package: names only (no tokenizer is used)."""
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return type(name, (), {"__init__": lambda self, *a, **k: None})
'''


def write_stubs(d, hub_version):
    os.makedirs(os.path.join(d, "safetensors"))
    os.makedirs(os.path.join(d, "tokenizers"))
    files = {"safetensors/__init__.py": SAFETENSORS_STUB, "safetensors/torch.py": SAFETENSORS_TORCH_STUB,
             "tokenizers/__init__.py": TOKENIZERS_STUB}  # no dist-info: transformers then skips its version check
    for sub in ["decoders", "normalizers", "pre_tokenizers", "processors", "models", "trainers"]:
        files[f"tokenizers/{sub}.py"] = TOKENIZERS_STUB
    for name, ver in [("safetensors", "0.4.5"), ("huggingface_hub", hub_version)]:
        files[f"{name}-{ver}.dist-info/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n"
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
        with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
            f.write(text)


def install_shims(tag):
    """Runtime stand-ins for the torch >= 2 names the newer tags use; all are no-ops for this CPU / eager use."""
    import importlib.metadata
    import inspect
    import types
    import torch
    if tag >= "v4.53":  # 4.53 disables torch < 2.1 at import; the eager paths used here run on 1.13
        orig_version = importlib.metadata.version
        importlib.metadata.version = lambda n: "2.1.0" if n == "torch" else orig_version(n)
        import functorch
        torch.vmap = getattr(torch, "vmap", functorch.vmap)  # masking_utils builds masks with vmap
    for mod, names in [("torch.distributed.tensor", ["DTensor", "Placement", "Replicate", "Shard"]),
                       ("torch.distributed.fsdp", ["FullyShardedDataParallel"])]:
        try:
            __import__(mod)
        except Exception:
            m = types.ModuleType(mod)
            for n in names:
                setattr(m, n, type(n, (), {}))
            sys.modules[mod] = m
            setattr(torch.distributed, mod.rsplit(".", 1)[1], m)
    if not hasattr(torch, "compiler"):
        c = types.ModuleType("torch.compiler")
        c.disable = lambda fn=None, recursive=True: fn if fn is not None else (lambda f: f)
        c.is_compiling = c.is_exporting = lambda: False
        sys.modules["torch.compiler"] = torch.compiler = c
    if not hasattr(torch, "_dynamo"):  # HybridCache marks its tensors static for torch.compile
        d = types.ModuleType("torch._dynamo")
        d.mark_static_address = lambda t, guard=True: None
        d.is_compiling = lambda: False
        sys.modules["torch._dynamo"] = torch._dynamo = d
    for n in ["float8_e4m3fn", "float8_e5m2"]:  # dtype tables only: a sentinel no tensor has as dtype
        if not hasattr(torch, n):
            setattr(torch, n, type(n, (), {})())
    M = torch.nn.Module
    if "assign" not in inspect.signature(M.load_state_dict).parameters:
        orig_load = M.load_state_dict

        def load_state_dict(self, state_dict, strict=True, assign=False):
            if not assign:
                return orig_load(self, state_dict, strict=strict)
            for key, value in state_dict.items():  # torch 2 assign=True: take the given tensors (the model is on meta)
                path, _, name = key.rpartition(".")
                mod = self.get_submodule(path)
                if name in mod._parameters:
                    mod._parameters[name] = torch.nn.Parameter(value, mod._parameters[name].requires_grad)
                elif name in mod._buffers:
                    mod._buffers[name] = value
            return None
        M.load_state_dict = load_state_dict
    if "remove_duplicate" not in inspect.signature(M.named_parameters).parameters:
        def wrap(orig, attr):
            def named(self, prefix="", recurse=True, remove_duplicate=True):
                if remove_duplicate:
                    yield from orig(self, prefix=prefix, recurse=recurse)
                    return
                mods = self.named_modules(prefix=prefix, remove_duplicate=False) if recurse else [(prefix, self)]
                for mp, m in mods:
                    for k, v in getattr(m, attr).items():
                        if v is not None:
                            yield (mp + "." if mp else "") + k, v
            return named
        M.named_parameters = wrap(M.named_parameters, "_parameters")
        M.named_buffers = wrap(M.named_buffers, "_buffers")


def randomize(model, seed, gemma):
    import torch
    g = torch.Generator().manual_seed(seed)
    tied = "lm_head.weight" not in dict(model.named_parameters())
    emb = (0.15 / model.config.hidden_size ** 0.5 if gemma else 0.15) if tied else 0.5  # Gemma scales by sqrt(hidden)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            r = torch.randn(p.shape, generator=g)
            if name.endswith("q_norm.weight") or name.endswith("k_norm.weight"):  # peaked rows under qk-norm
                p.copy_((1.0 if gemma else 2.0) + 0.2 * r)
            elif "norm" in name:
                p.copy_((0.0 if gemma else 1.0) + 0.2 * r)
            elif name.endswith(".bias"):
                p.copy_(0.2 * r)
            elif "embed_tokens" in name:  # tied: small, else a token mostly predicts itself
                p.copy_(emb * r)
            else:  # a Linear weight [out, in]
                scale = 3.0 if (".q_proj." in name or ".k_proj." in name) else 1.0
                p.copy_(scale * r / p.shape[1] ** 0.5)


def worker(tag, names):
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    import fast_blas  # noqa: F401
    install_shims(tag)
    import torch
    import transformers
    from safetensors_io import save_file
    getattr(transformers.utils.logging, "disable_progress_bar", lambda: None)()
    eager = {"attn_implementation": "eager"} if tag >= "v4.36" else {}
    for name in names:
        _, cls_name, cfg_name, cfg_kw, dtype, lengths, seed, shard = FIXTURES[name]
        M, C = getattr(transformers, cls_name), getattr(transformers, cfg_name)
        cfg = C(**dict(BASE, **cfg_kw))
        if eager:
            cfg._attn_implementation = "eager"
        model = M(cfg).eval()
        randomize(model, seed, "gemma" in name)
        model.to(getattr(torch, dtype))
        folder = os.path.join(OUT, name)
        shutil.rmtree(folder, ignore_errors=True)
        kw = {"max_shard_size": shard} if shard else {}
        model.save_pretrained(folder, safe_serialization=True, **kw)

        def load():
            m = M.from_pretrained(folder, torch_dtype=torch.float32, **eager).float().eval()
            m.config.eos_token_id = m.generation_config.eos_token_id = None  # exactly 6 new tokens, no eos stop
            return m
        g = torch.Generator().manual_seed(1000 + seed)
        cases, tensors, notes = [], {}, []

        def gap(logits):  # top-1 minus top-2 logit
            top = logits.float().topk(2).values
            return float(top[0] - top[1])
        for i, n in enumerate(lengths):
            while True:  # redraw prompts whose greedy steps are near ties (< MIN_GAP) in either run
                ids = [1] + torch.randint(4, 256, (n - 1,), generator=g).tolist()
                x = torch.tensor([ids])
                with torch.no_grad():
                    gen = load().generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=6,
                                          output_scores=True, return_dict_in_generate=True)
                    greedy = gen.sequences[0, n:].tolist()
                    assert len(greedy) == 6, (name, greedy)
                    gaps = [gap(sc[0]) for sc in gen.scores]
                    m, seq = load(), list(ids)
                    for _ in range(6):
                        logits = m(torch.tensor([seq]), use_cache=False).logits[0, -1]
                        gaps.append(gap(logits))
                        seq.append(int(logits.argmax()))
                if min(gaps) >= MIN_GAP:
                    break
            with torch.no_grad():
                out = load()(x, output_attentions=True, use_cache=False)
            tensors[f"t{i}.attentions"] = torch.stack([a[0] for a in out.attentions]).float().contiguous()
            tensors[f"t{i}.logits"] = out.logits[0].float().contiguous()
            case = {"ids": ids, "greedy": greedy, "greedy_min_gap": round(min(gaps), 4)}
            if seq[n:] != greedy:
                case["greedy_nocache"] = seq[n:]
                notes.append(f"case {i}: generate (KV cache) {greedy} != no-cache argmax loop {seq[n:]}")
            cases.append(case)
        save_file(tensors, os.path.join(folder, "golden.safetensors"))
        ref = f"transformers {tag} {cls_name} (eager attention, torch {torch.__version__.split('+')[0]})"
        with open(os.path.join(folder, "golden.json"), "w", encoding="utf-8") as f:
            json.dump({"reference": ref, "stored_dtype": dtype, "cases": cases}, f, indent=1, sort_keys=True)
            f.write("\n")
        size = sum(os.path.getsize(os.path.join(folder, fn)) for fn in os.listdir(folder))
        att = torch.cat([t.max(-1).values.flatten() for k, t in tensors.items() if k.endswith("attentions")])
        print(f"{name}: {size / 1000:.1f} kB in {len(os.listdir(folder))} files, mean row max {att.mean():.2f}")
        for s in notes:
            print(f"  {name} {s}")


# Folders that also get a tokenizer.json, so that they open as text folders (Text page, `attnlens-cli text`):
# a byte-level BPE without merges whose 256 tokens are the bytes (id = byte value, GPT-2's printable
# stand-ins), Split by Llama 3's pattern, no BOS template (the goldens' ids start with 1 themselves).
TOKENIZED = ("llama-gqa", "gemma3", "llama-q4k")
CHAT = ("llama-gqa",)
CHAT_TEMPLATE = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
                 "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
                 "{% endif %}")
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")


def write_byte_tokenizer(folder):
    keep = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255]
    stand_in, extra = {}, 0
    for b in range(256):
        stand_in[b] = chr(b) if b in keep else chr(256 + extra)
        extra += b not in keep
    tok = {"version": "1.0", "added_tokens": [], "normalizer": None,
           "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
               {"type": "Split", "pattern": {"Regex": LLAMA3_SPLIT}, "behavior": "Isolated", "invert": False},
               {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
           "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                     "vocab": {stand_in[b]: b for b in range(256)}, "merges": []}}
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
        f.write("\n")
    if os.path.basename(folder) in CHAT:  # a ChatML template (as Qwen's), so that the Chat toggle has one
        with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"chat_template": CHAT_TEMPLATE, "bos_token": None}, f, indent=1)
            f.write("\n")


BUILTIN_TAG = "v4.43.4"
BUILTIN_PROMPTS = ["The weather is nice today and", "I would like to", "Don't worry, we'll see."]


def builtin_worker(folder, out_dir):
    """Goldens of a shipped Llama-layout model (resources/models/llama-en-tiny): transformers' own
    LlamaForCausalLM on its stored (bfloat16) weights run in float32; the ids from text_reference's independent
    byte-level BPE over the folder's tokenizer.json vocabulary and merges."""
    sys.path.insert(0, os.path.join(HERE, "..", "train"))
    import fast_blas  # noqa: F401
    install_shims(BUILTIN_TAG)
    import numpy as np
    import torch
    import transformers
    import text_reference as ref
    with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    tmp = tempfile.mkdtemp(prefix="builtin-bpe-")
    with open(os.path.join(tmp, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(tj["model"]["vocab"], f, ensure_ascii=False)
    with open(os.path.join(tmp, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(m + "\n" for m in tj["model"]["merges"]))
    tok = ref.ByteBpe(os.path.join(tmp, "vocab.json"), os.path.join(tmp, "merges.txt"))
    shutil.rmtree(tmp)
    model = transformers.LlamaForCausalLM.from_pretrained(folder, torch_dtype=torch.float32,
                                                          attn_implementation="eager").eval()

    def r7(x):
        a = np.asarray(x, dtype=np.float64)
        return float(f"{float(a):.7g}") if a.ndim == 0 else [r7(v) for v in a]
    name = os.path.basename(os.path.normpath(folder))
    for n, text in enumerate(BUILTIN_PROMPTS, 1):
        tokens, ids = tok.encode(text)
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
            seq = list(ids)
            for _ in range(8):  # greedy, a full pass per token (eos not special here)
                seq.append(int(model(torch.tensor([seq]), use_cache=False).logits[0, -1].argmax()))
        golden = {"model": "resources/models/" + name, "reference": f"transformers {BUILTIN_TAG} LlamaForCausalLM "
                  "(eager, float32 from the stored bfloat16)", "text": text, "tokens": tokens, "ids": ids,
                  "attentions": r7(torch.stack([a[0] for a in out.attentions]).numpy()),
                  "last_logits": r7(out.logits[0, -1].numpy()), "greedy_ids": seq[len(ids):]}
        path = os.path.join(out_dir, f"llama_{n}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")
        print(f"{path}: {os.path.getsize(path) / 1e6:.2f} MB")


def run_worker(src, tag, args, script=None, capture=False):
    """Runs `python3 script args` (default: this file) with transformers `tag` (src/tf-<tag>), the newest
    src/hub-* and the stand-ins above importable, tools/golden on the path; returns the CompletedProcess."""
    hubs = sorted(d for d in os.listdir(src) if d.startswith("hub-"))
    if not hubs:
        sys.exit(f"no hub-<version>/src/huggingface_hub under {src} (see the docstring)")
    tf = os.path.join(src, f"tf-{tag}", "src")
    if not os.path.isdir(os.path.join(tf, "transformers")):
        sys.exit(f"missing {tf}/transformers (see the docstring)")
    stubs = tempfile.mkdtemp(prefix="llm-stubs-")
    try:
        write_stubs(stubs, hubs[-1][4:])
        path = [stubs, os.path.join(src, hubs[-1], "src"), tf, HERE]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), TRANSFORMERS_VERBOSITY="error",
                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        return subprocess.run([sys.executable, os.path.abspath(script or __file__)] + args, env=env, check=True,
                              capture_output=capture, text=True)
    finally:
        shutil.rmtree(stubs)


def main(argv):
    if argv[:1] == ["--builtin-worker"]:
        return builtin_worker(argv[1], argv[2])
    if argv[:1] == ["--builtin"]:  # --builtin FOLDER OUT_DIR: the shipped model's goldens (tools/train/README.md)
        src = os.environ.get("TRANSFORMERS_SRC", "/tmp/llmgold")
        return run_worker(src, BUILTIN_TAG, ["--builtin-worker", os.path.abspath(argv[1]), os.path.abspath(argv[2])])
    if argv[:1] == ["--tokenizers"]:  # only the tokenizer.json files
        for n in TOKENIZED:
            write_byte_tokenizer(os.path.join(OUT, n))
        return
    if argv[:1] == ["--worker"]:
        return worker(argv[1], argv[2:])
    src = os.environ.get("TRANSFORMERS_SRC", "/tmp/llmgold")
    if argv[:1] == ["--src"]:
        src, argv = argv[1], argv[2:]
    names = argv or list(FIXTURES)
    hubs = sorted(d for d in os.listdir(src) if d.startswith("hub-"))
    if not hubs:
        sys.exit(f"no hub-<version>/src/huggingface_hub under {src} (see the docstring)")
    os.makedirs(OUT, exist_ok=True)
    stubs = tempfile.mkdtemp(prefix="llm-stubs-")
    try:
        write_stubs(stubs, hubs[-1][4:])
        for tag in sorted({FIXTURES[n][0] for n in names}):
            tf = os.path.join(src, f"tf-{tag}", "src")
            if not os.path.isdir(os.path.join(tf, "transformers")):
                sys.exit(f"missing {tf}/transformers (see the docstring)")
            path = [stubs, os.path.join(src, hubs[-1], "src"), tf, HERE]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), TRANSFORMERS_VERBOSITY="error",
                       HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
            todo = [n for n in names if FIXTURES[n][0] == tag]
            subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", tag] + todo, env=env,
                           check=True)
        for n in TOKENIZED:
            if n in names:
                write_byte_tokenizer(os.path.join(OUT, n))
    finally:
        shutil.rmtree(stubs)


if __name__ == "__main__":
    main(sys.argv[1:])
