#include "core/tensor/half_matrix.h"

#include <immintrin.h>

#include <bit>
#include <cstring>

namespace attnlens {

HalfMatrix::HalfMatrix(Format format, int64_t rows, int64_t cols, const uint16_t* data,
                       std::shared_ptr<const void> owner)
    : m_data(data), m_bytes(reinterpret_cast<const unsigned char*>(data)), m_rowBytes(cols * 2),
      m_owner(std::move(owner)), m_rows(rows), m_cols(cols), m_format(format) {}

HalfMatrix::HalfMatrix(GgmlType type, int64_t rows, int64_t cols, const unsigned char* data,
                       std::shared_ptr<const void> owner)
    : m_bytes(data), m_rowBytes(ggmlBytes(*ggmlTypeInfo(type), cols)), m_ggml(type),
      m_owner(std::move(owner)), m_rows(rows), m_cols(cols), m_format(Format::Ggml) {}

void HalfMatrix::rowsToFloat(int64_t first, int64_t count, float* out) const {
    if (m_format == Format::Ggml) {
        for (int64_t r = 0; r < count; ++r)
            dequantizeGgmlRow(m_ggml, m_bytes + (first + r) * m_rowBytes, out + r * m_cols, m_cols);
    } else if (m_format == Format::BF16)
        widenBf16(row(first), count * m_cols, out);
    else
        widenHalf(row(first), count * m_cols, out);
}

void widenBf16(const uint16_t* in, int64_t n, float* out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) { // bfloat16 is the high half of a float32
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
        _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
    }
    for (; i < n; ++i)
        out[i] = std::bit_cast<float>(static_cast<uint32_t>(in[i]) << 16);
}

void widenHalf(const uint16_t* in, int64_t n, float* out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) // F16C's conversion is exact for every half (subnormals, inf, NaN)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
    if (i < n) {
        alignas(16) uint16_t tail[8] = {};
        alignas(32) float wide[8];
        std::memcpy(tail, in + i, static_cast<size_t>(n - i) * 2);
        _mm256_store_ps(wide, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(tail))));
        std::memcpy(out + i, wide, static_cast<size_t>(n - i) * 4);
    }
}

} // namespace attnlens
