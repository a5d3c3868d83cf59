#include "core/ops/conv.h"

#include "core/ops/gemm.h"
#include "core/ops/nn.h"
#include "core/util/error.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

namespace attnlens {

namespace {

// Work below this many floats per chunk stays on one thread (util/parallel.h).
constexpr int64_t kParallelFloats = int64_t{1} << 14;

// im2col: col[(c·kh + ky)·kw + kx][oy·ow + ox] = x[c][(oy·s + ky − padTop)·w + ox·s + kx − padLeft] (0
// outside), for input channels [c0, c1) (col already sized).
void im2colChannels(const FeatureMap& x, int kh, int kw, const ConvGeometry& g, int oh, int ow,
                    RowMatrix& col, int64_t c0, int64_t c1) {
    const int h = x.height, w = x.width, s = g.stride;
    for (int64_t c = c0; c < c1; ++c) {
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
                        for (int ox = ox0; ox < ox1; ++ox)
                            dst[ox] = src[ox * s];
                    }
                    std::fill(dst + ox1, dst + ow, 0.0f);
                }
            }
        }
    }
}

void im2col(const FeatureMap& x, int kh, int kw, const ConvGeometry& g, int oh, int ow, RowMatrix& col) {
    col.resize(x.channels() * kh * kw, static_cast<int64_t>(oh) * ow);
    const int64_t perChannel = int64_t{kh} * kw * oh * ow; // channels on the team
    parallelFor(x.channels(), std::max<int64_t>(1, kParallelFloats / std::max<int64_t>(1, perChannel)),
                [&](int64_t c0, int64_t c1) { im2colChannels(x, kh, kw, g, oh, ow, col, c0, c1); });
}

// Winograd F(2×2, 3×3) (Lavin & Gray 2015) for 3×3 convolutions with stride 1 and padding 1: each 2×2
// output tile is Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A over its 4×4 input tile d, so the 9 multiply-adds per
// output pixel and input channel become 16 per 4 pixels — 2.25× fewer — done as 16 GEMMs
// U_ξ [out, in] · V_ξ [in, tiles]. The transforms use only additions and halvings, so the rounding
// stays at the level of the direct method (measured: the goldens' 1e-4 holds with a wide margin).
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

// V_ξ = Bᵀ d B for every channel and tile, Bᵀ = [[1,0,−1,0],[0,1,1,0],[0,−1,1,0],[0,1,0,−1]], written
// V[ξ][channel][tile] with ξ = 4·row + column of the 4×4 transform. Vectorised across a row of tiles:
// each zero-padded input row is split into even and odd columns, its horizontal transform (d B) is
// computed once and shared by the two tile rows that read it, then the vertical one (Bᵀ ·).
// Tile rows [ty0, ty1) only: V holds (ty1 − ty0)·tw tiles.
// Channels [c0, c1) here; scratch rows are this thread's own (thread_local: on the team
// each worker has its own).
void transformInputChannels(const FeatureMap& x, float* V, int ty0, int ty1, int tw, int64_t c0, int64_t c1) {
    const int64_t cin = x.channels();
    const int h = x.height, w = x.width;
    const int th = ty1 - ty0;
    const int64_t tiles = int64_t{th} * tw;
    const int64_t vStride = cin * tiles;
    const int rows = 2 * th + 2; // the band's padded rows: input row y is padded row y + 1 − 2·ty0
    thread_local std::vector<float> evenOdd, hbuf;
    evenOdd.assign(static_cast<size_t>(2 * (tw + 1)), 0.0f);
    hbuf.resize(static_cast<size_t>(rows) * 4 * tw);
    float* even = evenOdd.data(); // padded column 2k
    float* odd = even + (tw + 1); // padded column 2k + 1
    for (int64_t c = c0; c < c1; ++c) {
        const float* plane = x.data.row(c).data();
        for (int r = 0; r < rows; ++r) {
            const int y = r - 1 + 2 * ty0;
            float* H = hbuf.data() + static_cast<size_t>(r) * 4 * tw;
            if (y < 0 || y >= h) {
                std::fill(H, H + 4 * tw, 0.0f);
                continue;
            }
            const float* src = plane + int64_t{y} * w;
            // padded column p holds input column p − 1 (zero outside [0, w))
            for (int k = 0; k <= tw; ++k) {
                const int ce = 2 * k - 1, co = 2 * k;
                even[k] = ce >= 0 && ce < w ? src[ce] : 0.0f;
                odd[k] = co < w ? src[co] : 0.0f;
            }
            const ConstArrayMap e0(even, tw), e1(even + 1, tw), o0(odd, tw), o1(odd + 1, tw);
            ArrayMap(H, tw) = e0 - e1;          // d0 − d2
            ArrayMap(H + tw, tw) = o0 + e1;     // d1 + d2
            ArrayMap(H + 2 * tw, tw) = e1 - o0; // d2 − d1
            ArrayMap(H + 3 * tw, tw) = o0 - o1; // d1 − d3
        }
        for (int ty = 0; ty < th; ++ty) {
            const float* R0 = hbuf.data() + static_cast<size_t>(2 * ty) * 4 * tw;
            const float* R1 = R0 + 4 * tw;
            const float* R2 = R1 + 4 * tw;
            const float* R3 = R2 + 4 * tw;
            float* v = V + c * tiles + int64_t{ty} * tw;
            for (int m = 0; m < 4; ++m) {
                const ConstArrayMap r0(R0 + m * tw, tw), r1(R1 + m * tw, tw), r2(R2 + m * tw, tw),
                    r3(R3 + m * tw, tw);
                ArrayMap(v + (0 + m) * vStride, tw) = r0 - r2;
                ArrayMap(v + (4 + m) * vStride, tw) = r1 + r2;
                ArrayMap(v + (8 + m) * vStride, tw) = r2 - r1;
                ArrayMap(v + (12 + m) * vStride, tw) = r1 - r3;
            }
        }
    }
}

void winogradTransformInput(const FeatureMap& x, float* V, int ty0, int ty1, int tw) {
    const int64_t tiles = int64_t{ty1 - ty0} * tw; // channels on the team
    parallelFor(x.channels(), std::max<int64_t>(1, kParallelFloats / (16 * tiles)),
                [&](int64_t c0, int64_t c1) { transformInputChannels(x, V, ty0, ty1, tw, c0, c1); });
}

// Y = Aᵀ m A per output channel and tile, Aᵀ = [[1,1,1,0],[0,1,−1,−1]], plus the bias; vectorised
// across a row of tiles like the input transform. M holds tile rows [ty0, ty1).
// Output channels [o0, o1) here (scratch: this thread's own).
void transformOutputChannels(const float* M, int64_t cout, int ty0, int ty1, int tw, const Tensor& bias,
                             FeatureMap& out, int64_t o0, int64_t o1) {
    const int h = out.height, w = out.width;
    const int64_t tiles = int64_t{ty1 - ty0} * tw;
    const int64_t mStride = cout * tiles;
    thread_local std::vector<float> sbuf, rowbuf;
    sbuf.resize(static_cast<size_t>(8) * tw);
    rowbuf.resize(static_cast<size_t>(2) * tw);
    for (int64_t o = o0; o < o1; ++o) {
        const float b = bias.empty() ? 0.0f : bias.data()[o];
        float* dst = out.data.row(o).data();
        for (int ty = ty0; ty < ty1; ++ty) {
            const float* m = M + o * tiles + int64_t{ty - ty0} * tw;
            float* S = sbuf.data(); // S[a][j] = (Aᵀ m)[a][j], a = 0, 1
            for (int j = 0; j < 4; ++j) {
                const ConstArrayMap m0(m + j * mStride, tw), m1(m + (4 + j) * mStride, tw),
                    m2(m + (8 + j) * mStride, tw), m3(m + (12 + j) * mStride, tw);
                ArrayMap(S + j * tw, tw) = m0 + m1 + m2;
                ArrayMap(S + (4 + j) * tw, tw) = m1 - m2 - m3;
            }
            for (int a = 0; a < 2 && 2 * ty + a < h; ++a) {
                const float* s = S + a * 4 * tw;
                float* row = (w == 2 * tw) ? dst + int64_t{2 * ty + a} * w : rowbuf.data();
                for (int tx = 0; tx < tw; ++tx) {
                    row[2 * tx] = s[tx] + s[tw + tx] + s[2 * tw + tx] + b;
                    row[2 * tx + 1] = s[tw + tx] - s[2 * tw + tx] - s[3 * tw + tx] + b;
                }
                if (w != 2 * tw) std::copy(row, row + w, dst + int64_t{2 * ty + a} * w);
            }
        }
    }
}

void winogradTransformOutput(const float* M, int64_t cout, int ty0, int ty1, int tw, const Tensor& bias,
                             FeatureMap& out) {
    const int64_t tiles = int64_t{ty1 - ty0} * tw; // output channels on the team
    parallelFor(cout, std::max<int64_t>(1, kParallelFloats / (16 * tiles)), [&](int64_t o0, int64_t o1) {
        transformOutputChannels(M, cout, ty0, ty1, tw, bias, out, o0, o1);
    });
}

} // namespace

Tensor winogradWeights(const Tensor& weight) {
    if (weight.rank() != 4 || weight.dim(2) != 3 || weight.dim(3) != 3)
        throw Error("winograd: weight has shape " + shapeToString(weight.shape()) +
                    ", expected [out, in, 3, 3]");
    const int64_t cout = weight.dim(0), cin = weight.dim(1);
    Tensor u({16, cout, cin});
    float* U = u.data();
    // U_ξ = G g Gᵀ for every (out, in) pair; G = [[1,0,0],[½,½,½],[½,−½,½],[0,0,1]].
    const float* wd = weight.data();
    const int64_t uStride = cout * cin;
    for (int64_t k = 0; k < cout * cin; ++k) {
        const float* g = wd + k * 9;
        float t[4][3]; // G g
        for (int c = 0; c < 3; ++c) {
            t[0][c] = g[c];
            t[1][c] = 0.5f * (g[c] + g[3 + c] + g[6 + c]);
            t[2][c] = 0.5f * (g[c] - g[3 + c] + g[6 + c]);
            t[3][c] = g[6 + c];
        }
        for (int r = 0; r < 4; ++r) { // (G g) Gᵀ
            float* dst = U + r * 4 * uStride + k;
            dst[0] = t[r][0];
            dst[uStride] = 0.5f * (t[r][0] + t[r][1] + t[r][2]);
            dst[2 * uStride] = 0.5f * (t[r][0] - t[r][1] + t[r][2]);
            dst[3 * uStride] = t[r][2];
        }
    }
    return u;
}

namespace {

std::atomic<int64_t> winogradBandFloats{int64_t{8} << 20};

// The Winograd convolution around its 16 products M_ξ = U_ξ · V_ξ (product(ξ, V_ξ, M_ξ, tiles)).
template <typename Product>
FeatureMap winogradWith(const FeatureMap& x, int64_t cout, const Tensor& bias, Product&& product) {
    const int64_t cin = x.channels();
    if (!bias.empty() && bias.numel() != cout)
        throw Error("winograd: bias has " + std::to_string(bias.numel()) + " values, expected " +
                    std::to_string(cout));
    const int h = x.height, w = x.width;
    const int th = (h + 1) / 2, tw = (w + 1) / 2;
    // In bands of tile rows whose transformed input and products stay within kBandFloats: a 512×512 map of
    // 256 channels would otherwise take 16·256·65 536 floats (1 GiB) for V and as much for M (the VAE's last
    // blocks); each output tile depends on its own tile only, so the result is the same.
    const int64_t kBandFloats = winogradBandFloats;
    const int band =
        static_cast<int>(std::clamp<int64_t>(kBandFloats / (16 * (cin + cout) * int64_t{tw}), 1, th));
    const int64_t bandTiles = int64_t{band} * tw;
    thread_local std::vector<float> vbuf, mbuf;
    vbuf.resize(static_cast<size_t>(16 * cin * bandTiles));
    mbuf.resize(static_cast<size_t>(16 * cout * bandTiles));
    FeatureMap out{RowMatrix(cout, int64_t{h} * w), h, w};
    for (int ty0 = 0; ty0 < th; ty0 += band) {
        const int ty1 = std::min(th, ty0 + band);
        const int64_t tiles = int64_t{ty1 - ty0} * tw;
        winogradTransformInput(x, vbuf.data(), ty0, ty1, tw);
        // the 16 products on the team (each on one thread); the buffers are this thread's (thread_local:
        // named inside the region they would be each worker's own)
        const int64_t grain = cout * cin * tiles >= (int64_t{1} << 18) ? 1 : 16;
        float* const v = vbuf.data();
        float* const m = mbuf.data();
        parallelFor(16, grain, [&](int64_t x0, int64_t x1) {
            for (int64_t xi = x0; xi < x1; ++xi)
                product(int(xi), v + xi * cin * tiles, m + xi * cout * tiles, tiles);
        });
        winogradTransformOutput(mbuf.data(), cout, ty0, ty1, tw, bias, out);
    }
    if (vbuf.size() + mbuf.size() >
        static_cast<size_t>(kBandFloats) * 2) { // a band of one wide row: not kept
        std::vector<float>().swap(vbuf);
        std::vector<float>().swap(mbuf);
    }
    return out;
}

// A convolution as im2col (or the input itself for 1×1) and one product out = W · col
// (product(col, n, out)).
template <typename Product>
FeatureMap convWith(const FeatureMap& x, int64_t cout, int64_t cin, int kh, int kw, const Tensor& bias,
                    const ConvGeometry& g, Product&& product) {
    if (x.channels() != cin)
        throw Error("conv2d: input has " + std::to_string(x.channels()) + " channels, weight expects " +
                    std::to_string(cin));
    if (x.data.cols() != x.pixels()) throw Error("conv2d: feature map data does not match its size");
    const int oh = (x.height + g.padTop + g.padBottom - kh) / g.stride + 1;
    const int ow = (x.width + g.padLeft + g.padRight - kw) / g.stride + 1;
    if (oh <= 0 || ow <= 0 || g.stride <= 0)
        throw Error("conv2d: a " + std::to_string(x.height) + "x" + std::to_string(x.width) +
                    " input is too small for a " + std::to_string(kh) + "x" + std::to_string(kw) + " kernel");
    FeatureMap out{RowMatrix(cout, static_cast<int64_t>(oh) * ow), oh, ow};
    const bool pointwise = kh == 1 && kw == 1 && g.stride == 1 && g.padTop == 0 && g.padLeft == 0 &&
                           g.padBottom == 0 && g.padRight == 0;
    if (pointwise) {
        product(x.data.data(), out.pixels(), out.data.data());
    } else {
        thread_local RowMatrix col; // reused between calls: im2col buffers reach tens of MB
        im2col(x, kh, kw, g, oh, ow, col);
        product(col.data(), out.pixels(), out.data.data());
        if (col.size() > (int64_t{64} << 20)) col.resize(0, 0); // do not keep a huge buffer alive
    }
    if (!bias.empty()) {
        if (bias.numel() != cout)
            throw Error("conv2d: bias has " + std::to_string(bias.numel()) + " values, expected " +
                        std::to_string(cout));
        out.data.colwise() += ConstVectorMap(bias.data(), cout);
    }
    return out;
}

} // namespace

FeatureMap conv3x3Winograd(const FeatureMap& x, const Tensor& u, const Tensor& bias) {
    if (u.rank() != 3 || u.dim(0) != 16 || u.dim(2) != x.channels())
        throw Error("winograd: transformed weight " + shapeToString(u.shape()) + " does not fit " +
                    std::to_string(x.channels()) + " input channels");
    const int64_t cout = u.dim(1), cin = u.dim(2);
    return winogradWith(x, cout, bias, [&](int xi, const float* v, float* m, int64_t tiles) {
        gemm(u.data() + xi * cout * cin, v, m, cout, tiles, cin);
    });
}

FeatureMap conv3x3Winograd(const FeatureMap& x, const std::vector<PackedWeights>& u, const Tensor& bias) {
    if (u.size() != 16 || u[0].depth() != x.channels())
        throw Error("winograd: packed weights do not fit " + std::to_string(x.channels()) +
                    " input channels");
    return winogradWith(x, u[0].rows(), bias, [&](int xi, const float* v, float* m, int64_t tiles) {
        u[static_cast<size_t>(xi)].multiply(v, tiles, tiles, m, tiles);
    });
}

int64_t setWinogradBandFloats(int64_t floats) {
    return winogradBandFloats.exchange(std::max<int64_t>(floats, 1));
}

std::vector<PackedWeights> packWinogradWeights(const Tensor& u, LinearPrecision precision) {
    if (u.rank() != 3 || u.dim(0) != 16) throw Error("winograd: expected transformed weights [16, out, in]");
    std::vector<PackedWeights> packed;
    for (int64_t xi = 0; xi < 16; ++xi)
        packed.emplace_back(u.data() + xi * u.dim(1) * u.dim(2), u.dim(1), u.dim(2), precision);
    return packed;
}

FeatureMap conv2d(const FeatureMap& x, const Tensor& weight, const Tensor& bias, const ConvGeometry& g) {
    if (weight.rank() != 4)
        throw Error("conv2d: weight has shape " + shapeToString(weight.shape()) +
                    ", expected [out, in, kh, kw]");
    const int64_t cout = weight.dim(0), cin = weight.dim(1);
    const int kh = static_cast<int>(weight.dim(2)), kw = static_cast<int>(weight.dim(3));
    return convWith(x, cout, cin, kh, kw, bias, g, [&](const float* col, int64_t n, float* out) {
        gemm(weight.data(), col, out, cout, n, cin * kh * kw);
    });
}

FeatureMap conv2d(const FeatureMap& x, const PackedWeights& weight, int kernel, const Tensor& bias,
                  const ConvGeometry& g) {
    const int64_t k2 = int64_t{kernel} * kernel;
    if (weight.depth() % k2 != 0)
        throw Error("conv2d: packed weights do not fit a " + std::to_string(kernel) + "x" +
                    std::to_string(kernel) + " kernel");
    return convWith(x, weight.rows(), weight.depth() / k2, kernel, kernel, bias, g,
                    [&](const float* col, int64_t n, float* out) { weight.multiply(col, n, n, out, n); });
}

namespace {

// out = GroupNorm(x) [· sigmoid] — x and out may be the same map. Statistics in float with Eigen's
// vectorised (pairwise-like, 16 lanes) reductions, two passes: mean, then the centred squares.
void groupNormInto(const FeatureMap& x, FeatureMap& out, int groups, const Tensor& weight, const Tensor& bias,
                   float eps, bool silu) {
    const int64_t channels = x.channels();
    if (groups <= 0 || channels % groups != 0)
        throw Error("group norm: " + std::to_string(channels) + " channels are not divisible into " +
                    std::to_string(groups) + " groups");
    if (weight.numel() != channels || bias.numel() != channels)
        throw Error("group norm: weight/bias sizes do not match " + std::to_string(channels) + " channels");
    const int64_t per = channels / groups;
    const int64_t pixels = x.pixels();
    const int64_t n = per * pixels;
    parallelFor(
        groups, std::max<int64_t>(1, kParallelFloats / std::max<int64_t>(1, n)), [&](int64_t g0, int64_t g1) {
            for (int64_t gi = g0; gi < g1; ++gi) {
                // a group is `per` consecutive rows: contiguous in the row-major buffer
                const Eigen::Map<const Eigen::ArrayXf> group(x.data.data() + gi * n, n);
                const float mean = group.sum() / static_cast<float>(n);
                const double sq = (group - mean).square().sum();
                const float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(n) + eps));
                const float m = mean;
                for (int64_t c = 0; c < per; ++c) {
                    const int64_t ch = gi * per + c;
                    const float a = inv * weight.data()[ch];
                    const float b = bias.data()[ch] - m * a;
                    const Eigen::Map<const Eigen::ArrayXf> src(x.data.data() + ch * pixels, pixels);
                    Eigen::Map<Eigen::ArrayXf> dst(out.data.data() + ch * pixels, pixels);
                    if (silu) {
                        dst = src * a + b;
                        dst = dst / (1.0f + (-dst).exp());
                    } else {
                        dst = src * a + b;
                    }
                }
            }
        });
}

} // namespace

void groupNormInPlace(FeatureMap& x, int groups, const Tensor& weight, const Tensor& bias, float eps,
                      bool silu) {
    groupNormInto(x, x, groups, weight, bias, eps, silu);
}

FeatureMap groupNorm(const FeatureMap& x, int groups, const Tensor& weight, const Tensor& bias, float eps,
                     bool silu) {
    FeatureMap out{RowMatrix(x.channels(), x.pixels()), x.height, x.width};
    groupNormInto(x, out, groups, weight, bias, eps, silu);
    return out;
}

FeatureMap upsampleNearest2x(const FeatureMap& x) {
    const int h = x.height, w = x.width;
    FeatureMap out{RowMatrix(x.channels(), int64_t{4} * h * w), 2 * h, 2 * w};
    for (int64_t c = 0; c < x.channels(); ++c) {
        const float* src = x.data.row(c).data();
        float* dst = out.data.row(c).data();
        for (int y = 0; y < h; ++y) {
            float* r0 = dst + int64_t{2} * y * 2 * w;
            for (int xx = 0; xx < w; ++xx)
                r0[2 * xx] = r0[2 * xx + 1] = src[int64_t{y} * w + xx];
            std::memcpy(r0 + 2 * w, r0, sizeof(float) * static_cast<size_t>(2 * w));
        }
    }
    return out;
}

FeatureMap concatChannels(const FeatureMap& a, const FeatureMap& b) {
    if (a.height != b.height || a.width != b.width)
        throw Error("concat: feature maps of " + std::to_string(a.height) + "x" + std::to_string(a.width) +
                    " and " + std::to_string(b.height) + "x" + std::to_string(b.width) + " differ in size");
    FeatureMap out{RowMatrix(a.channels() + b.channels(), a.pixels()), a.height, a.width};
    out.data.topRows(a.channels()) = a.data;
    out.data.bottomRows(b.channels()) = b.data;
    return out;
}

void packConvLayer(ConvLayer& layer, bool winograd, LinearPrecision precision) {
    const Tensor& w = layer.weight;
    if (winograd && w.dim(2) == 3 && w.dim(3) == 3)
        layer.packed = packWinogradWeights(winogradWeights(w), precision);
    else {
        layer.packed.clear();
        layer.packed.emplace_back(w.data(), w.dim(0), w.dim(1) * w.dim(2) * w.dim(3), precision);
    }
}

FeatureMap applyConv(const ConvLayer& c, const FeatureMap& x, const ConvGeometry& geometry) {
    // a bf16 model's float32 reference (Fp32ReferenceScope) runs on the plain weight
    const bool reference = !c.packed.empty() && c.packed.front().precision() == LinearPrecision::Bf16 &&
                           Fp32ReferenceScope::active();
    if (!c.packed.empty() && c.packed.front().valid() && !reference) {
        if (c.packed.size() == 16)
            return conv3x3Winograd(x, c.packed, c.bias); // stride 1, padding 1 by construction
        return conv2d(x, c.packed.front(), static_cast<int>(c.weight.dim(2)), c.bias, geometry);
    }
    return conv2d(x, c.weight, c.bias, geometry);
}

} // namespace attnlens
