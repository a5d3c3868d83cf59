#pragma once
// UNet2DConfig: the config.json of a diffusers UNet2DModel or UNet2DConditionModel (v0.25 semantics and
// defaults), parsed with every unsupported value refused by name — never a silent wrong result.
//
// UNet2DModel: block types DownBlock2D / AttnDownBlock2D / UpBlock2D / AttnUpBlock2D, the
// UNetMidBlock2D with or without attention, time_embedding_type "positional", act_fn silu/swish,
// resnet_time_scale_shift default / scale_shift, downsample_type / upsample_type "conv", an optional
// class embedding table (num_class_embeds, class_embed_type null).
// UNet2DConditionModel (Stable Diffusion 1.x / 2.x and their distillations): DownBlock2D /
// CrossAttnDownBlock2D / UpBlock2D / CrossAttnUpBlock2D, mid UNetMidBlock2DCrossAttn or none, a
// Transformer2DModel per attention (proj_in/out as 1×1 conv or Linear), attention_head_dim read as the
// NUMBER of heads (diffusers' num_attention_heads = attention_head_dim), one cross_attention_dim;
// SDXL's added embeddings, class embeddings, dual / cross-only attention are refused by name.

#include "core/io/json_file.h"

#include <optional>
#include <string>
#include <vector>

namespace attnlens {

struct UNet2DConfig {
    int sampleSize = 0; // 0 when config.json has none (any size divisible by 2^(levels-1) runs)
    int inChannels = 3;
    int outChannels = 3;
    bool centerInputSample = false;
    bool flipSinToCos = true;
    float freqShift = 0;
    std::vector<std::string> downBlockTypes{"DownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D",
                                            "AttnDownBlock2D"};
    std::vector<std::string> upBlockTypes{"AttnUpBlock2D", "AttnUpBlock2D", "AttnUpBlock2D", "UpBlock2D"};
    std::vector<int> blockOutChannels{224, 448, 672, 896};
    int layersPerBlock = 2;
    float midBlockScaleFactor = 1.0f;
    int downsamplePadding = 1;
    std::optional<int> attentionHeadDim = 8; // channels per head; nullopt: one head per layer
    int normNumGroups = 32;
    std::optional<int> attnNormNumGroups; // the bottleneck attention's groups (default: normNumGroups;
                                          // with scale_shift: none, its attention has no norm)
    float normEps = 1e-5f;
    bool scaleShift = false;             // resnet_time_scale_shift == "scale_shift"
    bool addAttention = true;            // the bottleneck's attention layer
    int numClassEmbeds = 0;              // 0: unconditional
    std::vector<std::string> classNames; // id2label (Attention Lens' addition), when present

    // UNet2DConditionModel only (textConditioned; the spatial-attention fields above are then unused).
    bool textConditioned = false;
    int crossAttentionDim = 0;
    std::vector<int> layersPerLevel;    // ResNets per down block (layers_per_block as int or list)
    std::vector<int> headsPerLevel;     // attention heads of each down block's transformers
    std::vector<int> transformerLayers; // BasicTransformerBlocks per Transformer2DModel, per down block
    std::string midBlockType;           // "UNetMidBlock2DCrossAttn" or "" (none)
    bool useLinearProjection = false;

    int levels() const { return static_cast<int>(blockOutChannels.size()); }
    int timeEmbedDim() const { return blockOutChannels.front() * 4; }
    // Heads of an attention layer over `channels` channels (diffusers: channels // head_dim).
    int headsFor(int channels) const { return attentionHeadDim ? channels / *attentionHeadDim : 1; }
    int headDimFor(int channels) const { return attentionHeadDim ? *attentionHeadDim : channels; }
    // Input sizes must be divisible by this (each contracting level halves the resolution).
    int sizeMultiple() const { return 1 << (levels() - 1); }

    // Throws attnlens::Error naming config.json and the field for missing, ill-typed or unsupported values.
    static UNet2DConfig fromJson(const JsonConfig& json);
};

// The UNet2DConditionModel part of UNet2DConfig::fromJson (unet_condition_config.cpp).
void parseConditionConfig(const JsonConfig& json, UNet2DConfig& c);

} // namespace attnlens
