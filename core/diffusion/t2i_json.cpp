#include "core/diffusion/t2i_json.h"

#include "core/export/tensor_json.h"
#include "core/io/json_file.h"

namespace attnlens {

void writeT2iRunJson(const std::string& path, const T2iResult& r, const T2iRequest& request) {
    Json top = {{"scheduler", samplerName(r.sampler)},
                {"steps", request.steps},
                {"guidance", request.guidance},
                {"timesteps", r.timesteps},
                {"ids", r.ids},
                {"tokens", r.tokens},
                {"prompt_tokens", r.promptTokens},
                {"truncated", r.truncated}};
    std::string text = top.dump();
    text.pop_back();
    text += ",\"final_latents\":";
    appendNested(text, r.finalLatents.data(), r.finalLatents.shape());
    if (!r.image.empty()) { // [H][W][C] as the pipeline's output_type="np"
        const int64_t channels = r.image.dim(0), plane = r.image.dim(1) * r.image.dim(2);
        Tensor hwc({r.image.dim(1), r.image.dim(2), channels});
        for (int64_t p = 0; p < plane; ++p)
            for (int64_t c = 0; c < channels; ++c)
                hwc.data()[p * channels + c] = r.image.data()[c * plane + p];
        text += ",\"image\":";
        appendNested(text, hwc.data(), hwc.shape());
    }
    text += ",\"per_step\":[";
    for (size_t i = 0; i < r.steps.size(); ++i) {
        const T2iStep& s = r.steps[i];
        text += (i ? ",{" : "{") + std::string("\"timestep\":") + Json(s.timestep).dump() +
                ",\"cross_attention\":[";
        for (size_t m = 0; m < s.maps.size(); ++m) {
            const T2iCrossMap& c = s.maps[m];
            std::string head = Json{
                {"name", c.layer.name},
                {"spatial", {c.layer.height, c.layer.width}},
                {"heads",
                 c.layer.heads}}.dump();
            head.pop_back();
            text += (m ? "," : "") + head + ",\"cond\":";
            appendNested(text, c.cond.data(), c.cond.shape());
            if (!c.uncond.empty()) {
                text += ",\"uncond\":";
                appendNested(text, c.uncond.data(), c.uncond.shape());
            }
            if (!c.condWeighted.empty()) { // --value-weighted
                text += ",\"cond_value_weighted\":";
                appendNested(text, c.condWeighted.data(), c.condWeighted.shape());
            }
            if (!c.uncondWeighted.empty()) {
                text += ",\"uncond_value_weighted\":";
                appendNested(text, c.uncondWeighted.data(), c.uncondWeighted.shape());
            }
            text += '}';
        }
        text += "]}";
    }
    text += "]}\n";
    writeText(path, text);
}

} // namespace attnlens
