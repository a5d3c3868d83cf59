#include "core/models/unet_model.h"

#include "core/io/model_folder.h"
#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
#include "core/ops/nn.h"
#include "core/util/error.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace attnlens {

const char* unetPathName(UNetPath path) {
    switch (path) {
    case UNetPath::Contracting:
        return "contracting";
    case UNetPath::Bottleneck:
        return "bottleneck";
    case UNetPath::Expansive:
        return "expansive";
    }
    return "?";
}

std::vector<float> timestepEmbedding(float timestep, int dim, bool flipSinToCos, float freqShift) {
    // float32 throughout, in diffusers' order of operations: exponent = -ln(10000)·i / (half − shift),
    // args = t · exp(exponent), [sin | cos] (flipped to [cos | sin]), zero-padded when dim is odd.
    const int half = dim / 2;
    std::vector<float> emb(static_cast<size_t>(dim), 0.0f);
    const float logPeriod = static_cast<float>(-std::log(10000.0));
    const float denom = static_cast<float>(half) - freqShift;
    for (int i = 0; i < half; ++i) {
        const float exponent = (logPeriod * static_cast<float>(i)) / denom;
        const float arg = timestep * std::exp(exponent);
        const float s = std::sin(arg), c = std::cos(arg);
        emb[static_cast<size_t>(flipSinToCos ? half + i : i)] = s;
        emb[static_cast<size_t>(flipSinToCos ? i : half + i)] = c;
    }
    return emb;
}

namespace {

// Binds the U-Net's tensors by their diffusers names; the shapes follow from the config.
class UNetBinder {
public:
    UNetBinder(const TensorFile& file, const UNet2DConfig& c) : m_file(file), m_bind(file), m_config(c) {}
    // Winograd pays where a level has enough pixels to amortise its transforms (with the weights packed at
    // load, from 8×8 on: ddpm-cifar10-32 70 ms vs 75 ms from 16×16); below, reading the 16/9 larger
    // transformed weights costs more than the multiplications it saves. At 8×8 only up to 512 channels: SD
    // 1.5's 8×8 level holds 250 M convolution weights of 1280 channels (1.0 GB as Winograd's 16/9 copy, 0.8
    // GB more than plain) where the products are weight-bound anyway.
    bool winograd(int level, int64_t out) const {
        if (level < 0) return false; // a convolution not tied to a level (downsamplers)
        const int size = (m_config.sampleSize ? m_config.sampleSize : 32) >> level;
        return size >= 16 || (size >= 8 && out <= 512);
    }

    UNet2DModel::Conv conv(const std::string& prefix, int64_t out, int64_t in, int64_t k, int level = -1) {
        UNet2DModel::Conv c{
            m_bind.require(prefix + ".weight", {out, in, k, k}), m_bind.require(prefix + ".bias", {out}), {}};
        if (c.weight.empty()) return c;
        packConvLayer(c, k == 3 && winograd(level, out));
        // the packed copy is what runs: the file's pages of the plain weight need not stay resident (SD 1.5's
        // convolutions are 2 GB of float32)
        m_file.releasePages(c.weight.data(), static_cast<size_t>(c.weight.numel()) * sizeof(float));
        return c;
    }
    UNet2DModel::Norm norm(const std::string& prefix, int64_t channels, int groups) {
        return {m_bind.require(prefix + ".weight", {channels}), m_bind.require(prefix + ".bias", {channels}),
                groups, m_config.normEps};
    }
    LinearWeights linear(const std::string& prefix, int64_t out, int64_t in, bool bias = true) {
        return packedInBf16({m_bind.require(prefix + ".weight", {out, in}),
                             bias ? m_bind.require(prefix + ".bias", {out}) : Tensor()});
    }
    // bf16 (Compute → BF16): linear layers packed in bfloat16 (float32 stays on the plain weights, unpacked);
    // the packed copy is what runs, so the file's pages of the plain weight are given back as for
    // convolutions
    LinearWeights packedInBf16(LinearWeights w) {
        if (linearPrecision() == LinearPrecision::Bf16 && !w.weight.empty()) {
            w.pack();
            m_file.releasePages(w.weight.data(), static_cast<size_t>(w.weight.numel()) * sizeof(float));
        }
        return w;
    }
    // A Linear, or a 1×1 conv bound as its [out, in] matrix (Transformer2DModel's proj_in / proj_out).
    LinearWeights projection(const std::string& prefix, int64_t out, int64_t in) {
        if (m_config.useLinearProjection) return linear(prefix, out, in);
        LinearWeights w{m_bind.require(prefix + ".weight", {out, in, 1, 1}),
                        m_bind.require(prefix + ".bias", {out})};
        if (!w.weight.empty()) w.weight = w.weight.reshaped({out, in});
        return packedInBf16(std::move(w));
    }
    LayerNormWeights layerNorm(const std::string& p, int64_t dim) {
        return {m_bind.require(p + ".weight", {dim}), m_bind.require(p + ".bias", {dim})};
    }
    MultiHeadAttention crossOrSelf(const std::string& p, int64_t dim, int64_t keyDim, int heads) {
        auto q = linear(p + ".to_q", dim, dim, false), k = linear(p + ".to_k", dim, keyDim, false),
             v = linear(p + ".to_v", dim, keyDim, false), o = linear(p + ".to_out.0", dim, dim);
        if (q.weight.empty() || k.weight.empty() || v.weight.empty() || o.weight.empty()) return {};
        return MultiHeadAttention(std::move(q), std::move(k), std::move(v), std::move(o), heads,
                                  QueryScale::Scores);
    }
    // Transformer2DModel over `channels` channels with `heads` heads of channels / heads.
    UNet2DModel::Transformer transformer(const std::string& p, int64_t channels, int heads, int layers,
                                         UNetPath path, int level) {
        UNet2DModel::Transformer t;
        t.norm = norm(p + ".norm", channels, m_config.normNumGroups);
        t.norm.eps = 1e-6f; // Transformer2DModel's GroupNorm, whatever norm_eps says
        t.projIn = projection(p + ".proj_in", channels, channels);
        t.projOut = projection(p + ".proj_out", channels, channels);
        for (int j = 0; j < layers; ++j) {
            const std::string b = p + ".transformer_blocks." + std::to_string(j);
            UNet2DModel::TransformerLayer l;
            l.norm1 = layerNorm(b + ".norm1", channels);
            l.norm2 = layerNorm(b + ".norm2", channels);
            l.norm3 = layerNorm(b + ".norm3", channels);
            l.self = crossOrSelf(b + ".attn1", channels, channels, heads);
            l.cross = crossOrSelf(b + ".attn2", channels, m_config.crossAttentionDim, heads);
            l.selfInfo = {b + ".attn1", path, level, heads};
            l.crossInfo = {b + ".attn2", path, level, heads};
            l.crossInfo.cross = true;
            l.geglu = linear(b + ".ff.net.0.proj", 8 * channels, channels);
            l.ffOut = linear(b + ".ff.net.2", channels, 4 * channels);
            t.layers.push_back(std::move(l));
        }
        return t;
    }
    UNet2DModel::Resnet resnet(const std::string& p, int64_t in, int64_t out, float outputScale, int level) {
        UNet2DModel::Resnet r;
        const int g = m_config.normNumGroups;
        r.norm1 = norm(p + ".norm1", in, g);
        r.conv1 = conv(p + ".conv1", out, in, 3, level);
        r.timeProj =
            linear(p + ".time_emb_proj", m_config.scaleShift ? 2 * out : out, m_config.timeEmbedDim());
        r.norm2 = norm(p + ".norm2", out, g);
        r.conv2 = conv(p + ".conv2", out, out, 3, level);
        if (in != out) r.shortcut = conv(p + ".conv_shortcut", out, in, 1);
        r.outputScale = outputScale;
        return r;
    }
    // diffusers' spatial Attention; checkpoints saved before diffusers 0.15 name its parts
    // query / key / value / proj_attn (diffusers converts them on load; so do we).
    UNet2DModel::Attention attention(const std::string& p, int64_t channels, int groups, float rescale,
                                     UNetPath path, int level) {
        const bool legacy = !m_bind.has(p + ".to_q.weight") && m_bind.has(p + ".query.weight");
        const int heads = m_config.headsFor(static_cast<int>(channels));
        const int64_t inner = static_cast<int64_t>(heads) * m_config.headDimFor(static_cast<int>(channels));
        UNet2DModel::Attention a;
        a.info.name = p;
        a.info.path = path;
        a.info.level = level;
        a.info.heads = heads;
        if (groups > 0) a.norm = norm(p + ".group_norm", channels, groups); // 0: no norm
        auto q = linear(p + (legacy ? ".query" : ".to_q"), inner, channels);
        auto k = linear(p + (legacy ? ".key" : ".to_k"), inner, channels);
        auto v = linear(p + (legacy ? ".value" : ".to_v"), inner, channels);
        auto o = linear(p + (legacy ? ".proj_attn" : ".to_out.0"), channels, inner);
        if (!q.weight.empty() && !k.weight.empty() && !v.weight.empty() && !o.weight.empty())
            a.mha = MultiHeadAttention(std::move(q), std::move(k), std::move(v), std::move(o), heads,
                                       QueryScale::Scores);
        a.rescale = rescale;
        return a;
    }
    // down_blocks.i at level i: layers_per_block ResNets (+ attention), then a stride-2 conv unless last.
    UNet2DModel::Block downBlock(int i, int64_t in, int64_t out) {
        const std::string p = "down_blocks." + std::to_string(i);
        const auto& type = m_config.downBlockTypes[static_cast<size_t>(i)];
        const bool attn = type == "AttnDownBlock2D", cross = type == "CrossAttnDownBlock2D";
        const size_t level = static_cast<size_t>(i);
        const int layers =
            m_config.textConditioned ? m_config.layersPerLevel[level] : m_config.layersPerBlock;
        UNet2DModel::Block block;
        for (int j = 0; j < layers; ++j) {
            block.resnets.push_back(
                resnet(p + ".resnets." + std::to_string(j), j == 0 ? in : out, out, 1.0f, i));
            const std::string a = p + ".attentions." + std::to_string(j);
            if (attn)
                block.attentions.push_back(
                    attention(a, out, m_config.normNumGroups, 1.0f, UNetPath::Contracting, i));
            if (cross)
                block.transformers.push_back(transformer(a, out, m_config.headsPerLevel[level],
                                                         m_config.transformerLayers[level],
                                                         UNetPath::Contracting, i));
        }
        if (i < m_config.levels() - 1) block.resample = conv(p + ".downsamplers.0.conv", out, out, 3);
        return block;
    }
    // up_blocks.i at level L−1−i: layers_per_block + 1 ResNets on [h; skip] (+ attention), then ×2 and a
    // conv unless last. in = the channels of the skip the last ResNet takes; prev = the block below's.
    UNet2DModel::Block upBlock(int i, int64_t prev, int64_t in, int64_t out) {
        const std::string p = "up_blocks." + std::to_string(i);
        const auto& type = m_config.upBlockTypes[static_cast<size_t>(i)];
        const bool attn = type == "AttnUpBlock2D", cross = type == "CrossAttnUpBlock2D";
        const int level = m_config.levels() - 1 - i;
        const size_t mirror = static_cast<size_t>(level); // the down block at the same level
        const int layers =
            (m_config.textConditioned ? m_config.layersPerLevel[mirror] : m_config.layersPerBlock) + 1;
        UNet2DModel::Block block;
        for (int j = 0; j < layers; ++j) {
            const int64_t skip = j == layers - 1 ? in : out;
            const int64_t rin = j == 0 ? prev : out;
            block.resnets.push_back(
                resnet(p + ".resnets." + std::to_string(j), rin + skip, out, 1.0f, level));
            const std::string a = p + ".attentions." + std::to_string(j);
            if (attn)
                block.attentions.push_back(
                    attention(a, out, m_config.normNumGroups, 1.0f, UNetPath::Expansive, level));
            if (cross)
                block.transformers.push_back(transformer(a, out, m_config.headsPerLevel[mirror],
                                                         m_config.transformerLayers[mirror],
                                                         UNetPath::Expansive, level));
        }
        if (i < m_config.levels() - 1)
            block.resample = conv(p + ".upsamplers.0.conv", out, out, 3, level - 1);
        return block;
    }
    WeightBinder& raw() { return m_bind; }

private:
    const TensorFile& m_file;
    WeightBinder m_bind;
    const UNet2DConfig& m_config;
};

RowMatrix linearRow(const RowMatrix& x, const LinearWeights& w) {
    return linear(x, w.weight, w.bias);
}

} // namespace

std::shared_ptr<const UNet2DModel> UNet2DModel::load(const std::filesystem::path& dir) {
    // A forward allocates feature maps of up to tens of MB, layer after layer. With glibc's default
    // thresholds each is a fresh mmap whose pages fault in again on every use (measured: ~10 % of a
    // ddpm-cifar10-32 forward); keeping freed memory in the heap lets the next layer reuse it.
    static std::once_flag allocatorTuned;
    std::call_once(allocatorTuned, [] {
        mallopt(M_MMAP_THRESHOLD, 256 << 20);
        mallopt(M_TRIM_THRESHOLD, 512 << 20);
    });
    const auto configPath = dir / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error("'" + dir.string() + "' is not a folder");
    if (!std::filesystem::exists(configPath, ec)) throw Error("'" + dir.string() + "' has no config.json");
    const auto weightsPath = findWeightsFile(dir, "diffusion_pytorch_model");
    std::shared_ptr<UNet2DModel> m(new UNet2DModel());
    m->m_config = UNet2DConfig::fromJson(JsonConfig(configPath));
    const auto& c = m->m_config;
    const auto file = TensorFile::open(weightsPath);
    UNetBinder b(file, c);
    const int64_t c0 = c.blockOutChannels.front(), temb = c.timeEmbedDim();
    const int levels = c.levels();

    m->m_convIn = b.conv("conv_in", c0, c.inChannels, 3, 0);
    m->m_time1 = b.linear("time_embedding.linear_1", temb, c0);
    m->m_time2 = b.linear("time_embedding.linear_2", temb, temb);
    if (c.numClassEmbeds > 0)
        m->m_classEmbedding = b.raw().require("class_embedding.weight", {c.numClassEmbeds, temb});

    int64_t out = c0;
    for (int i = 0; i < levels; ++i) {
        const int64_t in = out;
        out = c.blockOutChannels[static_cast<size_t>(i)];
        m->m_down.push_back(b.downBlock(i, in, out));
    }
    const int64_t mid = c.blockOutChannels.back();
    m->m_hasMid = !c.textConditioned || !c.midBlockType.empty();
    if (m->m_hasMid) {
        m->m_midResnet0 = b.resnet("mid_block.resnets.0", mid, mid, c.midBlockScaleFactor, levels - 1);
        if (c.addAttention)
            m->m_midAttention = b.attention("mid_block.attentions.0", mid,
                                            c.attnNormNumGroups.value_or(c.scaleShift ? 0 : c.normNumGroups),
                                            c.midBlockScaleFactor, UNetPath::Bottleneck, levels - 1);
        if (c.textConditioned)
            m->m_midTransformer = b.transformer("mid_block.attentions.0", mid, c.headsPerLevel.back(),
                                                c.transformerLayers.back(), UNetPath::Bottleneck, levels - 1);
        m->m_midResnet1 = b.resnet("mid_block.resnets.1", mid, mid, c.midBlockScaleFactor, levels - 1);
    }

    out = mid;
    for (int i = 0; i < levels; ++i) {
        const int64_t prev = out;
        out = c.blockOutChannels[static_cast<size_t>(levels - 1 - i)];
        m->m_up.push_back(
            b.upBlock(i, prev, c.blockOutChannels[static_cast<size_t>(std::max(levels - 2 - i, 0))], out));
    }
    m->m_normOut = b.norm("conv_norm_out", c0, c.normNumGroups);
    m->m_convOut = b.conv("conv_out", c.outChannels, c0, 3, 0);
    b.raw().finish("'" + weightsPath.string() + "'");
    for (const auto& t : file.tensors())
        m->m_parameters += shapeNumel(t.shape);
    m->m_file = file;
    return m;
}

std::vector<UNetAttentionInfo> UNet2DModel::attentionLayers(int height, int width, int textTokens) const {
    std::vector<UNetAttentionInfo> out;
    const auto add = [&](UNetAttentionInfo info) {
        info.height = height >> info.level;
        info.width = width >> info.level;
        if (info.cross) info.textTokens = textTokens;
        out.push_back(std::move(info));
    };
    const auto addTransformer = [&](const Transformer& t) {
        for (const auto& l : t.layers) {
            add(l.selfInfo);
            add(l.crossInfo);
        }
    };
    const auto addBlock = [&](const Block& block) {
        for (size_t j = 0; j < block.resnets.size(); ++j) {
            if (j < block.attentions.size()) add(block.attentions[j].info);
            if (j < block.transformers.size()) addTransformer(block.transformers[j]);
        }
    };
    for (const auto& block : m_down)
        addBlock(block);
    if (m_midAttention) add(m_midAttention->info);
    if (m_midTransformer) addTransformer(*m_midTransformer);
    for (const auto& block : m_up)
        addBlock(block);
    return out;
}

void UNet2DModel::checkSample(const Shape& shape) const {
    if (shape.size() != 3)
        throw Error("the sample has shape " + shapeToString(shape) + ", expected [channels, height, width]");
    if (shape[0] != m_config.inChannels)
        throw Error("the sample has " + std::to_string(shape[0]) + " channels, the model expects " +
                    std::to_string(m_config.inChannels));
    const int64_t mult = m_config.sizeMultiple();
    if (shape[1] < mult || shape[2] < mult || shape[1] % mult != 0 || shape[2] % mult != 0)
        throw Error("the sample is " + std::to_string(shape[1]) + "x" + std::to_string(shape[2]) +
                    "; this U-Net needs a height and width divisible by " + std::to_string(mult) +
                    (m_config.sampleSize ? " (trained at " + std::to_string(m_config.sampleSize) + "x" +
                                               std::to_string(m_config.sampleSize) + ")"
                                         : std::string()));
    if (shape[1] > 4096 || shape[2] > 4096)
        throw Error("the sample is " + std::to_string(shape[1]) + "x" + std::to_string(shape[2]) +
                    "; at most 4096x4096");
}

RowMatrix UNet2DModel::timeEmbedding(float timestep, const UNetConditioning& conditioning) const {
    const std::optional<int>& classLabel = conditioning.classLabel;
    const auto& c = m_config;
    const auto e = timestepEmbedding(timestep, c.blockOutChannels.front(), c.flipSinToCos, c.freqShift);
    RowMatrix t = Eigen::Map<const RowMatrix>(e.data(), 1, static_cast<Eigen::Index>(e.size()));
    RowMatrix h = linearRow(t, m_time1);
    applyActivationInPlace(h, Activation::Silu);
    RowMatrix emb = linearRow(h, m_time2); // [1, time_embed_dim]
    if (!m_classEmbedding.empty()) {
        if (!classLabel)
            throw Error("this U-Net is class-conditional (" + std::to_string(c.numClassEmbeds) +
                        " classes): give a class");
        if (*classLabel < 0 || *classLabel >= c.numClassEmbeds)
            throw Error("class " + std::to_string(*classLabel) + " is out of range 0.." +
                        std::to_string(c.numClassEmbeds - 1));
        emb += m_classEmbedding.matrix().row(*classLabel);
    } else if (classLabel) {
        throw Error(c.textConditioned
                        ? "this U-Net has no class embedding: no class can be given"
                        : "this U-Net is unconditional (no class embedding): no class can be given");
    }
    return emb;
}

FeatureMap UNet2DModel::runResnet(const Resnet& r, const FeatureMap& x, const RowMatrix& siluTemb) const {
    FeatureMap h = conv3x3(
        r.conv1, groupNorm(x, r.norm1.groups, r.norm1.weight, r.norm1.bias, r.norm1.eps, /*silu=*/true));
    const RowMatrix t = linearRow(siluTemb, r.timeProj); // [1, out] or [1, 2·out]
    const int64_t out = h.channels();
    if (t.cols() == out) {
        h.data.colwise() += t.row(0).transpose();
        groupNormInPlace(h, r.norm2.groups, r.norm2.weight, r.norm2.bias, r.norm2.eps, /*silu=*/true);
    } else { // scale_shift: norm2(h) · (1 + scale) + shift, then SiLU
        groupNormInPlace(h, r.norm2.groups, r.norm2.weight, r.norm2.bias, r.norm2.eps);
        for (int64_t ch = 0; ch < out; ++ch) {
            auto row = h.data.row(ch).array();
            row = row * (1.0f + t(0, ch)) + t(0, out + ch);
        }
        applyActivationInPlace(h.data, Activation::Silu);
    }
    h = conv3x3(r.conv2, h);
    if (r.shortcut.weight.empty())
        h.data += x.data;
    else
        h.data += conv(r.shortcut, x, {}).data;
    if (r.outputScale != 1.0f) h.data /= r.outputScale;
    return h;
}

struct UNet2DModel::AttentionRun {
    std::vector<UNetAttentionMap>* capture = nullptr;
    bool captureSelf = true;
    int captureLayer = -1;
    std::vector<std::vector<int>> off; // [attention layer] → heads switched off
    AttentionInputs* probe = nullptr;
    int probeLayer = -1;
    int next = 0; // index of the next attention layer in execution order
};

RowMatrix UNet2DModel::runAttentionLayer(const MultiHeadAttention& mha, const UNetAttentionInfo& layer,
                                         const RowMatrix& queries, const RowMatrix& keys, int height,
                                         int width, AttentionRun& run) const {
    const int index = run.next++;
    if (run.probe && index == run.probeLayer) *run.probe = {&mha, queries, keys, false};
    const std::span<const int> off = index < static_cast<int>(run.off.size())
                                         ? std::span<const int>(run.off[size_t(index)])
                                         : std::span<const int>();
    Tensor probs;
    const bool capture =
        run.capture && (run.captureLayer >= 0 ? index == run.captureLayer : layer.cross || run.captureSelf);
    RowMatrix q, k, v; // MultiHeadAttention::forward's steps, the values kept for their norms
    mha.projectQuery(queries, q);
    mha.projectKeyValue(keys, k, v);
    RowMatrix attended = mha.attend(q, k, v, nullptr, capture ? &probs : nullptr, off);
    if (capture) {
        UNetAttentionInfo info = layer;
        info.height = height;
        info.width = width;
        if (info.cross) info.textTokens = static_cast<int>(keys.rows());
        run.capture->push_back({std::move(info), std::move(probs), Tensor::fromMatrix(mha.valueNorms(v))});
    }
    return attended; // [queries, channels]
}

FeatureMap UNet2DModel::runAttention(const Attention& a, const FeatureMap& x, AttentionRun& run) const {
    const RowMatrix tokens =
        a.norm.weight.empty()
            ? RowMatrix(x.data.transpose())
            : RowMatrix(groupNorm(x, a.norm.groups, a.norm.weight, a.norm.bias, a.norm.eps).data.transpose());
    // tokens [tokens, channels], token = y·w + x
    const RowMatrix attended = runAttentionLayer(a.mha, a.info, tokens, tokens, x.height, x.width, run);
    FeatureMap out{x.data + attended.transpose(), x.height, x.width};
    if (a.rescale != 1.0f) out.data /= a.rescale;
    return out;
}

int64_t UNet2DModel::captureBytes(int height, int width, int textTokens, bool withSelf, int onlyLayer) const {
    int64_t bytes = 0, index = 0;
    for (const auto& l : attentionLayers(height, width, textTokens))
        if (onlyLayer >= 0 ? index++ == onlyLayer : l.cross || withSelf)
            bytes += int64_t{sizeof(float)} * l.heads * l.tokens() * l.keys();
    return bytes;
}

UNetOutput UNet2DModel::forward(const Tensor& sample, float timestep, const UNetConditioning& conditioning,
                                const UNetRunOptions& options, const Callbacks* callbacks) const {
    checkSample(sample.shape());
    const int height = static_cast<int>(sample.dim(1)), width = static_cast<int>(sample.dim(2));
    const RowMatrix text = textStates(conditioning);
    const int textTokens = static_cast<int>(text.rows());
    if (options.captureAttention) {
        const int64_t bytes =
            captureBytes(height, width, textTokens, options.captureSelf, options.captureLayer);
        if (bytes > options.maxCaptureBytes)
            throw Error("capturing every attention layer of a " + std::to_string(height) + "x" +
                        std::to_string(width) + " sample needs " + std::to_string(bytes >> 20) +
                        " MiB, more than the limit of " + std::to_string(options.maxCaptureBytes >> 20) +
                        " MiB");
    }
    if (!std::isfinite(timestep) || timestep < 0) throw Error("the timestep must be a finite number >= 0");
    const auto poll = [&] {
        if (callbacks) callbacks->checkCancel();
    };
    UNetOutput result;
    AttentionRun run;
    run.capture = options.captureAttention ? &result.attentions : nullptr;
    run.captureSelf = options.captureSelf;
    run.captureLayer = options.captureLayer;
    run.probe = options.probe;
    run.probeLayer = options.probeLayer;
    if (!options.offHeads.empty()) {
        std::vector<int> headsPerLayer;
        for (const UNetAttentionInfo& info : attentionLayers(height, width, textTokens))
            headsPerLayer.push_back(info.heads);
        run.off = headsOffByLayer(options.offHeads, headsPerLayer, "attention layers");
    }

    RowMatrix temb = timeEmbedding(timestep, conditioning);
    applyActivationInPlace(
        temb, Activation::Silu); // every resnet applies SiLU to the embedding before its projection

    FeatureMap h{ConstMatrixMap(sample.data(), sample.dim(0), sample.dim(1) * sample.dim(2)), height, width};
    if (m_config.centerInputSample) h.data = (h.data.array() * 2.0f - 1.0f).matrix();
    h = conv3x3(m_convIn, h);
    std::vector<FeatureMap> skips{h};
    for (const auto& block : m_down) {
        poll();
        for (size_t j = 0; j < block.resnets.size(); ++j) {
            h = attendBlock(block, j, runResnet(block.resnets[j], h, temb), text, run);
            skips.push_back(h);
        }
        if (!block.resample.weight.empty()) {
            // padding 0: diffusers pads right and bottom by one, then convolves unpadded
            const int p = m_config.downsamplePadding;
            h = conv(block.resample, h, p == 0 ? ConvGeometry{2, 0, 0, 1, 1} : ConvGeometry{2, p, p, p, p});
            skips.push_back(h);
        }
    }
    poll();
    if (m_hasMid) {
        h = runResnet(m_midResnet0, h, temb);
        if (m_midAttention) h = runAttention(*m_midAttention, h, run);
        if (m_midTransformer) h = runTransformer(*m_midTransformer, h, text, run);
        h = runResnet(m_midResnet1, h, temb);
    }
    for (const auto& block : m_up) {
        poll();
        for (size_t j = 0; j < block.resnets.size(); ++j) {
            h = runResnet(block.resnets[j], concatChannels(h, skips.back()), temb);
            skips.pop_back();
            h = attendBlock(block, j, std::move(h), text, run);
        }
        if (!block.resample.weight.empty()) h = conv3x3(block.resample, upsampleNearest2x(h));
    }
    groupNormInPlace(h, m_normOut.groups, m_normOut.weight, m_normOut.bias, m_normOut.eps, /*silu=*/true);
    h = conv3x3(m_convOut, h);
    result.noisePred = Tensor({h.channels(), height, width});
    MatrixMap(result.noisePred.data(), h.channels(), h.pixels()) = h.data;
    return result;
}

} // namespace attnlens
