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
//   auto gpt = Gpt2Model::load(dir);    TextCache cache = gpt->newCache();
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
#include "core/layers/transformer_block.h"
#include "core/ops/nn.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attnlens {

struct TextForward {
    Tensor attentions; // [L, H, n, m]: n new tokens over m = all tokens so far; empty when kept on demand
    // The attention kept on demand (core/contract/attention_store.h) when capturing it would exceed the
    // run's captureBudget; else null.
    std::shared_ptr<const AttentionStore> onDemand;
    // Either way: the captured tensor wrapped, or onDemand; null when nothing was captured.
    std::shared_ptr<const AttentionStore> attentionStore() const;
    RowMatrix hidden; // [n, D] the last layer's output (after GPT-2's ln_f)
    RowMatrix logits; // [n, V] with an LM head (and when asked for); else empty
    Tensor pooled;    // [D] BertModel's pooler (tanh(dense(CLS))); else empty
};

// What the first layer receives, in parts (the Text page's Embeddings tab): the token embeddings of the ids,
// the learned position embeddings (BERT: plus token type 0's), and the input to layer 0 — their sum (BERT:
// after the embedding LayerNorm). Each [n, D].
struct TextEmbeddingParts {
    RowMatrix tokens, positions, input;
};

// One token's logit as a linear function of the stream x entering the final norm, the norm's scale frozen at
// one final row (direct logit attribution, issue 42):   logit = direction · x + constant
//   LayerNorm  direction = centred(u ⊙ γ) / σ,  constant = u · β + b     (σ = √(var(final) + eps))
//   RMSNorm    direction = u ⊙ w / rms,         constant = b             (w: 1 + w where stored so, Gemma)
// with u the token's unembedding row and b its head bias. Centring is folded into the direction
// ((u⊙γ − mean(u⊙γ)) · x = (u⊙γ) · (x − mean(x))), so every part written into the stream contributes
// direction · part, and the parts of the final row sum to the logit (before a soft-cap, which is not linear).
struct LogitDirection {
    std::vector<float> direction; // [D]
    float constant = 0.0f;
    float softcap = 0.0f; // c where the model's logits are c·tanh(logit / c); 0: none
};

// Keys and values of every layer for the tokens seen so far (decoder-only models).
struct TextCache {
    std::vector<KvCache> layers;
    int64_t length() const { return layers.empty() ? 0 : layers.front().length; }
};

// The contract every text family implements (issue 37): a forward pass with the contract's RunControls and,
// for decoder-only models, the same through a KV cache. TextFolder, the lenses (analysis/text_lenses), the
// generation loop (text_generation), the Text page and the CLI use only this, so a new family (a Llama-style
// decoder) is a class deriving from it, a row in text_folder.cpp's table and one in the registry.
class TextModel : public std::enable_shared_from_this<TextModel> {
public:
    virtual ~TextModel() = default;
    // ids as the family's tokenizer gives them; at most maxPositions(). logits only with an LM head.
    virtual TextForward forward(std::span<const int> ids, bool logits = true,
                                const RunControls& run = {}) const = 0;
    virtual bool decoderOnly() const = 0;
    // The embeddings of `ids` at positions 0 … n-1 (throws as forward does for bad ids or too many).
    virtual TextEmbeddingParts embeddingParts(std::span<const int> ids) const = 0;
    // Decoder-only: the new tokens after those in `cache` (which grows by them): their attention rows over
    // everything so far and, when asked for, their logits (lastOnly: the last token's only, [1, V]). Throws
    // past the model's positions; encoders throw ("only decoder-only models generate").
    virtual TextForward extend(std::span<const int> ids, TextCache& cache, bool logits, bool lastOnly,
                               const RunControls& run) const;
    TextCache newCache() const { return TextCache{std::vector<KvCache>(static_cast<size_t>(layers()))}; }
    virtual int layers() const = 0;
    virtual int heads() const = 0;
    // Key/value heads (grouped-query attention: query head h reads kv head h / (heads / kvHeads)).
    virtual int kvHeads() const { return heads(); }
    // Layer l's sliding window (a query sees its `window` latest keys), 0: every key before it.
    virtual int slidingWindow(int layer) const {
        (void)layer;
        return 0;
    }
    virtual int maxPositions() const = 0;
    virtual int vocabSize() const = 0;
    virtual bool hasLmHead() const = 0;
    virtual int endOfTextId() const { return -1; } // from the config (eos_token_id); -1: none
    // Every id that ends a generation (generation_config.json may list several; Llama 3 chat: two).
    virtual std::vector<int> endOfTextIds() const {
        return endOfTextId() >= 0 ? std::vector<int>{endOfTextId()} : std::vector<int>{};
    }
    const std::filesystem::path& dir() const { return m_dir; }

    // The lenses' readout (issue 42): what the model does to its last layer's output to make logits — the
    // final norm and the LM head (BERT: the MLM head; Gemma: the soft-cap too) — applied to residual-stream
    // rows [r, D] → logits [r, V]. The last layer's stream gives the model's own logits, bit for bit.
    // Throws (attnlens::Error) without an LM head.
    virtual RowMatrix readout(const RowMatrix& stream) const;
    // `token`'s LogitDirection at a final stream row [D] (before the final norm); nullopt where the readout
    // is not one norm and a linear map (BERT's MLM transform).
    virtual std::optional<LogitDirection> logitDirection(std::span<const float> finalRow, int token) const;
    // The blocks in execution order (the lenses read their weights); empty for a family without them.
    virtual std::span<const TransformerBlock> blocks() const { return {}; }

protected:
    // How a pass of n new tokens over m keys keeps its attention: with run.captureAttention, a tensor
    // [L, H, n, m] in out.attentions when it fits run.captureBudget (returns nullptr), else on demand — the
    // returned recall is for runBlocks, and keepOnDemand() then hands it to out.onDemand.
    std::vector<LayerRecall>* prepareCapture(const RunControls& run, int64_t n, int64_t m, TextForward& out,
                                             std::vector<LayerRecall>& recall) const;
    void keepOnDemand(std::vector<LayerRecall>& recall, TextForward& out) const;

    std::filesystem::path m_dir;
};

struct BertConfig {
    int hiddenSize = 0, layers = 0, heads = 0, intermediateSize = 0, maxPositions = 0, typeVocabSize = 0,
        vocabSize = 0;
    float layerNormEps = 1e-12f;
    Activation activation = Activation::Gelu;
};

class BertModel : public TextModel {
public:
    // Throws attnlens::Error naming the folder and what is wrong (config, missing or mis-shaped tensors).
    static std::shared_ptr<const BertModel> load(const std::filesystem::path& dir,
                                                 const Callbacks& callbacks = {});
    // ids: [CLS] … [SEP] as the tokenizer gives them; at most maxPositions. logits only with an MLM head.
    TextForward forward(std::span<const int> ids, bool logits = true,
                        const RunControls& run = {}) const override;
    const BertConfig& config() const { return m_config; }
    bool decoderOnly() const override { return false; }
    TextEmbeddingParts embeddingParts(std::span<const int> ids) const override;
    int layers() const override { return m_config.layers; }
    int heads() const override { return m_config.heads; }
    int maxPositions() const override { return m_config.maxPositions; }
    int vocabSize() const override { return m_config.vocabSize; }
    bool hasLmHead() const override { return !m_transform.weight.empty(); }
    RowMatrix readout(const RowMatrix& stream) const override;
    std::span<const TransformerBlock> blocks() const override { return m_layers; }

private:
    BertConfig m_config;
    Tensor m_words, m_positions, m_types;
    LayerNormWeights m_embeddingNorm;
    std::vector<TransformerBlock> m_layers; // post-norm
    LinearWeights m_pooler;                 // empty without a pooler
    LinearWeights m_transform;              // MLM head; empty without one
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

class TensorFile;

class Gpt2Model : public TextModel {
public:
    // dir: a Hugging Face folder, or a GGUF file of architecture gpt2 (core/models/gpt2_gguf.h).
    static std::shared_ptr<const Gpt2Model> load(const std::filesystem::path& dir,
                                                 const Callbacks& callbacks = {});
    // The weights of `file` under transformers' names ("" prefix or "transformer."); conv1d: c_attn, c_proj
    // and c_fc stored [in, out] as transformers' Conv1D keeps them (GGUF files store them [out, in]).
    static std::shared_ptr<const Gpt2Model> build(const Gpt2Config& c, const TensorFile& file,
                                                  const std::string& prefix, bool conv1d,
                                                  const std::filesystem::path& dir,
                                                  const Callbacks& callbacks);
    // run.probe: the probe's keys are the rows of this call only, so probe a pass from an empty cache.
    TextForward extend(std::span<const int> ids, TextCache& cache, bool logits, bool lastOnly,
                       const RunControls& run) const override;
    TextForward extend(std::span<const int> ids, TextCache& cache, bool logits = true, bool lastOnly = false,
                       bool captureAttention = true) const;
    TextForward forward(std::span<const int> ids, bool logits = true,
                        const RunControls& run = {}) const override;
    const Gpt2Config& config() const { return m_config; }
    bool decoderOnly() const override { return true; }
    TextEmbeddingParts embeddingParts(std::span<const int> ids) const override;
    int layers() const override { return m_config.layers; }
    int heads() const override { return m_config.heads; }
    int maxPositions() const override { return m_config.positions; }
    int vocabSize() const override { return m_config.vocabSize; }
    bool hasLmHead() const override { return true; } // tied to the token embeddings
    int endOfTextId() const override { return m_config.eosTokenId; }
    RowMatrix readout(const RowMatrix& stream) const override;
    std::optional<LogitDirection> logitDirection(std::span<const float> finalRow, int token) const override;
    std::span<const TransformerBlock> blocks() const override { return m_layers; }

private:
    Gpt2Config m_config;
    Tensor m_tokens, m_positions;
    std::vector<TransformerBlock> m_layers; // pre-norm, causal
    LayerNormWeights m_finalNorm;
    LinearWeights m_head; // the token embeddings, packed for [n, D] × [D, V]
};

} // namespace attnlens
