#include "core/export/tensor_json.h"

#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <fstream>

namespace attnlens {

void appendFloat(std::string& out, float v) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? end : buf);
}

namespace {

void appendLevel(std::string& out, const float*& data, const Shape& shape, size_t axis) {
    if (axis == shape.size()) {
        appendFloat(out, *data++);
        return;
    }
    out += '[';
    for (int64_t i = 0; i < shape[axis]; ++i) {
        if (i) out += ',';
        appendLevel(out, data, shape, axis + 1);
    }
    out += ']';
}

} // namespace

void appendNested(std::string& out, const float* data, const Shape& shape) {
    appendLevel(out, data, shape, 0);
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw Error("'" + path + "': cannot create file");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw Error("'" + path + "': write failed");
}

std::string textRunJson(const TextRunJson& run) {
    using Json = nlohmann::json;
    std::string json = "{\"model_type\": " + Json(run.modelType).dump() +
                       ", \"tokens\": " + Json(run.tokens).dump() + ", \"ids\": " + Json(run.ids).dump() +
                       ", \"attentions\": ";
    appendNested(json, run.attentions->data(), run.attentions->shape());
    if (run.valueWeighted) {
        json += ", \"value_weighted\": ";
        appendNested(json, run.valueWeighted->data(), run.valueWeighted->shape());
    }
    if (run.logits) {
        json += ", \"logits\": ";
        appendNested(json, run.logits, run.logitsShape);
    }
    if (run.generated) json += ", \"generated_ids\": " + Json(*run.generated).dump();
    if (run.hidden) {
        json += ", \"last_hidden_state\": ";
        appendNested(json, run.hidden, run.hiddenShape);
    }
    json += "}\n";
    return json;
}

} // namespace attnlens
