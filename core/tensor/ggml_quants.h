#pragma once
// The tensor types of llama.cpp's GGML (ggml.h's numbering, as GGUF files store them) and their conversion
// to float32, row by row: the plain floats (F32, F16, BF16) and the block quantisations people download —
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (blocks of 32 with one fp16 scale, and a minimum or fifth bits), and the
// "K" super-blocks of 256 (Q2_K … Q6_K: 16 or 8 sub-blocks whose scales are themselves quantised). The
// layouts and formulas are ggml-quants.c's dequantize_row_* (read, not copied; written again here).
//
//   const GgmlTypeInfo* t = ggmlTypeInfo(12);                 // Q4_K: 256 per block, 144 bytes
//   std::vector<float> row(n);
//   dequantizeGgmlRow(GgmlType::Q4_K, bytes, row.data(), n);  // n a multiple of t->blockSize
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string_view>

namespace attnlens {

enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    BF16 = 30,
};

struct GgmlTypeInfo {
    GgmlType type;
    std::string_view name;   // "Q4_K", as llama.cpp prints it
    int64_t blockSize = 1;   // elements per block
    int64_t blockBytes = 4;  // bytes per block
    bool dequantizes = true; // dequantizeGgmlRow converts it (the integer types and the IQ family do not)
};

// The type's layout, or nullptr for a number ggml does not define (or one this build does not know: the IQ
// and ternary families are named by their number in errors).
const GgmlTypeInfo* ggmlTypeInfo(uint32_t type);
inline const GgmlTypeInfo* ggmlTypeInfo(GgmlType type) {
    return ggmlTypeInfo(static_cast<uint32_t>(type));
}

// Bytes of n elements of `type` (n a multiple of its block size); -1 when it is not, or when the bytes pass
// what an int64_t holds.
int64_t ggmlBytes(const GgmlTypeInfo& type, int64_t n);

// n elements stored as `type` at src → float32 dst. n must be a multiple of the block size and the type one
// that dequantizes (callers check with ggmlTypeInfo; here it is asserted). src needs no alignment.
void dequantizeGgmlRow(GgmlType type, const unsigned char* src, float* dst, int64_t n);

} // namespace attnlens
