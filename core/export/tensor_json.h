#pragma once
// Streaming JSON for big float tensors: nested arrays written straight into a string (a ViT-B/16's
// attention is 5.6 M numbers, too many for a nlohmann::json tree). Floats in shortest round-trip form.

#include "core/tensor/tensor.h"

#include <string>
#include <vector>

namespace attnlens {

void appendFloat(std::string& out, float v);
// data of `shape` (row-major) as nested arrays, e.g. [2, 3] → [[a,b,c],[d,e,f]]; rank 0 → one number.
void appendNested(std::string& out, const float* data, const Shape& shape);
// Writes text to path; throws attnlens::Error naming the path on failure.
void writeText(const std::string& path, const std::string& text);

// The JSON of a text model's run, as `attnlens-cli text --json` and the Text page's export write it:
// {"model_type", "tokens", "ids", "attentions": [L][H][T][T]} plus, when given, "logits": [T][V] and
// "generated_ids".
struct TextRunJson {
    std::string modelType;
    std::vector<std::string> tokens;
    std::vector<int> ids;
    const Tensor* attentions = nullptr;    // [L, H, T, T]
    const Tensor* valueWeighted = nullptr; // "value_weighted" [L, H, T, T]; or absent
    const float* logits = nullptr;         // row-major, logitsShape [T, V]; or absent
    Shape logitsShape = {};
    const std::vector<int>* generated = nullptr;
    const float* hidden = nullptr; // "last_hidden_state", row-major, hiddenShape [T, D]; or absent
    Shape hiddenShape = {};
};
std::string textRunJson(const TextRunJson& run);

} // namespace attnlens
