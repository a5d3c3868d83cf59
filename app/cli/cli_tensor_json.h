#pragma once
// Streaming JSON for big float tensors: nested arrays written straight into a string (a ViT-B/16's
// attention is 5.6 M numbers, too many for a nlohmann::json tree). Floats in shortest round-trip form.

#include "core/tensor/tensor.h"

#include <string>

namespace cli {

void appendFloat(std::string& out, float v);
// data of `shape` (row-major) as nested arrays, e.g. [2, 3] → [[a,b,c],[d,e,f]]; rank 0 → one number.
void appendNested(std::string& out, const float* data, const attnlens::Shape& shape);
// Writes text to path; throws attnlens::Error naming the path on failure.
void writeText(const std::string& path, const std::string& text);

} // namespace cli
