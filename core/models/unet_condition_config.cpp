// UNet2DConditionModel's config.json (diffusers v0.25 defaults): what Stable Diffusion 1.x / 2.x and their
// distillations (bk-sdm, tiny-sd, small-sd) use; every other value refused by name.
#include "core/models/unet_config.h"

#include <algorithm>

namespace attnlens {

namespace {

// An int or a list with one entry per block (diffusers' Union[int, Tuple[int]]).
std::vector<int> perBlock(const JsonConfig& json, const std::string& key, int fallback, size_t blocks) {
    if (!json.has(key)) return std::vector<int>(blocks, fallback);
    if (!json.json()[key].is_array()) return std::vector<int>(blocks, json.get<int>(key));
    const Json& list = json.json()[key];
    for (const Json& v : list)
        if (v.is_array())
            throw json.refuse(key,
                              "holds nested lists (per-layer values, SDXL refiner style): not supported");
    const auto v = json.get<std::vector<int>>(key);
    if (v.size() != blocks)
        throw json.refuse(key, "has " + std::to_string(v.size()) + " entries for " + std::to_string(blocks) +
                                   " blocks");
    return v;
}

// Keys whose non-default values select parts Attention Lens does not implement (SDXL, Kandinsky, UnCLIP,
// LCM, ControlNet-era options): named in the message rather than computed wrongly.
void refuseUnsupported(const JsonConfig& json) {
    for (const char* key :
         {"class_embed_type", "addition_embed_type", "num_class_embeds", "encoder_hid_dim",
          "encoder_hid_dim_type", "time_cond_proj_dim", "timestep_post_act", "time_embedding_act_fn",
          "time_embedding_dim", "addition_time_embed_dim", "projection_class_embeddings_input_dim",
          "cross_attention_norm", "reverse_transformer_layers_per_block"})
        if (json.has(key))
            throw json.refuse(key, "= " + json.json()[key].dump() +
                                       " is not supported (only null, as Stable Diffusion 1.x "
                                       "/ 2.x pipelines have it)");
    if (json.has("num_attention_heads"))
        throw json.refuse("num_attention_heads",
                          "is set; diffusers v0.25 refuses it too (heads come from attention_head_dim)");
    for (const char* key : {"dual_cross_attention", "class_embeddings_concat", "resnet_skip_time_act",
                            "mid_block_only_cross_attention"})
        if (json.value<bool>(key, false)) throw json.refuse(key, "= true is not supported");
    if (json.has("only_cross_attention")) {
        const Json& v = json.json()["only_cross_attention"];
        const bool any = v.is_array()
                             ? std::any_of(v.begin(), v.end(), [](const Json& b) { return b == true; })
                             : v == true;
        if (any) throw json.refuse("only_cross_attention", "= true is not supported");
    }
    if (json.value<float>("resnet_out_scale_factor", 1.0f) != 1.0f)
        throw json.refuse("resnet_out_scale_factor", "other than 1 is not supported");
    for (const char* key : {"conv_in_kernel", "conv_out_kernel"})
        if (json.value<int>(key, 3) != 3) throw json.refuse(key, "other than 3 is not supported");
    const auto equals = [&](const char* key, const char* fallback, std::initializer_list<const char*> ok) {
        const auto v = json.value<std::string>(key, fallback);
        if (std::find(ok.begin(), ok.end(), v) == ok.end())
            throw json.refuse(key, "= \"" + v + "\" is not supported");
    };
    equals("time_embedding_type", "positional", {"positional"});
    equals("act_fn", "silu", {"silu", "swish"});
    equals("attention_type", "default", {"default"});
    equals("resnet_time_scale_shift", "default", {"default"});
}

} // namespace

void parseConditionConfig(const JsonConfig& json, UNet2DConfig& c) {
    refuseUnsupported(json);
    c.textConditioned = true;
    c.inChannels = json.value<int>("in_channels", 4);
    c.outChannels = json.value<int>("out_channels", 4);
    if (json.has("sample_size")) {
        if (json.json()["sample_size"].is_array()) {
            const auto s = json.get<std::vector<int>>("sample_size");
            if (s.size() != 2 || s[0] != s[1]) throw json.refuse("sample_size", "must be square");
            c.sampleSize = s[0];
        } else {
            c.sampleSize = json.get<int>("sample_size");
        }
    }
    c.centerInputSample = json.value<bool>("center_input_sample", false);
    c.flipSinToCos = json.value<bool>("flip_sin_to_cos", true);
    c.freqShift = json.value<float>("freq_shift", 0.0f);
    c.downBlockTypes = json.value<std::vector<std::string>>(
        "down_block_types",
        {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"});
    c.upBlockTypes = json.value<std::vector<std::string>>(
        "up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"});
    c.blockOutChannels = json.value<std::vector<int>>("block_out_channels", {320, 640, 1280, 1280});
    c.midBlockType = json.json().contains("mid_block_type") && json.json()["mid_block_type"].is_null()
                         ? ""
                         : json.value<std::string>("mid_block_type", "UNetMidBlock2DCrossAttn");
    if (!c.midBlockType.empty() && c.midBlockType != "UNetMidBlock2DCrossAttn")
        throw json.refuse("mid_block_type", "= \"" + c.midBlockType + "\" is not supported");
    c.downsamplePadding = json.value<int>("downsample_padding", 1);
    c.midBlockScaleFactor = json.value<float>("mid_block_scale_factor", 1.0f);
    if (json.json().contains("norm_num_groups") && json.json()["norm_num_groups"].is_null())
        throw json.refuse("norm_num_groups", "= null is not supported");
    c.normNumGroups = json.value<int>("norm_num_groups", 32);
    c.normEps = json.value<float>("norm_eps", 1e-5f);
    c.useLinearProjection = json.value<bool>("use_linear_projection", false);
    c.addAttention = false;
    c.attentionHeadDim = std::nullopt;

    const size_t blocks = c.blockOutChannels.size();
    if (blocks == 0 || blocks > 8) throw json.refuse("block_out_channels", "must have 1 to 8 entries");
    if (c.downBlockTypes.size() != blocks || c.upBlockTypes.size() != blocks)
        throw json.refuse("down_block_types / up_block_types",
                          "must have one entry per block_out_channels entry (" + std::to_string(blocks) +
                              ")");
    c.layersPerLevel = perBlock(json, "layers_per_block", 2, blocks);
    c.layersPerBlock = c.layersPerLevel.front();
    c.headsPerLevel = perBlock(json, "attention_head_dim", 8, blocks);
    c.transformerLayers = perBlock(json, "transformer_layers_per_block", 1, blocks);
    const auto cross = perBlock(json, "cross_attention_dim", 1280, blocks);
    if (std::adjacent_find(cross.begin(), cross.end(), std::not_equal_to<>()) != cross.end())
        throw json.refuse("cross_attention_dim", "differs between blocks: not supported");
    c.crossAttentionDim = cross.front();

    for (const auto& t : c.downBlockTypes)
        if (t != "DownBlock2D" && t != "CrossAttnDownBlock2D")
            throw json.refuse("down_block_types",
                              "entry \"" + t + "\" is not supported (DownBlock2D, CrossAttnDownBlock2D)");
    for (const auto& t : c.upBlockTypes)
        if (t != "UpBlock2D" && t != "CrossAttnUpBlock2D")
            throw json.refuse("up_block_types",
                              "entry \"" + t + "\" is not supported (UpBlock2D, CrossAttnUpBlock2D)");
    if (c.inChannels < 1 || c.outChannels < 1 || c.inChannels > 4096 || c.outChannels > 4096)
        throw json.refuse("in_channels / out_channels", "must be in 1..4096");
    if (c.normNumGroups < 1) throw json.refuse("norm_num_groups", "must be positive");
    if (c.crossAttentionDim < 1 || c.crossAttentionDim > 16384)
        throw json.refuse("cross_attention_dim", "must be in 1..16384");
    for (size_t i = 0; i < blocks; ++i) {
        const int ch = c.blockOutChannels[i];
        if (ch < 1 || ch > 65536) throw json.refuse("block_out_channels", "entries must be in 1..65536");
        if (ch % c.normNumGroups != 0)
            throw json.refuse("norm_num_groups", "must divide every block_out_channels entry");
        if (c.layersPerLevel[i] < 1 || c.layersPerLevel[i] > 64)
            throw json.refuse("layers_per_block", "entries must be in 1..64");
        if (c.headsPerLevel[i] < 1 || ch % c.headsPerLevel[i] != 0)
            throw json.refuse(
                "attention_head_dim",
                "(the number of heads, as diffusers reads it: " + std::to_string(c.headsPerLevel[i]) +
                    ") must divide block " + std::to_string(i) + "'s " + std::to_string(ch) + " channels");
        if (c.transformerLayers[i] < 1 || c.transformerLayers[i] > 64)
            throw json.refuse("transformer_layers_per_block", "entries must be in 1..64");
    }
    if (c.downsamplePadding < 0 || c.downsamplePadding > 1)
        throw json.refuse("downsample_padding", "must be 0 or 1");
    if (c.sampleSize < 0 || c.sampleSize % c.sizeMultiple() != 0)
        throw json.refuse("sample_size", "must be divisible by " + std::to_string(c.sizeMultiple()));
}

} // namespace attnlens
