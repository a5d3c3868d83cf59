#pragma once
// MarianModel: Hugging Face MarianMTModel inference (encoder, cached decoder step, teacher-forced
// decoder pass) with every attention head captured. Semantics: docs/model-semantics.md (Marian).
//
// Basic usage:
//   auto model = MarianModel::load(dir);                 // config.json (+ generation_config.json),
//                                                        // model.safetensors (F32 mmap'ed, F16/BF16)
//   MarianEncoderOutput enc = model->encode(sourceIds);  // enc.selfAttention [L][H][S][S]
//   MarianDecoderCache cache = model->newCache();
//   int token = model->config().decoderStartTokenId;
//   MarianStepOutput out = model->decodeStep(token, enc, cache);  // out.logits [V],
//                        // out.selfAttention [L][H][t+1], out.crossAttention [L][H][S]
//
// Thread-safety: a loaded model is immutable; encode()/decodeStep() may run concurrently on
// different caches. Weights stay views on the memory-mapped checkpoint (F32) for the model's life.

#include "core/contract/run_controls.h"
#include "core/layers/transformer_block.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace attnlens {

class WeightBinder;

enum class EarlyStopping { False, True, Never }; // HF's early_stopping: false / true / "never"

// Generation defaults (HF GenerationConfig): generation_config.json if present, else config.json.
struct MarianGenerationConfig {
    int numBeams = 1;
    float lengthPenalty = 1.0f;
    EarlyStopping earlyStopping = EarlyStopping::False;
    int maxLength = 20;                        // counts the start token
    std::optional<int> maxNewTokens;           // overrides maxLength when set (maxLength = 1 + it)
    std::vector<std::vector<int>> badWordsIds; // single-token entries are banned at every step
    std::optional<int> forcedEosTokenId;
    int decoderStartTokenId = 0;
    int eosTokenId = 0;
    std::optional<int> padTokenId;
};

struct MarianConfig {
    int64_t dModel = 1024;
    int encoderLayers = 12;
    int decoderLayers = 12;
    int encoderHeads = 16;
    int decoderHeads = 16;
    int64_t encoderFfn = 4096;
    int64_t decoderFfn = 4096;
    int64_t vocabSize = 58101;
    int64_t decoderVocabSize = 58101;
    int64_t maxPositions = 1024;
    bool scaleEmbedding = false;
    bool shareEmbeddings = true;
    Activation activation = Activation::Gelu;
    std::string activationName = "gelu";
    int eosTokenId = 0;
    int padTokenId = 58100;
    int decoderStartTokenId = 58100;
    float layerNormEps = 1e-5f;
    MarianGenerationConfig generation;

    // Reads dir/config.json and, if present, dir/generation_config.json. Missing keys take HF's
    // MarianConfig defaults; wrong types and impossible values throw attnlens::Error naming the key.
    static MarianConfig fromFolder(const std::filesystem::path& dir);
};

struct MarianEncoderOutput {
    int64_t length = 0;                 // S
    RowMatrix states;                   // [S, D]
    std::vector<RowMatrix> crossKeys;   // per decoder layer [S, D]
    std::vector<RowMatrix> crossValues; // per decoder layer [S, D]
    Tensor selfAttention;               // [L_enc, H, S, S] (empty when not captured)
    // With the attention: ‖v_j · W_O,hᵀ‖ of every source piece j (value-weighted maps,
    // analysis/value_weighting.h) as the encoder's self-attention [L_enc, H, S] and each decoder layer's
    // cross-attention [L_dec, H, S] see it.
    Tensor selfValueNorms, crossValueNorms;
};

// The decoder self-attention cache of one hypothesis (copyable; beam search copies parents').
struct MarianDecoderCache {
    std::vector<KvCache> layers;
    int64_t length() const { return layers.empty() ? 0 : layers.front().length; }
    void truncate(int64_t n) {
        for (auto& l : layers)
            l.truncate(n);
    }
    // Becomes a copy of `other`'s used rows, reusing this cache's buffers where they are large enough.
    void copyFrom(const MarianDecoderCache& other) {
        layers.resize(other.layers.size());
        for (size_t i = 0; i < layers.size(); ++i)
            layers[i].copyFrom(other.layers[i]);
    }
};

struct MarianStepOutput {
    std::vector<float> logits; // [V_dec], final_logits_bias included
    Tensor selfAttention;      // [L_dec, H, t+1]   (t = position of the input token)
    Tensor crossAttention;     // [L_dec, H, S]
    Tensor selfValueNorms; // [L_dec, H]: ‖v · W_O,hᵀ‖ of the key this step appended (the input token)
};

// The two terms of the input embedding before the first layer (x = tokens + positions), for display.
struct MarianEmbeddingParts {
    RowMatrix tokens;    // [n, D] embedding rows × embed scale (sqrt(d_model) when scale_embedding)
    RowMatrix positions; // [n, D] sinusoidal rows firstPosition … firstPosition + n - 1
};
enum class MarianSide { Encoder, Decoder };

// Heads switched off (ablation, transformers' layer_head_mask / cross_attn_layer_head_mask = 0): per layer,
// the heads of the encoder self-attention, the decoder self-attention and the cross-attention whose
// probabilities are multiplied by 0 (captured attention zero, context zero). Empty: the plain model, bit for
// bit.
struct MarianAblation {
    std::vector<std::vector<int>> encoder, decoder, cross; // [layer] → heads off (missing layers: none)
    bool any() const;
    // Adds one head; throws attnlens::Error (naming the kind, layer and head) outside the model's layers ×
    // heads.
    void add(AttentionKind kind, int layer, int head, const MarianConfig& config);
    std::span<const int> encoderOff(int layer) const;
    std::span<const int> decoderOff(int layer) const;
    std::span<const int> crossOff(int layer) const;
    // One kind's heads off as sorted (layer, head) pairs; setHeads() replaces that kind's (checked as add()).
    HeadList heads(AttentionKind kind) const;
    void setHeads(AttentionKind kind, const HeadList& heads, const MarianConfig& config);
    int count() const; // heads off, all kinds

private:
    std::vector<std::vector<int>>& perLayer(AttentionKind kind);
    const std::vector<std::vector<int>>& perLayer(AttentionKind kind) const;
};

struct MarianForcedOutput {
    Tensor logits;         // [T, V_dec]
    Tensor selfAttention;  // [L_dec, H, T, T] (causal: zeros above the diagonal)
    Tensor crossAttention; // [L_dec, H, T, S]
};

class MarianModel {
public:
    // Loads a Hugging Face Marian folder. Every missing or mis-shaped tensor is reported in one
    // attnlens::Error. Accepted embedding layouts: model.shared.weight (with or without duplicate
    // encoder/decoder embed_tokens / lm_head entries) or, when share_encoder_decoder_embeddings is
    // false, model.encoder.embed_tokens.weight + model.decoder.embed_tokens.weight (+ lm_head.weight,
    // else tied to the decoder embedding). final_logits_bias is optional (zeros). Position tables are
    // computed (sinusoidal), never read.
    static std::shared_ptr<const MarianModel> load(const std::filesystem::path& dir,
                                                   const Callbacks& callbacks = {});

    const MarianConfig& config() const { return m_config; }
    const std::filesystem::path& dir() const { return m_dir; }
    int64_t parameterCount() const { return m_parameterCount; }

    // ids: source model ids (</s> included). Throws attnlens::Error for an empty input, more than
    // max_position_embeddings tokens or an id outside the vocabulary.
    // trace: the encoder's residual stream at trace->rows kept layer by layer
    // (core/contract/residual_trace.h).
    MarianEncoderOutput encode(std::span<const int> ids, bool captureAttention = true,
                               const MarianAblation* ablation = nullptr,
                               ResidualTrace* trace = nullptr) const;

    // The token and position terms the encoder (or decoder) adds for `ids`; their sum is exactly
    // what the first layer receives. Throws like encode() for bad ids or positions.
    MarianEmbeddingParts embeddingParts(std::span<const int> ids, MarianSide side,
                                        int64_t firstPosition = 0) const;
    float embedScale() const { return m_embedScale; }

    MarianDecoderCache newCache() const;
    // One decoder step: `token` at position cache.length(); appends to the cache.
    MarianStepOutput decodeStep(int token, const MarianEncoderOutput& encoder, MarianDecoderCache& cache,
                                bool captureAttention = true, const MarianAblation* ablation = nullptr) const;
    // decodeStep() for several hypotheses at once (beam search): tokens[b] is fed to *caches[b]; all
    // caches must hold the same number of positions. Weights are read once for all B rows, which is
    // what makes beam search on a memory-bound CPU cost far less than B single steps.
    std::vector<MarianStepOutput> decodeSteps(std::span<const int> tokens, const MarianEncoderOutput& encoder,
                                              const std::vector<MarianDecoderCache*>& caches,
                                              bool captureAttention = true,
                                              const MarianAblation* ablation = nullptr) const;
    // What a decoding that produced `target` (generated ids, the final </s> kept) fed its decoder: the start
    // token decoding begins with (generation config), then every target id but the last. The input of
    // teacher-forced passes that must see the decoding's own rows.
    std::vector<int> forcedDecoderInput(std::span<const int> target) const;
    // Teacher-forced pass over decoderInput (start token first) in one go, with a causal mask. trace: the
    // decoder's residual stream at trace->rows kept layer by layer (core/contract/residual_trace.h).
    MarianForcedOutput decodeForced(std::span<const int> decoderInput, const MarianEncoderOutput& encoder,
                                    const MarianAblation* ablation = nullptr,
                                    ResidualTrace* trace = nullptr) const;
    // What the decoder does to its last layer's output to make logits: the LM head and final_logits_bias
    // (post-norm layers: no final norm), on stream rows [r, D] → [r, V_dec] (the logit lens's readout).
    RowMatrix readout(const RowMatrix& stream) const;

    // What one attention layer receives (analysis/neuron_view), from a plain teacher-forced pass: kind 0
    // encoder self-attention (queries = keys = the layer's input over `source`), 1 decoder self-attention
    // (causal, over decoderInput, start token first), 2 cross-attention (queries from the decoder, keys = the
    // encoder's output). Throws attnlens::Error for a kind or layer outside the model, or inputs
    // encode()/decodeForced() refuse. With `ablation`, the layers before run with those heads off (the inputs
    // are then the ablated model's).
    AttentionInputs attentionInputs(AttentionKind kind, int layer, std::span<const int> source,
                                    std::span<const int> decoderInput,
                                    const MarianAblation* ablation = nullptr) const;

    // Decoder self-attention keys/values of position `pos` in `cache`, per layer, as [L][2][D]
    // floats; restoreCacheRow() appends such a row (used to rebuild caches from a beam tree).
    std::vector<float> cacheRow(const MarianDecoderCache& cache, int64_t pos) const;
    void appendCacheRow(MarianDecoderCache& cache, std::span<const float> row) const;

    MarianModel() = default; // use load()

private:
    // load()'s steps: the tied embedding group (every accepted layout), then the layers.
    void bindEmbeddings(WeightBinder& bind, const std::filesystem::path& dir);
    void bindLayers(WeightBinder& bind);
    void packWeights(); // every linear layer and the output projection (LinearWeights::pack)
    RowMatrix embed(std::span<const int> ids, const Tensor& table, int64_t firstPosition, int64_t vocab,
                    const char* what) const;
    void checkDecoderPosition(int64_t pos) const;
    // out.selfValueNorms from the key each layer of `cache` appended last.
    void appendedKeyNorms(MarianStepOutput& out, const MarianDecoderCache& cache) const;
    // Decoder layer l's run over `cache` (capture views, its heads off, the encoder's keys and values).
    BlockRun decoderRun(int l, KvCache& cache, const MarianEncoderOutput& encoder, Tensor* self,
                        Tensor* cross, const MarianAblation* ablation) const;

    std::filesystem::path m_dir;
    MarianConfig m_config;
    float m_embedScale = 1.0f;
    Tensor m_encoderEmbed;                         // [V, D]
    Tensor m_decoderEmbed;                         // [V_dec, D]
    Tensor m_lmHead;                               // [V_dec, D]
    Tensor m_finalLogitsBias;                      // [V_dec]
    LinearWeights m_outputProjection;              // m_lmHead + m_finalLogitsBias, packed
    Tensor m_positions;                            // [P, D] sinusoidal, computed
    std::vector<TransformerBlock> m_encoderLayers; // post-norm, bidirectional
    std::vector<TransformerBlock> m_decoderLayers; // post-norm, causal, with cross-attention
    int64_t m_parameterCount = 0;
};

} // namespace attnlens
