#include "core/ops/conv.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnlens {

namespace {

// im2col: col[(c·kh + ky)·kw + kx][oy·ow + ox] = x[c][(oy·s + ky − padTop)·w + ox·s + kx − padLeft] (0 outside).
void im2col(const FeatureMap& x, int kh, int kw, const ConvGeometry& g, int oh, int ow, RowMatrix& col) {
    const int64_t channels = x.channels();
    col.resize(channels * kh * kw, static_cast<int64_t>(oh) * ow);
    const int h = x.height, w = x.width, s = g.stride;
    for (int64_t c = 0; c < channels; ++c) {
        const float* plane = x.data.row(c).data();
        for (int ky = 0; ky < kh; ++ky) {
            for (int kx = 0; kx < kw; ++kx) {
                float* dst = col.row((c * kh + ky) * kw + kx).data();
                // output columns whose input column ox·s + kx − padLeft lies inside [0, w)
                const int shift = kx - g.padLeft;
                const int ox0 = std::clamp((-shift + s - 1) / s, 0, ow);
                const int ox1 = std::clamp((w - 1 - shift) / s + 1, ox0, ow);
                for (int oy = 0; oy < oh; ++oy, dst += ow) {
                    const int iy = oy * s + ky - g.padTop;
                    if (iy < 0 || iy >= h || ox0 >= ox1 || w - 1 - shift < 0) {
                        std::fill(dst, dst + ow, 0.0f);
                        continue;
                    }
                    const float* src = plane + static_cast<int64_t>(iy) * w + shift;
                    std::fill(dst, dst + ox0, 0.0f);
                    if (s == 1) {
                        std::memcpy(dst + ox0, src + ox0, sizeof(float) * static_cast<size_t>(ox1 - ox0));
                    } else {
                        for (int ox = ox0; ox < ox1; ++ox) dst[ox] = src[ox * s];
                    }
                    std::fill(dst + ox1, dst + ow, 0.0f);
                }
            }
        }
    }
}

} // namespace

FeatureMap conv2d(const FeatureMap& x, const Tensor& weight, const Tensor& bias, const ConvGeometry& g) {
    if (weight.rank() != 4)
        throw Error("conv2d: weight has shape " + shapeToString(weight.shape()) + ", expected [out, in, kh, kw]");
    const int64_t cout = weight.dim(0), cin = weight.dim(1);
    const int kh = static_cast<int>(weight.dim(2)), kw = static_cast<int>(weight.dim(3));
    if (x.channels() != cin)
        throw Error("conv2d: input has " + std::to_string(x.channels()) + " channels, weight expects " +
                    std::to_string(cin));
    if (x.data.cols() != x.pixels()) throw Error("conv2d: feature map data does not match its size");
    const int oh = (x.height + g.padTop + g.padBottom - kh) / g.stride + 1;
    const int ow = (x.width + g.padLeft + g.padRight - kw) / g.stride + 1;
    if (oh <= 0 || ow <= 0 || g.stride <= 0)
        throw Error("conv2d: a " + std::to_string(x.height) + "x" + std::to_string(x.width) + " input is too small for a " +
                    std::to_string(kh) + "x" + std::to_string(kw) + " kernel");
    FeatureMap out{RowMatrix(cout, static_cast<int64_t>(oh) * ow), oh, ow};
    const ConstMatrixMap w(weight.data(), cout, cin * kh * kw); // [out, in·kh·kw]
    const bool pointwise = kh == 1 && kw == 1 && g.stride == 1 && g.padTop == 0 && g.padLeft == 0 &&
                           g.padBottom == 0 && g.padRight == 0;
    if (pointwise) {
        out.data.noalias() = w * x.data;
    } else {
        thread_local RowMatrix col; // reused between calls: im2col buffers reach tens of MB
        im2col(x, kh, kw, g, oh, ow, col);
        out.data.noalias() = w * col;
        if (col.size() > (int64_t{64} << 20)) col.resize(0, 0); // do not keep a huge buffer alive
    }
    if (!bias.empty()) {
        if (bias.numel() != cout)
            throw Error("conv2d: bias has " + std::to_string(bias.numel()) + " values, expected " + std::to_string(cout));
        out.data.colwise() += ConstVectorMap(bias.data(), cout);
    }
    return out;
}

void groupNormInPlace(FeatureMap& x, int groups, const Tensor& weight, const Tensor& bias, float eps) {
    const int64_t channels = x.channels();
    if (groups <= 0 || channels % groups != 0)
        throw Error("group norm: " + std::to_string(channels) + " channels are not divisible into " +
                    std::to_string(groups) + " groups");
    if (weight.numel() != channels || bias.numel() != channels)
        throw Error("group norm: weight/bias sizes do not match " + std::to_string(channels) + " channels");
    const int64_t per = channels / groups;
    const int64_t n = per * x.pixels();
    for (int gi = 0; gi < groups; ++gi) {
        // a group is `per` consecutive rows: contiguous in the row-major buffer
        float* p = x.data.data() + gi * n;
        const Eigen::Map<const Eigen::ArrayXf> group(p, n);
        const double mean = group.cast<double>().sum() / static_cast<double>(n);
        const double sq = (group.cast<double>() - mean).square().sum();
        const float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(n) + eps));
        const float m = static_cast<float>(mean);
        for (int64_t c = 0; c < per; ++c) {
            const int64_t ch = gi * per + c;
            const float a = inv * weight.data()[ch];
            const float b = bias.data()[ch] - m * a;
            auto row = x.data.row(ch).array();
            row = row * a + b;
        }
    }
}

void siluInPlace(Eigen::Ref<RowMatrix> x) {
    auto a = x.array();
    a = a / (1.0f + (-a).exp());
}

FeatureMap upsampleNearest2x(const FeatureMap& x) {
    const int h = x.height, w = x.width;
    FeatureMap out{RowMatrix(x.channels(), int64_t{4} * h * w), 2 * h, 2 * w};
    for (int64_t c = 0; c < x.channels(); ++c) {
        const float* src = x.data.row(c).data();
        float* dst = out.data.row(c).data();
        for (int y = 0; y < h; ++y) {
            float* r0 = dst + int64_t{2} * y * 2 * w;
            for (int xx = 0; xx < w; ++xx) r0[2 * xx] = r0[2 * xx + 1] = src[int64_t{y} * w + xx];
            std::memcpy(r0 + 2 * w, r0, sizeof(float) * static_cast<size_t>(2 * w));
        }
    }
    return out;
}

FeatureMap concatChannels(const FeatureMap& a, const FeatureMap& b) {
    if (a.height != b.height || a.width != b.width)
        throw Error("concat: feature maps of " + std::to_string(a.height) + "x" + std::to_string(a.width) + " and " +
                    std::to_string(b.height) + "x" + std::to_string(b.width) + " differ in size");
    FeatureMap out{RowMatrix(a.channels() + b.channels(), a.pixels()), a.height, a.width};
    out.data.topRows(a.channels()) = a.data;
    out.data.bottomRows(b.channels()) = b.data;
    return out;
}

} // namespace attnlens
