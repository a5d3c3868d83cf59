#pragma once
// Spatial ops for convolutional models (ops/ level: no weights of their own). Feature maps are
// channel-major: a RowMatrix [channels, height·width] whose row c is channel c's plane in row-major
// pixel order (pixel index = y·width + x) — PyTorch's NCHW with batch 1, so checkpoint weights bind
// as they are stored.
//
//   FeatureMap x{RowMatrix(c, h * w), h, w};
//   FeatureMap y = conv2d(x, weight, bias, {.stride = 2, .padTop = 0, .padLeft = 0, .padBottom = 1, .padRight
//   = 1});
//
// Convolutions are im2col + one GEMM (the active kernel: oneDNN's matmul where it is, else Eigen), the weight
// [out, in, k, k] viewed as [out, in·k·k].

#include "core/ops/gemm.h"
#include "core/tensor/tensor.h"

#include <vector>

namespace attnlens {

struct FeatureMap {
    RowMatrix data; // [channels, height·width]
    int height = 0;
    int width = 0;

    int64_t channels() const { return data.rows(); }
    int64_t pixels() const { return static_cast<int64_t>(height) * width; }
};

struct ConvGeometry {
    int stride = 1;
    int padTop = 0, padLeft = 0, padBottom = 0, padRight = 0; // zero padding

    static ConvGeometry same(int kernel) { // "padding = k / 2", stride 1
        const int p = kernel / 2;
        return {1, p, p, p, p};
    }
};

// 2-D convolution (cross-correlation, as torch.nn.Conv2d). weight [out, in, kh, kw], bias [out] or
// empty. Throws attnlens::Error when the input's channels or size do not fit the weight.
FeatureMap conv2d(const FeatureMap& x, const Tensor& weight, const Tensor& bias,
                  const ConvGeometry& geometry);
// The same with the weight [out, in·k·k] packed once (ops/gemm.h); kernel = k. Requires weight.valid().
FeatureMap conv2d(const FeatureMap& x, const PackedWeights& weight, int kernel, const Tensor& bias,
                  const ConvGeometry& geometry);

// Winograd F(2×2, 3×3) (Lavin & Gray 2015) for 3×3 convolutions with stride 1 and padding 1: each 2×2
// output tile is Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A over its 4×4 input tile d, so the 9 multiply-adds per output
// pixel and input channel become 16 per 4 pixels (2.25× fewer), done as 16 GEMMs U_ξ [out, in] · V_ξ
// [in, tiles]. The transforms only add and halve, so rounding stays at the direct method's level.
// winogradWeights: weight [out, in, 3, 3] → U [16, out, in], computed once at load (it is 16/9 the
// weight's size; transforming per call would stream it through memory every time).
Tensor winogradWeights(const Tensor& weight);
// The same result as conv2d(x, weight, bias, ConvGeometry::same(3)), with u = winogradWeights(weight).
FeatureMap conv3x3Winograd(const FeatureMap& x, const Tensor& u, const Tensor& bias);
// The same with the 16 U_ξ packed once (packWinogradWeights); requires every one valid().
FeatureMap conv3x3Winograd(const FeatureMap& x, const std::vector<PackedWeights>& u, const Tensor& bias);
std::vector<PackedWeights> packWinogradWeights(const Tensor& u,
                                               LinearPrecision precision = linearPrecision());
// The Winograd convolutions run in bands of tile rows whose transformed input and products take at most this
// many floats (default 8 Mi: 32 MiB, whatever the map's size). Returns the previous limit; tests lower it.
int64_t setWinogradBandFloats(int64_t floats);

// GroupNorm (torch.nn.GroupNorm, affine): channels split into `groups` consecutive groups, each
// normalised over its channels × pixels with the biased variance. weight/bias [channels].
void groupNormInPlace(FeatureMap& x, int groups, const Tensor& weight, const Tensor& bias, float eps,
                      bool silu = false);
// The same into a new map (x unchanged), optionally followed by SiLU in the same pass.
FeatureMap groupNorm(const FeatureMap& x, int groups, const Tensor& weight, const Tensor& bias, float eps,
                     bool silu = false);

// Nearest-neighbour upsampling by 2 in both directions (F.interpolate(scale_factor=2, mode="nearest")).
FeatureMap upsampleNearest2x(const FeatureMap& x);

// Channel concatenation [a; b] (torch.cat(dim=1)); both of the same spatial size.
FeatureMap concatChannels(const FeatureMap& a, const FeatureMap& b);

// A convolution layer's weights as a model keeps them: the plain weight [out, in, k, k] and bias, and the
// weights packed for the GEMM kernel at load (the 16 Winograd U_ξ for 3×3 convolutions at large sizes, else
// one [out, in·k·k] matrix). While the packing is valid() it is used; after a kernel switch the plain im2col
// path on `weight` runs instead.
struct ConvLayer {
    Tensor weight, bias;
    std::vector<PackedWeights> packed;
};
// Packs `layer` (weight non-empty) for the active kernel, in `precision` (the VAE decoder keeps Fp32 in bf16
// mode); winograd: 3×3 weights as Winograd U_ξ (then the layer must run with ConvGeometry::same(3)).
void packConvLayer(ConvLayer& layer, bool winograd, LinearPrecision precision = linearPrecision());
FeatureMap applyConv(const ConvLayer& layer, const FeatureMap& x, const ConvGeometry& geometry);

} // namespace attnlens
