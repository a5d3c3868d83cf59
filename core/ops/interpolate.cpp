#include "core/ops/interpolate.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnlens {

namespace {

constexpr float kA = -0.75f;

float cubicNear(float x) {
    return ((kA + 2.0f) * x - (kA + 3.0f)) * x * x + 1.0f;
} // |x| <= 1
float cubicFar(float x) {
    return ((kA * x - 5.0f * kA) * x + 8.0f * kA) * x - 4.0f * kA;
} // 1 < |x| < 2

struct Taps {
    int64_t index[4];
    float weight[4];
};

// Source taps for one output index along an axis of `inSize` samples.
Taps tapsFor(int64_t dst, int64_t inSize, int64_t outSize, std::optional<double> scale) {
    const float step = (scale && *scale > 0.0) ? static_cast<float>(1.0 / *scale)
                                               : static_cast<float>(inSize) / static_cast<float>(outSize);
    const float real = step * (static_cast<float>(dst) + 0.5f) - 0.5f;
    const int64_t base = std::min(static_cast<int64_t>(std::floor(real)), inSize - 1);
    const float t = std::clamp(real - static_cast<float>(base), 0.0f, 1.0f);
    Taps taps;
    taps.weight[0] = cubicFar(t + 1.0f);
    taps.weight[1] = cubicNear(t);
    taps.weight[2] = cubicNear(1.0f - t);
    taps.weight[3] = cubicFar(2.0f - t);
    for (int i = 0; i < 4; ++i)
        taps.index[i] = std::clamp<int64_t>(base - 1 + i, 0, inSize - 1);
    return taps;
}

// PyTorch's antialiased bicubic filter (upsample's aa_filter, A = −0.5).
float aaCubic(float x) {
    constexpr float a = -0.5f;
    x = std::abs(x);
    if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
    if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
    return 0.0f;
}

struct AaAxis {
    int64_t taps = 0;           // taps per output sample (the widest window)
    std::vector<int64_t> first; // first input index per output sample
    std::vector<int64_t> count; // taps used per output sample
    std::vector<float> weights; // [out, taps]
};

// _compute_indices_weights_aa: the window [⌊c − s + 0.5⌋, ⌊c + s + 0.5⌋) ∩ [0, in) around c = (i +
// 0.5)·scale.
AaAxis aaAxis(int64_t inSize, int64_t outSize) {
    const float scale = static_cast<float>(inSize) / static_cast<float>(outSize);
    const float support = scale >= 1.0f ? 2.0f * scale : 2.0f;
    const float invScale = scale >= 1.0f ? 1.0f / scale : 1.0f;
    AaAxis axis;
    axis.taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
    axis.first.resize(static_cast<size_t>(outSize));
    axis.count.resize(static_cast<size_t>(outSize));
    axis.weights.assign(static_cast<size_t>(outSize * axis.taps), 0.0f);
    for (int64_t i = 0; i < outSize; ++i) {
        const float center = scale * (static_cast<float>(i) + 0.5f);
        const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5f), 0);
        const int64_t n = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5f), inSize) - lo;
        float* w = &axis.weights[static_cast<size_t>(i * axis.taps)];
        float total = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
            w[j] = aaCubic((static_cast<float>(j + lo) - center + 0.5f) * invScale);
            total += w[j];
        }
        for (int64_t j = 0; j < n && total != 0.0f; ++j)
            w[j] /= total;
        axis.first[static_cast<size_t>(i)] = lo;
        axis.count[static_cast<size_t>(i)] = n;
    }
    return axis;
}

// One axis of [C, H, W] resampled: `alongWidth` picks W (stride 1) or H (stride W).
Tensor aaResample(const Tensor& in, int64_t outSize, bool alongWidth) {
    const int64_t channels = in.dim(0), h = in.dim(1), w = in.dim(2);
    const AaAxis axis = aaAxis(alongWidth ? w : h, outSize);
    const int64_t oh = alongWidth ? h : outSize, ow = alongWidth ? outSize : w;
    Tensor out({channels, oh, ow});
    for (int64_t c = 0; c < channels; ++c)
        for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
                const int64_t i = alongWidth ? x : y;
                const float* wt = &axis.weights[static_cast<size_t>(i * axis.taps)];
                const int64_t lo = axis.first[static_cast<size_t>(i)];
                float sum = 0.0f;
                for (int64_t j = 0; j < axis.count[static_cast<size_t>(i)]; ++j)
                    sum += wt[j] * (alongWidth ? in.data()[(c * h + y) * w + lo + j]
                                               : in.data()[(c * h + lo + j) * w + x]);
                out.data()[(c * oh + y) * ow + x] = sum;
            }
    return out;
}

} // namespace

Tensor bicubicInterpolateAntialias(const Tensor& input, int outH, int outW) {
    if (input.rank() != 3)
        throw Error("bicubicInterpolateAntialias: expected [C, H, W], got " + shapeToString(input.shape()));
    if (outH < 1 || outW < 1) throw Error("bicubicInterpolateAntialias: output size must be positive");
    Tensor x = input;
    if (x.dim(2) != outW) x = aaResample(x, outW, true);
    if (x.dim(1) != outH) x = aaResample(x, outH, false);
    return x;
}

Tensor bicubicInterpolate(const Tensor& input, int outH, int outW, std::optional<double> scaleH,
                          std::optional<double> scaleW) {
    if (input.rank() != 3)
        throw Error("bicubicInterpolate: expected [C, H, W], got " + shapeToString(input.shape()));
    if (outH < 1 || outW < 1) throw Error("bicubicInterpolate: output size must be positive");
    const int64_t channels = input.dim(0), inH = input.dim(1), inW = input.dim(2);
    Tensor out({channels, outH, outW}); // [C, outH, outW]
    std::vector<Taps> xs(outW);
    for (int x = 0; x < outW; ++x)
        xs[x] = tapsFor(x, inW, outW, scaleW);
    for (int y = 0; y < outH; ++y) {
        const Taps ty = tapsFor(y, inH, outH, scaleH);
        for (int64_t c = 0; c < channels; ++c) {
            const float* plane = input.data() + c * inH * inW;
            float* dst = out.data() + (c * outH + y) * outW;
            for (int x = 0; x < outW; ++x) {
                const Taps& tx = xs[x];
                float rows[4];
                for (int i = 0; i < 4; ++i) {
                    const float* row = plane + ty.index[i] * inW;
                    rows[i] = row[tx.index[0]] * tx.weight[0] + row[tx.index[1]] * tx.weight[1] +
                              row[tx.index[2]] * tx.weight[2] + row[tx.index[3]] * tx.weight[3];
                }
                dst[x] = rows[0] * ty.weight[0] + rows[1] * ty.weight[1] + rows[2] * ty.weight[2] +
                         rows[3] * ty.weight[3];
            }
        }
    }
    return out;
}

} // namespace attnlens
