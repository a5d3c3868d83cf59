"""Chat-template goldens: the real tokenizer_config.json files of tests/data/tokenizers (Llama 3, Qwen3, Gemma 3)
rendered by Python's Jinja2 in the environment transformers' apply_chat_template builds (v4.50:
ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loopcontrols; tojson, raise_exception and
strftime_now as transformers defines them; the tokenizer's bos/eos/unk/pad tokens in the context), for one user
turn with add_generation_prompt=True. core/text/chat_template (llama.cpp's Jinja engine) must give the same text.

    /usr/bin/python3 tools/golden/make_chat_goldens.py BUILD_TOKENIZERS_DIR
    # BUILD_TOKENIZERS_DIR: build/release/tokenizers (the unpacked tokenizer.tar.xz files)
    # writes tests/data/tokenizers/chat_golden.json

Needs apt python3-jinja2. strftime_now formats NOW (a fixed date) so that the goldens do not depend on the day.
"""
import datetime
import json
import os
import sys

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "data", "tokenizers", "chat_golden.json")
NOW = 1768478400  # 2026-01-15 12:00:00 UTC
TEXTS = ["Hello, who are you?", "  Two lines\nand a tab\there  ", "Café — 中文 — 😀👍🏽 \"quoted\" {{ not jinja }}",
         "<|im_end|> typed as text", ""]


def environment():
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.fromtimestamp(NOW, datetime.timezone.utc).strftime(fmt)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def token(config, key):
    t = config.get(key)
    return t.get("content") if isinstance(t, dict) else t


def main(argv):
    src = argv[0]
    env, out = environment(), {"now": NOW, "texts": TEXTS, "models": {}}
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name, "tokenizer_config.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        template = config.get("chat_template")
        if not template:
            continue
        tokens = {k: token(config, k) for k in ("bos_token", "eos_token", "unk_token", "pad_token") if token(config, k)}
        compiled = env.from_string(template)
        out["models"][name] = [compiled.render(messages=[{"role": "user", "content": t}], add_generation_prompt=True,
                                               **tokens) for t in TEXTS]
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{OUT}: {', '.join(out['models'])}")


if __name__ == "__main__":
    main(sys.argv[1:])
