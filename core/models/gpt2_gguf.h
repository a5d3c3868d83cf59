#pragma once
// GPT-2 from GGUF files (general.architecture "gpt2", as llama.cpp's converter writes it): the config from
// the metadata (gpt2.embedding_length, .block_count, .attention.head_count, .feed_forward_length,
// .context_length, .attention.layer_norm_epsilon, tokenizer.ggml.eos_token_id; the vocabulary from
// token_embd's rows), each tensor under its transformers name. The converter stores c_attn, c_proj and c_fc
// as linear layers' [out, in] (transposed from Conv1D's [in, out]) and repeats the token embeddings as
// output.weight, which the tied model leaves out. GPT-2's engine computes with float32 weights: block types
// are decoded when the file is opened (the Llama family keeps them as blocks).
//
//   auto gpt = loadGpt2Gguf(GgufFile::open(path));

#include "core/io/gguf.h"
#include "core/models/text_models.h"

#include <memory>
#include <string>

namespace attnlens {

Gpt2Config gpt2ConfigFromGguf(const GgufFile& file);
// "blk.0.attn_qkv.weight" → "h.0.attn.c_attn.weight", "token_embd.weight" → "wte.weight"; empty for a
// tensor the model does not use (output.weight: the tied head).
std::string gpt2TensorName(const std::string& ggufName);
std::shared_ptr<const Gpt2Model> loadGpt2Gguf(const GgufFile& file, const Callbacks& callbacks = {});

} // namespace attnlens
