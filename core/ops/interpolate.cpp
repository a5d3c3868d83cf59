#include "core/ops/interpolate.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>

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

} // namespace

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
