#pragma once
// The tokenizer a GGUF file carries in its metadata (tokenizer.ggml.*), as llama.cpp's converter wrote it
// from the model's tokenizer.json: for model "gpt2" (byte-level BPE: Llama 3, Qwen2/3, SmolLM, GPT-2) the
// tokens in id order, their types (3 control: special added tokens; 4 user-defined: other added tokens), the
// merges as "left right" strings, the pre-tokenizer by name — "llama-bpe"/"llama3"/"llama-v3" (Llama 3's
// split regex, whole vocabulary words kept: ignore_merges), "qwen2" (one digit at a time; NFC first, as
// Qwen's tokenizer.json normalises), "smollm", "gpt-2", "default" (llama.cpp's own four expressions) — BOS
// when add_bos_token says so, eos from eos_token_id. The result is the tokenizer.json those facts make, run
// by HfTokenizer. Model "llama" (SentencePiece vocabularies: Llama 2, Mistral, Gemma — pieces, scores and
// types) becomes the SentencePiece model it was converted from, run by the SentencePiece library
// (core/text/sentencepiece_tokenizer.h); other models are refused by name.
//
//   auto tok = ggufTokenizer(GgufFile::open(path));   tok->encode("Hello")

#include "core/io/gguf.h"
#include "core/text/hf_tokenizer.h"

#include <memory>

namespace attnlens {

std::shared_ptr<const TextTokenizer> ggufTokenizer(const GgufFile& file);

} // namespace attnlens
