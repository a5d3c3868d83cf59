#pragma once
// AutoencoderKLDecoder: the decoder half of diffusers' AutoencoderKL (v0.25 semantics), what a Stable
// Diffusion pipeline runs once at the end to turn latents into an image: post_quant_conv, conv_in, the mid
// block (ResNet, single-head self-attention over the latent pixels, ResNet), UpDecoderBlock2Ds (ResNets
// without a time embedding, nearest ×2 + conv), GroupNorm + SiLU, conv_out. The encoder's tensors are not
// read (text-to-image never encodes an image).
//
//   auto vae = AutoencoderKLDecoder::load(pipe / "vae");
//   Tensor image = vae->decode(latents / vae->config().scalingFactor);   // [3, 8h, 8w] in [-1, 1]
//   (unclamped)

#include "core/io/json_file.h"
#include "core/layers/multi_head_attention.h"
#include "core/ops/conv.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace attnlens {

struct VaeConfig {
    int inChannels = 3, outChannels = 3, latentChannels = 4;
    std::vector<int> blockOutChannels{64};
    int layersPerBlock = 1;
    int normNumGroups = 32;
    int sampleSize = 32;
    float scalingFactor = 0.18215f;
    bool midAttention = true; // mid_block_add_attention (newer configs)

    int levels() const { return static_cast<int>(blockOutChannels.size()); }
    // The pipeline's vae_scale_factor: image pixels per latent pixel.
    int scaleFactor() const { return 1 << (levels() - 1); }

    // Throws attnlens::Error naming config.json and the key for unsupported values (another block type or
    // activation, SD3 / Flux's shift_factor, SDXL-style latents_mean / latents_std).
    static VaeConfig fromJson(const JsonConfig& json);
};

class AutoencoderKLDecoder {
public:
    // dir: an AutoencoderKL folder (config.json + diffusion_pytorch_model[.fp16].safetensors or .bin).
    static std::shared_ptr<const AutoencoderKLDecoder> load(const std::filesystem::path& dir);

    const VaeConfig& config() const { return m_config; }
    int64_t parameterCount() const { return m_parameters; }

    // z [latent_channels, h, w] (the pipeline's latents / scaling_factor) → [out_channels, h·f, w·f],
    // f = config().scaleFactor(), in the model's range (about [-1, 1]; not clamped). Cancel is polled
    // between blocks.
    Tensor decode(const Tensor& z, const Callbacks* callbacks = nullptr) const;

    struct Norm {
        Tensor weight, bias;
        int groups = 32;
    };
    struct Resnet {
        Norm norm1, norm2;
        ConvLayer conv1, conv2, shortcut; // shortcut.weight empty when in == out channels
    };
    struct UpBlock {
        std::vector<Resnet> resnets;
        ConvLayer upsample; // weight empty for the last block
    };

private:
    AutoencoderKLDecoder() = default;
    FeatureMap runResnet(const Resnet& r, const FeatureMap& x) const;
    FeatureMap runAttention(const FeatureMap& x) const;

    VaeConfig m_config;
    ConvLayer m_postQuant, m_convIn, m_convOut;
    Resnet m_mid0, m_mid1;
    Norm m_attentionNorm;
    std::optional<MultiHeadAttention> m_attention;
    std::vector<UpBlock> m_up;
    Norm m_normOut;
    int64_t m_parameters = 0;
};

} // namespace attnlens
