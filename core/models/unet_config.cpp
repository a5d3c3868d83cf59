#include "core/models/unet_config.h"

#include <algorithm>

namespace attnlens {

namespace {

Error unsupported(const JsonConfig& json, const std::string& key, const std::string& found,
                  const std::string& allowed) {
    return Error(json.path().string() + ": " + key + " = " + found +
                 " is not supported (supported: " + allowed + ")");
}

std::string requireOneOf(const JsonConfig& json, const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed) {
    const auto v = json.value<std::string>(key, fallback);
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed)
            list += (list.empty() ? "" : ", ") + a;
        throw unsupported(json, key, "\"" + v + "\"", list);
    }
    return v;
}

// Consistency: what diffusers would fail on (or compute something else for) is refused here.
void checkConsistency(const JsonConfig& json, const UNet2DConfig& c) {
    const auto bad = [&](const std::string& key, const std::string& why) {
        return Error(json.path().string() + ": " + key + " " + why);
    };
    if (c.blockOutChannels.empty()) throw bad("block_out_channels", "is empty");
    if (c.downBlockTypes.size() != c.blockOutChannels.size() ||
        c.upBlockTypes.size() != c.blockOutChannels.size())
        throw bad("down_block_types / up_block_types", "must have one entry per block_out_channels entry (" +
                                                           std::to_string(c.blockOutChannels.size()) + ")");
    for (const auto& t : c.downBlockTypes)
        if (t != "DownBlock2D" && t != "AttnDownBlock2D")
            throw unsupported(json, "down_block_types", "\"" + t + "\"", "DownBlock2D, AttnDownBlock2D");
    for (const auto& t : c.upBlockTypes)
        if (t != "UpBlock2D" && t != "AttnUpBlock2D")
            throw unsupported(json, "up_block_types", "\"" + t + "\"", "UpBlock2D, AttnUpBlock2D");
    if (c.layersPerBlock < 1 || c.layersPerBlock > 64) throw bad("layers_per_block", "must be in 1..64");
    if (c.inChannels < 1 || c.outChannels < 1 || c.inChannels > 4096 || c.outChannels > 4096)
        throw bad("in_channels / out_channels", "must be in 1..4096");
    if (c.normNumGroups < 1) throw bad("norm_num_groups", "must be positive");
    for (int ch : c.blockOutChannels) {
        if (ch < 1 || ch > 65536) throw bad("block_out_channels", "entries must be in 1..65536");
        if (ch % c.normNumGroups != 0)
            throw bad("norm_num_groups", "(" + std::to_string(c.normNumGroups) +
                                             ") must divide every block_out_channels entry (" +
                                             std::to_string(ch) + ")");
        if (c.attentionHeadDim && (*c.attentionHeadDim < 1 || c.headsFor(ch) < 1))
            throw bad("attention_head_dim", "(" + std::to_string(*c.attentionHeadDim) +
                                                ") is larger than a block's " + std::to_string(ch) +
                                                " channels");
    }
    if (c.attnNormNumGroups &&
        (*c.attnNormNumGroups < 1 || c.blockOutChannels.back() % *c.attnNormNumGroups != 0))
        throw bad("attn_norm_num_groups", "must divide the bottleneck's channels");
    if (c.numClassEmbeds < 0) throw bad("num_class_embeds", "must not be negative");
    if (c.downsamplePadding < 0 || c.downsamplePadding > 1) throw bad("downsample_padding", "must be 0 or 1");
    if (c.sampleSize < 0 || c.sampleSize % c.sizeMultiple() != 0)
        throw bad("sample_size", "(" + std::to_string(c.sampleSize) + ") must be divisible by " +
                                     std::to_string(c.sizeMultiple()));
}

} // namespace

UNet2DConfig UNet2DConfig::fromJson(const JsonConfig& json) {
    UNet2DConfig c;
    const auto cls = json.value<std::string>("_class_name", "UNet2DModel");
    if (cls == "UNet2DConditionModel") {
        parseConditionConfig(json, c);
        return c;
    }
    if (cls != "UNet2DModel")
        throw Error(json.path().string() + ": _class_name is \"" + cls +
                    "\"; Attention Lens loads diffusers UNet2DModel and UNet2DConditionModel folders");
    if (json.has("sample_size")) {
        if (json.json()["sample_size"].is_array()) {
            const auto s = json.get<std::vector<int>>("sample_size");
            if (s.size() != 2 || s[0] != s[1])
                throw unsupported(json, "sample_size", json.json()["sample_size"].dump(), "a square size");
            c.sampleSize = s[0];
        } else {
            c.sampleSize = json.get<int>("sample_size");
        }
    }
    c.inChannels = json.value<int>("in_channels", c.inChannels);
    c.outChannels = json.value<int>("out_channels", c.outChannels);
    c.centerInputSample = json.value<bool>("center_input_sample", false);
    requireOneOf(json, "time_embedding_type", "positional", {"positional"});
    c.flipSinToCos = json.value<bool>("flip_sin_to_cos", true);
    c.freqShift = json.value<float>("freq_shift", 0.0f);
    c.downBlockTypes = json.value<std::vector<std::string>>("down_block_types", c.downBlockTypes);
    c.upBlockTypes = json.value<std::vector<std::string>>("up_block_types", c.upBlockTypes);
    c.blockOutChannels = json.value<std::vector<int>>("block_out_channels", c.blockOutChannels);
    c.layersPerBlock = json.value<int>("layers_per_block", c.layersPerBlock);
    c.midBlockScaleFactor = json.value<float>("mid_block_scale_factor", 1.0f);
    c.downsamplePadding = json.value<int>("downsample_padding", 1);
    requireOneOf(json, "downsample_type", "conv", {"conv"});
    requireOneOf(json, "upsample_type", "conv", {"conv"});
    requireOneOf(json, "act_fn", "silu", {"silu", "swish"});
    c.attentionHeadDim =
        json.has("attention_head_dim")
            ? std::optional<int>(json.get<int>("attention_head_dim"))
            : (json.json().contains("attention_head_dim") ? std::nullopt : c.attentionHeadDim);
    c.normNumGroups = json.value<int>("norm_num_groups", c.normNumGroups);
    if (json.has("attn_norm_num_groups")) c.attnNormNumGroups = json.get<int>("attn_norm_num_groups");
    c.normEps = json.value<float>("norm_eps", c.normEps);
    c.scaleShift =
        requireOneOf(json, "resnet_time_scale_shift", "default", {"default", "scale_shift"}) == "scale_shift";
    c.addAttention = json.value<bool>("add_attention", true);
    if (json.has("class_embed_type"))
        throw unsupported(json, "class_embed_type", json.json()["class_embed_type"].dump(),
                          "null (a num_class_embeds table)");
    c.numClassEmbeds = json.value<int>("num_class_embeds", 0);
    if (json.has("id2label") && json.json()["id2label"].is_object()) {
        c.classNames.assign(static_cast<size_t>(std::max(c.numClassEmbeds, 0)), "");
        for (const auto& [k, v] : json.json()["id2label"].items()) {
            int idx = -1;
            try {
                idx = std::stoi(k);
            } catch (...) {
            }
            if (idx >= 0 && idx < c.numClassEmbeds && v.is_string())
                c.classNames[static_cast<size_t>(idx)] = v.get<std::string>();
        }
    }

    checkConsistency(json, c);
    return c;
}

} // namespace attnlens
