#pragma once
// Text models from untouched Hugging Face folders (transformers v4.33 semantics), every attention through
// core/layers/MultiHeadAttention:
//
// BertModel — model_type "bert": BertModel folders (no prefix, pooler) and BertForMaskedLM ("bert." prefix,
//   cls.predictions.transform.*, decoder tied to the word embeddings with its own bias). Post-LN layers,
//   absolute positions, token type 0, hidden_act gelu / gelu_new / relu, layer_norm_eps; LayerNorm tensors
//   named weight/bias or, as in the original BERT checkpoints, gamma/beta.
// Gpt2Model — model_type "gpt2": GPT2Model / GPT2LMHeadModel ("transformer." prefix or none). Pre-LN, causal
//   mask, Conv1D weights stored [in, out], fused c_attn, activation_function, tied LM head,
//   layer_norm_epsilon, scale_attn_weights, scale_attn_by_inverse_layer_idx and reorder_and_upcast_attn
//   (float32 throughout, so the latter changes nothing); add_cross_attention is refused naming the field.
//   Generation reuses a KV cache.
//
//   auto bert = BertModel::load(dir);   TextForward f = bert->forward(ids);   // f.attentions [L, H, T, T]
//   auto gpt = Gpt2Model::load(dir);    Gpt2Cache cache = gpt->newCache();
//   TextForward p = gpt->extend(promptIds, cache);  p = gpt->extend({next}, cache);  // attention rows of the
//   new ids
//
// Both take the contract's RunControls (core/contract/run_controls.h): capture on/off, heads switched off
// (transformers' head_mask semantics: probabilities × 0 after the softmax, the captured rows all zero), a
// probe of one layer's attention inputs (analysis/neuron_view: BERT's layer input; GPT-2's ln_1 output,
// causal) and cancel between layers.
//
// Thread-safety: immutable after load(); forward()/extend() may run on any thread (each cache on one at a
// time).

#include "core/contract/run_controls.h"
#include "core/layers/multi_head_attention.h"
#include "core/ops/nn.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attnlens {

struct TextForward {
    Tensor attentions; // [L, H, n, m]: n new tokens over m = all tokens so far
    RowMatrix hidden;  // [n, D] the last layer's output (after GPT-2's ln_f)
    RowMatrix logits;  // [n, V] with an LM head (and when asked for); else empty
    Tensor pooled;     // [D] BertModel's pooler (tanh(dense(CLS))); else empty
};

struct BertConfig {
    int hiddenSize = 0, layers = 0, heads = 0, intermediateSize = 0, maxPositions = 0, typeVocabSize = 0,
        vocabSize = 0;
    float layerNormEps = 1e-12f;
    Activation activation = Activation::Gelu;
};

class BertModel {
public:
    // Throws attnlens::Error naming the folder and what is wrong (config, missing or mis-shaped tensors).
    static std::shared_ptr<const BertModel> load(const std::filesystem::path& dir,
                                                 const Callbacks& callbacks = {});
    // ids: [CLS] … [SEP] as the tokenizer gives them; at most maxPositions. logits only with an MLM head.
    TextForward forward(std::span<const int> ids, bool logits = true, const RunControls& run = {}) const;
    const BertConfig& config() const { return m_config; }
    bool hasLmHead() const { return !m_transform.weight.empty(); }
    const std::filesystem::path& dir() const { return m_dir; }

private:
    struct Layer {
        MultiHeadAttention attention;
        LayerNormWeights attentionNorm, outputNorm;
        LinearWeights intermediate, output;
    };
    std::filesystem::path m_dir;
    BertConfig m_config;
    Tensor m_words, m_positions, m_types;
    LayerNormWeights m_embeddingNorm;
    std::vector<Layer> m_layers;
    LinearWeights m_pooler;    // empty without a pooler
    LinearWeights m_transform; // MLM head; empty without one
    LayerNormWeights m_transformNorm;
    LinearWeights m_decoder; // the word embeddings and cls.predictions.bias
};

struct Gpt2Config {
    int embd = 0, layers = 0, heads = 0, inner = 0, positions = 0, vocabSize = 0;
    float layerNormEps = 1e-5f;
    Activation activation = Activation::GeluTanh;
    bool scaleAttnWeights = true, scaleByInverseLayerIdx = false;
    int eosTokenId = -1;
};

// Keys and values of every layer for the tokens seen so far.
struct Gpt2Cache {
    std::vector<KvCache> layers;
    int64_t length() const { return layers.empty() ? 0 : layers.front().length; }
};

class Gpt2Model {
public:
    static std::shared_ptr<const Gpt2Model> load(const std::filesystem::path& dir,
                                                 const Callbacks& callbacks = {});
    Gpt2Cache newCache() const {
        return Gpt2Cache{std::vector<KvCache>(static_cast<size_t>(m_config.layers))};
    }
    // The new tokens after those in `cache` (which grows by them): their attention rows over everything so
    // far and, when asked for, their logits (lastOnly: the last token's only, [1, V]). Throws past the
    // model's positions.
    // run.probe: the probe's keys are the rows of this call only, so probe a pass from an empty cache.
    TextForward extend(std::span<const int> ids, Gpt2Cache& cache, bool logits, bool lastOnly,
                       const RunControls& run) const;
    TextForward extend(std::span<const int> ids, Gpt2Cache& cache, bool logits = true, bool lastOnly = false,
                       bool captureAttention = true) const;
    TextForward forward(std::span<const int> ids, bool logits = true, const RunControls& run = {}) const;
    const Gpt2Config& config() const { return m_config; }
    bool hasLmHead() const { return true; } // tied to the token embeddings
    const std::filesystem::path& dir() const { return m_dir; }

private:
    struct Layer {
        LayerNormWeights ln1, ln2;
        MultiHeadAttention attention;
        LinearWeights fc, proj;
    };
    std::filesystem::path m_dir;
    Gpt2Config m_config;
    Tensor m_tokens, m_positions;
    std::vector<Layer> m_layers;
    LayerNormWeights m_finalNorm;
    LinearWeights m_head; // the token embeddings, packed for [n, D] × [D, V]
};

} // namespace attnlens
