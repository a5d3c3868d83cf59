#include "core/models/vae_decoder.h"

#include "core/io/model_folder.h"
#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
#include "core/util/error.h"

#include <algorithm>

namespace attnlens {

namespace {

constexpr float kEps = 1e-6f; // every norm of diffusers' Decoder, whatever the config says

} // namespace

VaeConfig VaeConfig::fromJson(const JsonConfig& json) {
    const auto cls = json.value<std::string>("_class_name", "AutoencoderKL");
    if (cls != "AutoencoderKL")
        throw Error(json.path().string() + ": _class_name is \"" + cls +
                    "\"; the VAE of a text-to-image pipeline must be an AutoencoderKL");
    VaeConfig c;
    c.inChannels = json.value<int>("in_channels", 3);
    c.outChannels = json.value<int>("out_channels", 3);
    c.latentChannels = json.value<int>("latent_channels", 4);
    c.blockOutChannels = json.value<std::vector<int>>("block_out_channels", c.blockOutChannels);
    c.layersPerBlock = json.value<int>("layers_per_block", 1);
    c.normNumGroups = json.value<int>("norm_num_groups", 32);
    c.sampleSize = json.has("sample_size") && json.json()["sample_size"].is_number_integer()
                       ? json.get<int>("sample_size")
                       : 32;
    c.scalingFactor = json.value<float>("scaling_factor", 0.18215f);
    c.midAttention = json.value<bool>("mid_block_add_attention", true);
    const auto ups = json.value<std::vector<std::string>>(
        "up_block_types", std::vector<std::string>(c.blockOutChannels.size(), "UpDecoderBlock2D"));
    for (const auto& t : ups)
        if (t != "UpDecoderBlock2D")
            throw json.refuse("up_block_types", "entry \"" + t + "\" is not supported");
    if (ups.size() != c.blockOutChannels.size())
        throw json.refuse("up_block_types", "must have one entry per block_out_channels entry");
    if (json.value<std::string>("act_fn", "silu") != "silu") throw json.refuse("act_fn", "must be \"silu\"");
    for (const char* key : {"shift_factor", "latents_mean", "latents_std"})
        if (json.has(key)) throw json.refuse(key, "is set (SD3 / Flux / SDXL-style latents): not supported");
    for (const char* key : {"use_quant_conv", "use_post_quant_conv"})
        if (!json.value<bool>(key, true)) throw json.refuse(key, "= false is not supported");
    if (c.blockOutChannels.empty() || c.blockOutChannels.size() > 8)
        throw json.refuse("block_out_channels", "must have 1 to 8 entries");
    if (c.normNumGroups < 1) throw json.refuse("norm_num_groups", "must be positive");
    for (int ch : c.blockOutChannels)
        if (ch < 1 || ch > 65536 || ch % c.normNumGroups != 0)
            throw json.refuse("block_out_channels",
                              "entries must be in 1..65536 and divisible by norm_num_groups");
    if (c.layersPerBlock < 1 || c.layersPerBlock > 64)
        throw json.refuse("layers_per_block", "must be in 1..64");
    for (int v : {c.inChannels, c.outChannels, c.latentChannels})
        if (v < 1 || v > 4096)
            throw json.refuse("in_channels / out_channels / latent_channels", "must be in 1..4096");
    if (!(c.scalingFactor > 0.0f) || c.scalingFactor > 1e6f)
        throw json.refuse("scaling_factor", "must be > 0");
    return c;
}

namespace {

class VaeBinder {
public:
    VaeBinder(const TensorFile& file, int groups) : m_file(file), m_bind(file), m_groups(groups) {}
    ConvLayer conv(const std::string& p, int64_t out, int64_t in, int64_t k) {
        ConvLayer c{m_bind.require(p + ".weight", {out, in, k, k}), m_bind.require(p + ".bias", {out}), {}};
        if (c.weight.empty() || c.bias.empty()) return c;
        packConvLayer(c, k == 3, LinearPrecision::Fp32); // bf16 mode leaves the decoded picture exact
        m_file.releasePages(c.weight.data(),
                            static_cast<size_t>(c.weight.numel()) * sizeof(float)); // see UNet's
        return c;
    }
    AutoencoderKLDecoder::Norm norm(const std::string& p, int64_t channels) {
        return {m_bind.require(p + ".weight", {channels}), m_bind.require(p + ".bias", {channels}), m_groups};
    }
    LinearWeights linear(const std::string& p, int64_t out, int64_t in) {
        return {m_bind.require(p + ".weight", {out, in}), m_bind.require(p + ".bias", {out})};
    }
    AutoencoderKLDecoder::Resnet resnet(const std::string& p, int64_t in, int64_t out) {
        AutoencoderKLDecoder::Resnet r;
        r.norm1 = norm(p + ".norm1", in);
        r.conv1 = conv(p + ".conv1", out, in, 3);
        r.norm2 = norm(p + ".norm2", out);
        r.conv2 = conv(p + ".conv2", out, out, 3);
        if (in != out) r.shortcut = conv(p + ".conv_shortcut", out, in, 1);
        return r;
    }
    // The mid block's one-head attention; checkpoints from before diffusers 0.15 name its parts query / key /
    // value / proj_attn (diffusers converts them on load, so do we).
    std::optional<MultiHeadAttention> attention(const std::string& p, int64_t channels) {
        const bool legacy = !m_bind.has(p + ".to_q.weight") && m_bind.has(p + ".query.weight");
        auto q = linear(p + (legacy ? ".query" : ".to_q"), channels, channels);
        auto k = linear(p + (legacy ? ".key" : ".to_k"), channels, channels);
        auto v = linear(p + (legacy ? ".value" : ".to_v"), channels, channels);
        auto o = linear(p + (legacy ? ".proj_attn" : ".to_out.0"), channels, channels);
        if (q.empty() || k.empty() || v.empty() || o.empty()) return std::nullopt;
        return MultiHeadAttention(std::move(q), std::move(k), std::move(v), std::move(o), 1,
                                  QueryScale::Scores);
    }
    WeightBinder& raw() { return m_bind; }

private:
    const TensorFile& m_file;
    WeightBinder m_bind;
    int m_groups;
};

} // namespace

std::shared_ptr<const AutoencoderKLDecoder> AutoencoderKLDecoder::load(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error("'" + dir.string() + "' is not a folder");
    if (!std::filesystem::exists(dir / "config.json", ec))
        throw Error("'" + dir.string() + "' has no config.json");
    std::shared_ptr<AutoencoderKLDecoder> m(new AutoencoderKLDecoder());
    m->m_config = VaeConfig::fromJson(JsonConfig(dir / "config.json"));
    const auto& c = m->m_config;
    const auto weightsPath = findWeightsFile(dir, "diffusion_pytorch_model");
    const auto file = TensorFile::open(weightsPath);
    VaeBinder b(file, c.normNumGroups);
    const int64_t latent = c.latentChannels, top = c.blockOutChannels.back();
    m->m_postQuant = b.conv("post_quant_conv", latent, latent, 1);
    m->m_convIn = b.conv("decoder.conv_in", top, latent, 3);
    m->m_mid0 = b.resnet("decoder.mid_block.resnets.0", top, top);
    if (c.midAttention) {
        m->m_attentionNorm = b.norm("decoder.mid_block.attentions.0.group_norm", top);
        m->m_attention = b.attention("decoder.mid_block.attentions.0", top);
    }
    m->m_mid1 = b.resnet("decoder.mid_block.resnets.1", top, top);
    int64_t prev = top;
    for (int i = 0; i < c.levels(); ++i) {
        const int64_t out = c.blockOutChannels[static_cast<size_t>(c.levels() - 1 - i)];
        const std::string p = "decoder.up_blocks." + std::to_string(i);
        UpBlock block;
        for (int j = 0; j < c.layersPerBlock + 1; ++j)
            block.resnets.push_back(b.resnet(p + ".resnets." + std::to_string(j), j == 0 ? prev : out, out));
        if (i < c.levels() - 1) block.upsample = b.conv(p + ".upsamplers.0.conv", out, out, 3);
        m->m_up.push_back(std::move(block));
        prev = out;
    }
    m->m_normOut = b.norm("decoder.conv_norm_out", c.blockOutChannels.front());
    m->m_convOut = b.conv("decoder.conv_out", c.outChannels, c.blockOutChannels.front(), 3);
    b.raw().finish("'" + weightsPath.string() + "'");
    for (const auto& t : file.tensors())
        if (t.name.starts_with("decoder.") || t.name.starts_with("post_quant_conv."))
            m->m_parameters += shapeNumel(t.shape);
    return m;
}

FeatureMap AutoencoderKLDecoder::runResnet(const Resnet& r, const FeatureMap& x) const {
    FeatureMap h = applyConv(r.conv1, groupNorm(x, r.norm1.groups, r.norm1.weight, r.norm1.bias, kEps, true),
                             ConvGeometry::same(3));
    groupNormInPlace(h, r.norm2.groups, r.norm2.weight, r.norm2.bias, kEps, true);
    h = applyConv(r.conv2, h, ConvGeometry::same(3));
    if (r.shortcut.weight.empty())
        h.data += x.data;
    else
        h.data += applyConv(r.shortcut, x, {}).data;
    return h;
}

FeatureMap AutoencoderKLDecoder::runAttention(const FeatureMap& x) const {
    const RowMatrix tokens =
        groupNorm(x, m_attentionNorm.groups, m_attentionNorm.weight, m_attentionNorm.bias, kEps)
            .data.transpose();
    const RowMatrix attended = m_attention->forward(tokens, tokens, nullptr, nullptr);
    return {x.data + attended.transpose(), x.height, x.width};
}

Tensor AutoencoderKLDecoder::decode(const Tensor& z, const Callbacks* callbacks) const {
    const auto& c = m_config;
    if (z.rank() != 3 || z.dim(0) != c.latentChannels)
        throw Error("the latents have shape " + shapeToString(z.shape()) + "; this VAE decodes [" +
                    std::to_string(c.latentChannels) + ", height, width]");
    if (z.dim(1) < 1 || z.dim(2) < 1 || z.dim(1) * c.scaleFactor() > 4096 ||
        z.dim(2) * c.scaleFactor() > 4096)
        throw Error("the latents are " + std::to_string(z.dim(1)) + "x" + std::to_string(z.dim(2)) +
                    "; images up to 4096x4096 are decoded");
    const auto poll = [&] {
        if (callbacks) callbacks->checkCancel();
    };
    const int height = static_cast<int>(z.dim(1)), width = static_cast<int>(z.dim(2));
    FeatureMap h{ConstMatrixMap(z.data(), z.dim(0), z.dim(1) * z.dim(2)), height, width};
    h = applyConv(m_postQuant, h, {});
    h = applyConv(m_convIn, h, ConvGeometry::same(3));
    h = runResnet(m_mid0, h);
    if (m_attention) h = runAttention(h);
    h = runResnet(m_mid1, h);
    for (const UpBlock& block : m_up) {
        poll();
        for (const Resnet& r : block.resnets)
            h = runResnet(r, h);
        if (!block.upsample.weight.empty()) {
            FeatureMap up = upsampleNearest2x(h);
            h = FeatureMap(); // not kept through the convolution
            h = applyConv(block.upsample, up, ConvGeometry::same(3));
        }
    }
    groupNormInPlace(h, m_normOut.groups, m_normOut.weight, m_normOut.bias, kEps, true);
    h = applyConv(m_convOut, h, ConvGeometry::same(3));
    Tensor image({h.channels(), h.height, h.width});
    MatrixMap(image.data(), h.channels(), h.pixels()) = h.data;
    return image;
}

} // namespace attnlens
