#pragma once
// Element types of checkpoint tensors (safetensors' names; PyTorch storage types map onto them) and the
// exact conversions of the 16-bit float formats to float32.

#include <cstdint>
#include <optional>
#include <string_view>

namespace attnlens {

// Ggml: one of GGML's block types (GGUF files; TensorInfo::ggml says which).
enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool, Ggml, Other };

std::string_view dtypeName(DType dtype);
// Parses a safetensors dtype string; nullopt for a string the format does not define.
std::optional<DType> parseDType(std::string_view name);
// Bytes per element; 0 for Other.
int64_t dtypeSize(DType dtype);
// The types a model's weights may have (loaded as float32).
inline bool isFloatWeightType(DType dtype) {
    return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::Ggml;
}

// IEEE half and bfloat16 to float (exact; subnormals, infinities and NaN preserved).
float halfToFloat(uint16_t h);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToHalf(float f);     // round-to-nearest-even; used by writers and tests
uint16_t floatToBFloat16(float f); // round-to-nearest-even

} // namespace attnlens
