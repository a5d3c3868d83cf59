#pragma once
// The Llama family from GGUF files (llama.cpp, LM Studio, Ollama's blobs) as LlamaModel runs it: the
// architectures llama (Llama 2/3, TinyLlama, SmolLM, Mistral — llama.cpp writes Mistral as llama), qwen2 and
// qwen3; the config from the metadata ({arch}.embedding_length, .block_count, .attention.head_count[_kv],
// .attention.key_length, .feed_forward_length, .context_length, .rope.freq_base, .rope.scaling.*,
// .attention.layer_norm_rms_epsilon, tokenizer.ggml.bos/eos_token_id) and the tensor table (biases, q/k
// norms, a tied head where output.weight is absent); each tensor under its transformers name. llama.cpp's
// converter reorders the llama architecture's q/k rows within each head ([first half | second half]
// interleaved, for its rope on adjacent pairs): the rows are used as stored and the rope turns adjacent pairs
// (LlamaConfig::ropeInterleaved) — the same scores and outputs, no copy of the weights.
// gemma3 too: its norms stored as 1 + w (RMSNorm by w), ffn_norm / post_attention_norm / post_ffw_norm its
// four norms, and what its metadata cannot say taken as llama.cpp takes it (every 6th layer full, the local
// rope base 10 000, query scale head_dim^-0.5). A rope_freqs table (llama3 scaling as llama.cpp stores it)
// divides the inverse frequencies. Refused by name: yarn / longrope scaling, per-layer head counts, partial
// rotary dimensions, attention softcapping; every other architecture.
//
//   GgufFile f = GgufFile::open(path);
//   LlamaConfig c = llamaConfigFromGguf(f);           // throws attnlens::Error naming the key
//   TensorFile t = f.toTensorFile(transformersTensorNames(f.string("general.architecture").value_or("")));

#include "core/io/gguf.h"
#include "core/models/llama_model.h"

#include <functional>
#include <string>

namespace attnlens {

LlamaConfig llamaConfigFromGguf(const GgufFile& file);
// llama, qwen2, qwen3, gemma3: the general.architecture values this family runs.
bool isLlamaGgufArchitecture(const std::string& architecture);
// "blk.3.attn_q.weight" → "model.layers.3.self_attn.q_proj.weight", "output.weight" → "lm_head.weight"; empty
// for a tensor the family does not use (rope_freqs.weight: read by llamaConfigFromGguf). The architecture
// matters for gemma3's norms; the one-argument form is llama's (qwen2 and qwen3 name alike).
std::string transformersTensorName(const std::string& ggufName, const std::string& architecture);
std::string transformersTensorName(const std::string& ggufName);
std::function<std::string(const std::string&)> transformersTensorNames(const std::string& architecture);

} // namespace attnlens
