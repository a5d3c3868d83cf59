#pragma once
// UNet2DModel: diffusers' UNet2DModel and UNet2DConditionModel (v0.25 semantics; docs/diffusion.md) on CPU,
// float32, with the attention weights of every attention layer captured on request. A text-conditioned
// U-Net (Stable Diffusion's) runs a Transformer2DModel where UNet2DModel has a spatial attention: each of
// its BasicTransformerBlocks holds a self-attention over the pixels (attn1) and a cross-attention from the
// pixels to the text encoder's states (attn2), both attention layers here, in execution order.
//
// Basic usage:
//   auto unet = UNet2DModel::load(dir);                 // a bare UNet folder or a pipeline's unet/
//   Tensor x = ...;                                     // [C, H, W] noisy sample in model space
//   UNetOutput out = unet->forward(x, 500, std::nullopt, {.captureAttention = true});
//   out.noisePred                                       // [C_out, H, W]
//   out.attentions[i].name, .weights                    // "mid_block.attentions.0", [heads, N, N]
//   UNetConditioning text; text.encoderHiddenStates = e; // [77, cross_attention_dim] for
//   UNet2DConditionModel
//
// Activations are channel-major FeatureMaps ([channels, h·w], ops/conv.h); a token of an attention
// layer is a pixel of its level, token = y·w + x. Every spatial attention runs through
// layers/MultiHeadAttention (scores scaled like diffusers: (q·kᵀ)·head_dim^-0.5).
// A loaded model is immutable: forward() is const and may run on several threads at once.

#include "core/contract/run_controls.h"
#include "core/io/tensor_file.h"
#include "core/layers/multi_head_attention.h"
#include "core/models/unet_config.h"
#include "core/ops/conv.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnlens {

// Where an attention layer sits on the U.
enum class UNetPath { Contracting, Bottleneck, Expansive };
const char* unetPathName(UNetPath path); // "contracting", "bottleneck", "expansive"

// One attention layer as it runs on an input of a given size (no weights).
struct UNetAttentionInfo {
    std::string name; // diffusers module path, e.g. "down_blocks.1.attentions.0" or, in a text-conditioned
                      // U-Net, "down_blocks.0.attentions.0.transformer_blocks.0.attn2"
    UNetPath path = UNetPath::Contracting;
    int level = 0; // resolution level: 0 = full size, each contracting block below halves it
    int heads = 1;
    int height = 0, width = 0; // the level's spatial size; tokens = height · width
    bool cross = false;        // cross-attention: the keys are the text encoder's states, not the pixels
    int textTokens = 0;        // cross-attention's keys (77 for Stable Diffusion pipelines)

    int64_t tokens() const { return static_cast<int64_t>(height) * width; }
    int64_t keys() const { return cross ? textTokens : tokens(); }
};

struct UNetAttentionMap {
    UNetAttentionInfo info;
    Tensor weights; // [heads, tokens, keys()], rows are post-softmax probabilities
    // [heads, keys()]: ‖v_j · W_O,hᵀ‖, the length of what key j sends through head h (value-weighted maps,
    // core/analysis/value_weighting.h), kept with the weights.
    Tensor valueNorms;
};

// The contract's run controls (capture; heads off as for ViT and Marian — (attention layer in execution
// order, head), numbered from 0, the head's probabilities × 0: diffusers has no head_mask, these are
// transformers' semantics; the neuron view's probe of attention layer probeLayer: group-normed pixels,
// queries and keys alike) and the U-Net's own limit.
struct UNetRunOptions : RunControls {
    // Refuse a run whose captured attention would exceed this many bytes (a 64×64 attention level
    // alone is 4096² floats per head = 64 MiB).
    int64_t maxCaptureBytes = int64_t{4} << 30;
    // With captureAttention: whether self-attention layers are captured too (false: cross-attention only,
    // what a text-to-image run keeps per step; at 512×512 one self-attention layer of SD 1.5 is 512 MiB).
    bool captureSelf = true;
    // >= 0: only this attention layer (execution order) is captured, self or cross (a self-attention map
    // asked for on demand).
    int captureLayer = -1;
};

// What a U-Net is conditioned on besides the timestep: the class (class-conditional models; required iff the
// model has a class embedding) or the text encoder's hidden states (UNet2DConditionModel; required iff the
// model is text-conditioned).
struct UNetConditioning {
    std::optional<int> classLabel;
    Tensor encoderHiddenStates; // [text tokens, cross_attention_dim]
    UNetConditioning() = default;
    UNetConditioning(std::nullopt_t) {}
    UNetConditioning(std::optional<int> label) : classLabel(label) {}
    UNetConditioning(int label) : classLabel(label) {}
};

struct UNetOutput {
    Tensor noisePred;                         // [out_channels, H, W]
    std::vector<UNetAttentionMap> attentions; // execution order; empty when not captured
};

class UNet2DModel {
public:
    // dir: a folder with config.json ("_class_name": "UNet2DModel") and diffusion_pytorch_model.safetensors.
    // Every missing tensor and every shape mismatch is reported in one attnlens::Error.
    static std::shared_ptr<const UNet2DModel> load(const std::filesystem::path& dir);

    const UNet2DConfig& config() const { return m_config; }
    int64_t parameterCount() const { return m_parameters; }

    // The attention layers, in execution order, for an input of height × width (cross-attention layers over
    // textTokens keys).
    std::vector<UNetAttentionInfo> attentionLayers(int height, int width, int textTokens = 77) const;
    // Bytes every attention layer's captured weights take for an input of height × width.
    int64_t captureBytes(int height, int width, int textTokens = 77, bool withSelf = true,
                         int onlyLayer = -1) const;
    bool textConditioned() const { return m_config.textConditioned; }
    // Gives back the resident pages of the weight file's mapping (the float32 weights used as they are
    // stored: SD 1.5's 1.1 GB of linear layers); the next forward reads them from the page cache again. A
    // text-to-image run calls it before the VAE decodes, where its memory peaks.
    void releaseFilePages() const { m_file.releasePages(); }
    // Throws attnlens::Error if a [channels, height, width] sample cannot be run (channels, size).
    void checkSample(const Shape& shape) const;
    // Throws attnlens::Error if the encoder states cannot condition this U-Net (shape, width, values, or
    // states given to a U-Net without cross-attention).
    void checkText(const UNetConditioning& conditioning) const { (void)textStates(conditioning); }

    // One forward pass. sample [in_channels, H, W], H and W divisible by config().sizeMultiple(). Cancel is
    // polled between blocks.
    UNetOutput forward(const Tensor& sample, float timestep, const UNetConditioning& conditioning,
                       const UNetRunOptions& options = {}, const Callbacks* callbacks = nullptr) const;

    // Implementation types (public so that the .cpp's free helpers can use them).
    using Conv = ConvLayer; // packed at load: Winograd for 3×3 convolutions at large levels
    struct Norm {
        Tensor weight, bias;
        int groups = 1;
        float eps = 1e-5f;
    };
    struct Resnet {
        Norm norm1, norm2;
        Conv conv1, conv2, shortcut; // shortcut.weight empty when in == out channels
        LinearWeights timeProj;
        float outputScale = 1.0f;
    };
    struct Attention {
        UNetAttentionInfo info; // level, name, path, heads (sizes filled per run)
        Norm norm;
        MultiHeadAttention mha;
        float rescale = 1.0f;
    };
    struct TransformerLayer { // BasicTransformerBlock: pre-LN self-attention, cross-attention, GEGLU
        LayerNormWeights norm1, norm2, norm3;
        MultiHeadAttention self, cross;
        UNetAttentionInfo selfInfo, crossInfo;
        LinearWeights geglu, ffOut; // ff.net.0.proj [2·inner, C], ff.net.2 [C, inner]
    };
    struct Transformer { // Transformer2DModel: GroupNorm, proj_in, layers, proj_out, + residual
        Norm norm;
        LinearWeights projIn, projOut; // 1×1 convolutions bound as [out, in] matrices
        std::vector<TransformerLayer> layers;
    };
    struct Block {
        std::vector<Resnet> resnets;
        std::vector<Attention> attentions;     // empty, or one per resnet
        std::vector<Transformer> transformers; // text-conditioned U-Nets: empty, or one per resnet
        Conv resample;                         // downsampler / upsampler conv (weight empty when none)
    };

private:
    UNet2DModel() = default;
    static FeatureMap conv(const Conv& c, const FeatureMap& x, const ConvGeometry& geometry) {
        return applyConv(c, x, geometry);
    }
    static FeatureMap conv3x3(const Conv& c, const FeatureMap& x) {
        return conv(c, x, ConvGeometry::same(3));
    }
    FeatureMap runResnet(const Resnet& r, const FeatureMap& x, const RowMatrix& temb) const;
    struct AttentionRun; // per-forward state of the attention layers (capture, ablation, probe, index)
    FeatureMap runAttention(const Attention& a, const FeatureMap& x, AttentionRun& run) const;
    // unet_transformer.cpp
    FeatureMap runTransformer(const Transformer& t, const FeatureMap& x, const RowMatrix& text,
                              AttentionRun& run) const;
    RowMatrix runAttentionLayer(const MultiHeadAttention& mha, const UNetAttentionInfo& info,
                                const RowMatrix& queries, const RowMatrix& keys, int height, int width,
                                AttentionRun& run) const;
    // The attention after resnet j of a block (spatial or transformer), or h itself when it has none.
    FeatureMap attendBlock(const Block& block, size_t j, FeatureMap h, const RowMatrix& text,
                           AttentionRun& run) const;
    // The encoder states as a [tokens, cross_attention_dim] matrix; throws when they do not fit the model.
    RowMatrix textStates(const UNetConditioning& conditioning) const;
    RowMatrix timeEmbedding(float timestep, const UNetConditioning& conditioning) const;

    UNet2DConfig m_config;
    TensorFile m_file; // the weights' file (views into its mapping)
    Conv m_convIn, m_convOut;
    Norm m_normOut;
    LinearWeights m_time1, m_time2;
    Tensor m_classEmbedding; // [num_class_embeds, time_embed_dim] or empty
    std::vector<Block> m_down, m_up;
    Resnet m_midResnet0, m_midResnet1;
    std::optional<Attention> m_midAttention;
    std::optional<Transformer> m_midTransformer;
    bool m_hasMid = true; // UNet2DConditionModel's mid_block_type may be null
    int64_t m_parameters = 0;
};

// Sinusoidal timestep embedding exactly as diffusers' get_timestep_embedding (float32 arithmetic):
// [dim] for one timestep.
std::vector<float> timestepEmbedding(float timestep, int dim, bool flipSinToCos, float freqShift);

} // namespace attnlens
