#pragma once
// ClipTextModel — model_type "clip_text_model": transformers' CLIPTextModel (v4.33 semantics), the text
// encoder of Stable Diffusion pipelines (text_encoder/). Token plus learned position embeddings, pre-LN
// layers (layer_norm1 → self-attention with the query scaled by head_dim^−½ before the scores, layer_norm2 →
// fc1, act, fc2), a causal mask although it is an encoder, final_layer_norm: the last hidden state [n, D] is
// what the U-Net's cross-attention reads. hidden_act quick_gelu (SD 1.x) or gelu (SD 2.x's OpenCLIP tower);
// weights stay in their stored dtype (fp16 / bf16 as 16-bit matrices). The pipeline feeds it 77 ids
// (ClipTokenizer:: encodePadded) without a padding mask, so padded positions attend causally like the others.
//
//   auto clip = ClipTextModel::load(dir);   TextForward f = clip->forward(ids);   // f.hidden [n, D]
//
// Thread-safety: immutable after load(); forward() may run on any thread.

#include "core/models/text_models.h"

namespace attnlens {

class JsonConfig;
class WeightBinder;

struct ClipTextConfig {
    int hiddenSize = 0, layers = 0, heads = 0, intermediateSize = 0, maxPositions = 0, vocabSize = 0;
    float layerNormEps = 1e-5f;
    Activation activation = Activation::QuickGelu;
    int eosTokenId = -1;
    bool causal = true;     // CLIP's text tower is causal; SigLIP's is not
    int projectionSize = 0; // SigLIP: the width of text_model.head (projection_size, default hidden_size)
    // A CLIPModel's text_config: CLIPTextConfig's defaults where a key is absent (hidden 512, 12 layers, 8
    // heads, MLP 2048, 77 positions, vocabulary 49 408, eos 49 407). Throws attnlens::Error naming `path`.
    static ClipTextConfig fromNested(const JsonConfig& json);
    // A SiglipModel's text_config: SiglipTextConfig's defaults (hidden 768, 12 layers, 12 heads, MLP 3072,
    // 64 positions, vocabulary 32 000, gelu_pytorch_tanh, eps 1e-6), not causal.
    static ClipTextConfig fromSiglipNested(const JsonConfig& json);
};

// The token whose state CLIPTextTransformer pools: the first eos_token_id, or — configs from before
// transformers#24773 say eos_token_id 2 — the largest id (argmax, first of equals); 0 when there is no eos.
int clipPooledIndex(std::span<const int> ids, int eosTokenId);

// One CLIPEncoderLayer (text or vision tower) under `prefix`: layer_norm1, self_attn.{q,k,v,out}_proj with
// biases (the query scaled by head_dim^−½), layer_norm2, mlp.fc1 / fc2; weights in their stored format.
struct ClipLayerShape {
    int64_t hidden = 0, inner = 0;
    int heads = 0;
    float eps = 1e-5f;
    Activation activation = Activation::QuickGelu;
    bool causal = false;
};
TransformerBlock bindClipLayer(WeightBinder& w, const ClipLayerShape& shape, const std::string& prefix);

class ClipTextModel : public TextModel {
public:
    // Throws attnlens::Error naming the folder and what is wrong (config, missing or mis-shaped tensors).
    static std::shared_ptr<const ClipTextModel> load(const std::filesystem::path& dir,
                                                     const Callbacks& callbacks = {});
    // The text tower of a CLIPModel folder (weights under "text_model."), configured by its text_config.
    static std::shared_ptr<const ClipTextModel>
    loadTower(const std::filesystem::path& dir, const ClipTextConfig& c, const Callbacks& callbacks = {});
    // out.hidden: the last hidden state after final_layer_norm; no logits (there is no LM head).
    TextForward forward(std::span<const int> ids, bool logits = false,
                        const RunControls& run = {}) const override;
    TextEmbeddingParts embeddingParts(std::span<const int> ids) const override;
    const ClipTextConfig& config() const { return m_config; }
    bool decoderOnly() const override { return false; }
    int layers() const override { return m_config.layers; }
    int heads() const override { return m_config.heads; }
    int maxPositions() const override { return m_config.maxPositions; }
    int vocabSize() const override { return m_config.vocabSize; }
    bool hasLmHead() const override { return false; }

private:
    ClipTextConfig m_config;
    LinearWeights m_tokens; // [vocab, D], in its stored format
    Tensor m_positions;     // [positions, D]
    std::vector<TransformerBlock> m_layers;
    Norm m_finalNorm;
};

} // namespace attnlens
