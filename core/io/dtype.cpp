#include "core/io/dtype.h"

#include <bit>
#include <cmath>

namespace attnlens {

namespace {

struct DTypeEntry {
    DType dtype;
    std::string_view name;
    int64_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::F32, "F32", 4}, {DType::F16, "F16", 2},   {DType::BF16, "BF16", 2}, {DType::F64, "F64", 8},
    {DType::I64, "I64", 8}, {DType::I32, "I32", 4},   {DType::I16, "I16", 2},   {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},   {DType::Bool, "BOOL", 1}, {DType::Ggml, "GGML", 0},
};

} // namespace

std::string_view dtypeName(DType dtype) {
    for (const auto& e : kDTypes)
        if (e.dtype == dtype) return e.name;
    return "other";
}

std::optional<DType> parseDType(std::string_view name) {
    for (const auto& e : kDTypes)
        if (e.name == name) return e.dtype;
    // Defined by the format but rarely used: we keep such tensors listed but cannot load them.
    static constexpr std::string_view kOther[] = {"U16", "U32", "U64", "F8_E4M3", "F8_E5M2"};
    for (auto o : kOther)
        if (o == name) return DType::Other;
    return std::nullopt;
}

int64_t dtypeSize(DType dtype) {
    for (const auto& e : kDTypes)
        if (e.dtype == dtype) return e.size;
    return 0;
}

float halfToFloat(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else { // subnormal: normalise
            int shift = 0;
            while (!(mantissa & 0x400u)) {
                mantissa <<= 1;
                ++shift;
            }
            mantissa &= 0x3ffu;
            bits = sign | (static_cast<uint32_t>(127 - 15 + 1 - shift) << 23) | (mantissa << 13);
        }
    } else if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else {
        bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    }
    return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(uint16_t b) {
    return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t floatToHalf(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) // inf or nan
        return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
        return static_cast<uint16_t>(sign | 0x7c00u);
    if (absx < 0x38800000u) { // below the smallest normal half: subnormal or zero
        const float a = std::bit_cast<float>(absx);
        // subnormal step is 2^-24; nearbyint rounds half to even in the default mode
        const auto m = static_cast<uint32_t>(std::nearbyint(a * 16777216.0f));
        return static_cast<uint16_t>(sign | m);
    }
    uint32_t mant = absx & 0x7fffffu;
    uint32_t exp = (absx >> 23) - 127 + 15;
    uint32_t half = (exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half; // carry into exponent is correct
    return static_cast<uint16_t>(sign | half);
}

uint16_t floatToBFloat16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u); // NaN stays NaN
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

} // namespace attnlens
