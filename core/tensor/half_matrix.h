#pragma once
// HalfMatrix: a [rows, cols] row-major matrix of 16-bit floats kept as the checkpoint stores them — bfloat16
// or IEEE half — so that a model stored in 16 bits stays that size in memory (a 0.5B-parameter LLM is 1 GB,
// not 2 GB of float32). Usually a view on the memory-mapped file, kept alive by a shared handle; copying a
// HalfMatrix shares the buffer. Computation reads rows converted to float32 exactly (ops/half_linear.h).

#include "core/tensor/ggml_quants.h"

#include <cstdint>
#include <memory>

namespace attnlens {

class HalfMatrix {
public:
    // Ggml: rows of GGML blocks (a GGUF file's quantised weight), decoded row by row (ggml_quants.h).
    enum class Format : uint8_t { BF16, F16, Ggml };

    HalfMatrix() = default;
    // A view on rows × cols elements at `data` (2-byte aligned), kept alive by `owner`.
    HalfMatrix(Format format, int64_t rows, int64_t cols, const uint16_t* data,
               std::shared_ptr<const void> owner);
    // A view on rows × cols elements of GGML blocks at `data` (cols a multiple of the block size; no
    // alignment).
    HalfMatrix(GgmlType type, int64_t rows, int64_t cols, const unsigned char* data,
               std::shared_ptr<const void> owner);

    bool empty() const { return m_bytes == nullptr; }
    Format format() const { return m_format; }
    GgmlType ggmlType() const { return m_ggml; }
    int64_t rows() const { return m_rows; }
    int64_t cols() const { return m_cols; }
    const uint16_t* row(int64_t r) const { return m_data + r * m_cols; } // 16-bit formats
    int64_t bytes() const { return m_rows * m_rowBytes; }

    // Rows [first, first + count) as float32 (exact), into out [count, cols] (row stride cols).
    void rowsToFloat(int64_t first, int64_t count, float* out) const;

private:
    const uint16_t* m_data = nullptr;       // 16-bit formats
    const unsigned char* m_bytes = nullptr; // every format
    int64_t m_rowBytes = 0;
    GgmlType m_ggml = GgmlType::F16;
    std::shared_ptr<const void> m_owner;
    int64_t m_rows = 0, m_cols = 0;
    Format m_format = Format::BF16;
};

// n 16-bit values to float32, exactly (AVX2 + F16C, the build's baseline).
void widenBf16(const uint16_t* in, int64_t n, float* out);
void widenHalf(const uint16_t* in, int64_t n, float* out);

} // namespace attnlens
