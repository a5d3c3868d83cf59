#pragma once
// LlamaModel: the decoder-only LLMs people download today, from untouched Hugging Face folders, with
// transformers' semantics (modeling_llama / mistral / qwen2 / qwen3 / gemma3), every layer a
// core/layers/TransformerBlock and every attention a MultiHeadAttention:
//   model_type llama (Llama 2/3, TinyLlama, SmolLM), mistral, qwen2, qwen3, gemma3_text.
//   - grouped-/multi-query attention (num_key_value_heads), an explicit head_dim (o_proj may be rectangular);
//   - RoPE (rotate_half) with rope_theta and rope_scaling / rope_parameters of type default, linear or llama3
//     (others refused by name); Gemma 3's local layers rotate with rope_local_base_freq;
//   - RMSNorm (Gemma: · (1 + w)), SwiGLU / GeGLU, Qwen2's q/k/v bias (Llama's attention_bias, mlp_bias),
//     Qwen3's and Gemma 3's per-head q_norm / k_norm, Gemma's √hidden embedding scale,
//     query_pre_attn_scalar, its four norms per layer and final_logit_softcapping;
//   - sliding windows: Mistral's sliding_window, Qwen2's use_sliding_window + max_window_layers, Gemma 3's
//     layer_types / sliding_window_pattern (the window is part of the mask, so it shows in the maps);
//   - tie_word_embeddings, eos ids from config.json and generation_config.json (a list allowed).
// Weights from model.safetensors, its shards' index or pytorch_model.bin, F32/F16/BF16 (computed in float32),
// or a GGUF file (core/models/llama_gguf.h: its block types kept as stored and decoded row by row when used).
//
//   auto m = LlamaModel::load(dir);   TextCache c = m->newCache();
//   TextForward p = m->extend(promptIds, c, true, true, {});   // attention [L, H, n, n], H = query heads

#include "core/models/text_models.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnlens {

class TensorFile;

struct RopeSpec {
    std::string type = "default"; // default, linear, llama3
    float theta = 10000.0f;
    float factor = 1.0f;
    float lowFreqFactor = 1.0f, highFreqFactor = 4.0f; // llama3
    int originalMaxPositions = 8192;                   // llama3
    // GGUF's rope_freqs tensor (llama.cpp's form of llama3 scaling): each inverse frequency divided by its
    // factor, after the type's own scaling; empty: none.
    std::vector<float> freqFactors;
};

struct LlamaConfig {
    std::string modelType;
    int hiddenSize = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, intermediateSize = 0,
        maxPositions = 0, vocabSize = 0;
    float rmsNormEps = 1e-6f;
    Activation activation = Activation::Silu;
    bool attentionBias = false, outputBias = false, mlpBias = false, qkNorm = false, tied = false;
    bool gemma = false;        // four norms per layer, √hidden embedding scale
    bool normPlusOne = false;  // RMSNorm by (1 + w): Gemma's folders (its GGUF files store 1 + w)
    float queryScale = 0.0f;   // what scores are multiplied by (head_dim^-0.5 unless the config says)
    float finalSoftcap = 0.0f; // logits → c·tanh(logits / c); 0: none
    std::vector<int> windows;  // per layer: the sliding window, 0: full attention
    std::vector<char> sliding; // per layer: a "sliding_attention" layer (Gemma 3: the local rope)
    RopeSpec rope;             // full-attention layers
    RopeSpec localRope;        // sliding layers (Gemma 3: rope_local_base_freq; others: = rope)
    std::vector<int> eosIds;
    int bosId = -1;
    bool ropeInterleaved =
        false; // GGUF's llama architecture: q/k rows reordered, pairs adjacent (llama_gguf.h)
};

// Reads config.json (and generation_config.json's eos/bos when present). Throws attnlens::Error naming the
// file and the field for what this engine refuses (MoE, an unknown rope type, attention softcapping, …).
LlamaConfig readLlamaConfig(const std::filesystem::path& dir);
// The config's widths (hidden, feed-forward, head, vocabulary sizes, head counts) at most kMaxModelWidth
// (core/io/model_limits.h), checked before anything is sized by them; throws attnlens::Error naming `where`.
void checkLlamaWidths(const LlamaConfig& c, const std::string& where);
bool isLlamaModelType(const std::string& modelType);
// θ of a rope (core/layers/rotary.h) for a head of rotaryDim dimensions.
std::vector<float> ropeInverseFrequencies(const RopeSpec& rope, int rotaryDim);

class GgufFile;

class LlamaModel : public TextModel {
public:
    // dir: a Hugging Face folder, or a .gguf file.
    static std::shared_ptr<const LlamaModel> load(const std::filesystem::path& dir,
                                                  const Callbacks& callbacks = {});
    // A GGUF file already opened (its metadata read once for the tokenizer and the model).
    static std::shared_ptr<const LlamaModel> load(const GgufFile& file, const Callbacks& callbacks = {});
    TextForward extend(std::span<const int> ids, TextCache& cache, bool logits, bool lastOnly,
                       const RunControls& run) const override;
    TextForward forward(std::span<const int> ids, bool logits = true,
                        const RunControls& run = {}) const override;
    TextEmbeddingParts embeddingParts(std::span<const int> ids) const override;
    const LlamaConfig& config() const { return m_config; }
    bool decoderOnly() const override { return true; }
    int layers() const override { return m_config.layers; }
    int heads() const override { return m_config.heads; }
    int kvHeads() const override { return m_config.kvHeads; }
    int slidingWindow(int layer) const override {
        return layer >= 0 && layer < m_config.layers ? m_config.windows[size_t(layer)] : 0;
    }
    int maxPositions() const override { return m_config.maxPositions; }
    int vocabSize() const override { return m_config.vocabSize; }
    bool hasLmHead() const override { return true; }
    int endOfTextId() const override { return m_config.eosIds.empty() ? -1 : m_config.eosIds.front(); }
    std::vector<int> endOfTextIds() const override { return m_config.eosIds; }
    RowMatrix readout(const RowMatrix& stream) const override;
    std::optional<LogitDirection> logitDirection(std::span<const float> finalRow, int token) const override;
    std::span<const TransformerBlock> blocks() const override { return m_layers; }

private:
    static std::shared_ptr<const LlamaModel> build(const LlamaConfig& c, const TensorFile& file,
                                                   const std::string& prefix,
                                                   const std::filesystem::path& source,
                                                   const Callbacks& callbacks);
    RowMatrix embed(std::span<const int> ids) const; // the token embeddings' rows (checked ids)

    LlamaConfig m_config;
    LinearWeights m_tokens; // [vocab, hidden]: the embedding table, and the tied LM head
    float m_embeddingScale = 1.0f;
    std::vector<TransformerBlock> m_layers;
    Norm m_finalNorm;
    LinearWeights m_head;
};

} // namespace attnlens
