#include "core/tensor/ggml_quants.h"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <limits>

namespace attnlens {

namespace {

constexpr int64_t kQK = 256; // the K super-block

constexpr std::array kTypes = {
    GgmlTypeInfo{GgmlType::F32, "F32", 1, 4},        GgmlTypeInfo{GgmlType::F16, "F16", 1, 2},
    GgmlTypeInfo{GgmlType::Q4_0, "Q4_0", 32, 18},    GgmlTypeInfo{GgmlType::Q4_1, "Q4_1", 32, 20},
    GgmlTypeInfo{GgmlType::Q5_0, "Q5_0", 32, 22},    GgmlTypeInfo{GgmlType::Q5_1, "Q5_1", 32, 24},
    GgmlTypeInfo{GgmlType::Q8_0, "Q8_0", 32, 34},    GgmlTypeInfo{GgmlType::Q8_1, "Q8_1", 32, 36, false},
    GgmlTypeInfo{GgmlType::Q2_K, "Q2_K", kQK, 84},   GgmlTypeInfo{GgmlType::Q3_K, "Q3_K", kQK, 110},
    GgmlTypeInfo{GgmlType::Q4_K, "Q4_K", kQK, 144},  GgmlTypeInfo{GgmlType::Q5_K, "Q5_K", kQK, 176},
    GgmlTypeInfo{GgmlType::Q6_K, "Q6_K", kQK, 210},  GgmlTypeInfo{GgmlType::Q8_K, "Q8_K", kQK, 292, false},
    GgmlTypeInfo{GgmlType::I8, "I8", 1, 1, false},   GgmlTypeInfo{GgmlType::I16, "I16", 1, 2, false},
    GgmlTypeInfo{GgmlType::I32, "I32", 1, 4, false}, GgmlTypeInfo{GgmlType::I64, "I64", 1, 8, false},
    GgmlTypeInfo{GgmlType::F64, "F64", 1, 8, false}, GgmlTypeInfo{GgmlType::BF16, "BF16", 1, 2},
};

float half(const unsigned char* p) { // F16C: exact for every half
    return _cvtsh_ss(static_cast<unsigned short>(p[0] | (p[1] << 8)));
}

// Blocks of 32: a 4- or 5-bit code per element, low nibbles the first 16, high nibbles the last 16.
void legacyBlock(GgmlType type, const unsigned char* b, float* y) {
    const float d = half(b);
    const bool withMin = type == GgmlType::Q4_1 || type == GgmlType::Q5_1;
    const float m = withMin ? half(b + 2) : 0.0f;
    const bool fiveBits = type == GgmlType::Q5_0 || type == GgmlType::Q5_1;
    const unsigned char* p = b + (withMin ? 4 : 2);
    uint32_t qh = 0;
    if (fiveBits) {
        qh = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
        p += 4;
    }
    const int offset = withMin ? 0 : fiveBits ? 16 : 8;
    for (int j = 0; j < 16; ++j) {
        int lo = p[j] & 0x0F, hi = p[j] >> 4;
        if (fiveBits) {
            lo |= int((qh >> j) << 4) & 0x10;
            hi |= int(qh >> (j + 12)) & 0x10;
        }
        y[j] = float(lo - offset) * d + m;
        y[j + 16] = float(hi - offset) * d + m;
    }
}

// The 6-bit scale and minimum of sub-block j of a Q4_K / Q5_K super-block (12 packed bytes).
void scaleMin(int j, const unsigned char* q, int& sc, int& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Q4_K (qh null) and Q5_K: 8 sub-blocks of 32, value = d·sc·q − dmin·m.
void k45Block(const unsigned char* b, bool five, float* y) {
    const float d = half(b), dmin = half(b + 2);
    const unsigned char* scales = b + 4;
    const unsigned char* qh = five ? b + 16 : nullptr;
    const unsigned char* q = b + (five ? 48 : 16);
    unsigned u1 = 1, u2 = 2;
    for (int j = 0, is = 0; j < kQK; j += 64, is += 2, q += 32, u1 <<= 2, u2 <<= 2) {
        int sc = 0, m = 0;
        scaleMin(is, scales, sc, m);
        const float d1 = d * float(sc), m1 = dmin * float(m);
        scaleMin(is + 1, scales, sc, m);
        const float d2 = d * float(sc), m2 = dmin * float(m);
        for (int l = 0; l < 32; ++l)
            *y++ = d1 * float((q[l] & 0xF) + (qh && (qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l)
            *y++ = d2 * float((q[l] >> 4) + (qh && (qh[l] & u2) ? 16 : 0)) - m2;
    }
}

// Q2_K: 16 sub-blocks of 16 with a 4-bit scale and minimum each; 2-bit codes.
void q2kBlock(const unsigned char* b, float* y) {
    const unsigned char* scales = b;
    const unsigned char* q = b + 16;
    const float d = half(b + 80), dmin = half(b + 82);
    int is = 0;
    for (int n = 0; n < kQK; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
            for (int half16 = 0; half16 < 2; ++half16) {
                const int sc = scales[is++];
                const float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
                for (int l = 0; l < 16; ++l)
                    *y++ = dl * float((q[l + 16 * half16] >> shift) & 3) - ml;
            }
}

// Q3_K: 16 sub-blocks of 16 with 6-bit signed scales; 2-bit codes plus a high bit in hmask.
void q3kBlock(const unsigned char* b, float* y) {
    const unsigned char* hm = b;
    const unsigned char* q = b + 32;
    const unsigned char* packed = b + 96;
    const float dAll = half(b + 108);
    int scales[16];
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
        scales[j] = (low | (((packed[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
    }
    int is = 0;
    unsigned m = 1;
    for (int n = 0; n < kQK; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2, m <<= 1)
            for (int half16 = 0; half16 < 2; ++half16) {
                const float dl = dAll * float(scales[is++]);
                for (int l = 16 * half16; l < 16 * half16 + 16; ++l)
                    *y++ = dl * float(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
            }
}

// Q6_K: 16 sub-blocks of 16 with 8-bit signed scales; 4 low bits in ql, 2 high bits in qh.
void q6kBlock(const unsigned char* b, float* y) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = half(b + 208);
    for (int n = 0; n < kQK; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * float(sc[is]) * float(q1);
            y[l + 32] = d * float(sc[is + 2]) * float(q2);
            y[l + 64] = d * float(sc[is + 4]) * float(q3);
            y[l + 96] = d * float(sc[is + 6]) * float(q4);
        }
}

} // namespace

const GgmlTypeInfo* ggmlTypeInfo(uint32_t type) {
    for (const GgmlTypeInfo& t : kTypes)
        if (static_cast<uint32_t>(t.type) == type) return &t;
    return nullptr;
}

int64_t ggmlBytes(const GgmlTypeInfo& type, int64_t n) {
    if (n < 0 || n % type.blockSize != 0) return -1;
    const int64_t blocks = n / type.blockSize;
    if (blocks > std::numeric_limits<int64_t>::max() / type.blockBytes) return -1; // (fuzz_gguf: 7e18 × 4)
    return blocks * type.blockBytes;
}

void dequantizeGgmlRow(GgmlType type, const unsigned char* src, float* dst, int64_t n) {
    const GgmlTypeInfo* info = ggmlTypeInfo(type);
    assert(info && info->dequantizes && n % info->blockSize == 0);
    const int64_t blocks = n / info->blockSize;
    for (int64_t i = 0; i < blocks; ++i) {
        const unsigned char* b = src + i * info->blockBytes;
        float* y = dst + i * info->blockSize;
        switch (type) {
        case GgmlType::F32:
            std::memcpy(y, b, 4);
            break;
        case GgmlType::F16:
            *y = half(b);
            break;
        case GgmlType::BF16:
            *y = std::bit_cast<float>(static_cast<uint32_t>(b[0] | (b[1] << 8)) << 16);
            break;
        case GgmlType::Q4_0:
        case GgmlType::Q4_1:
        case GgmlType::Q5_0:
        case GgmlType::Q5_1:
            legacyBlock(type, b, y);
            break;
        case GgmlType::Q8_0: {
            const float d = half(b);
            for (int j = 0; j < 32; ++j)
                y[j] = float(static_cast<int8_t>(b[2 + j])) * d;
            break;
        }
        case GgmlType::Q2_K:
            q2kBlock(b, y);
            break;
        case GgmlType::Q3_K:
            q3kBlock(b, y);
            break;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
            k45Block(b, type == GgmlType::Q5_K, y);
            break;
        case GgmlType::Q6_K:
            q6kBlock(b, y);
            break;
        default:
            assert(false);
        }
    }
}

} // namespace attnlens
