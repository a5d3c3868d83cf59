#include "core/ops/nn.h"

#include "core/ops/gemm.h"
#include "core/ops/half_linear.h"
#include "core/util/error.h"
#include "core/util/parallel.h"

#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <cmath>

namespace attnlens {

namespace {
constexpr Eigen::Index kFewRows = 8; // decoder steps: one row per hypothesis
thread_local int tReferenceDepth = 0;
} // namespace

Fp32ReferenceScope::Fp32ReferenceScope() {
    ++tReferenceDepth;
}
Fp32ReferenceScope::~Fp32ReferenceScope() {
    --tReferenceDepth;
}
bool Fp32ReferenceScope::active() {
    return tReferenceDepth > 0;
}

void linearInto(const Eigen::Ref<const RowMatrix>& x, const Tensor& weight, const Tensor& bias,
                RowMatrix& out) {
    const auto w = weight.matrix(); // [out, in]
    if (x.cols() != w.cols())
        throw Error("linear: input has " + std::to_string(x.cols()) + " features, weight expects " +
                    std::to_string(w.cols()));
    out.resize(x.rows(), w.rows());
    if (x.rows() > 1 && x.rows() <= kFewRows) {
        // A few rows (beam search steps): Eigen's GEMM would repack the whole weight for every call
        // (for a [58101, 512] output projection that dominated a beam step). Row-by-row dot products
        // read each weight row once, while it is in cache, for all input rows. (A hand-written AVX2
        // kernel for 1–8 rows was measured no faster: the step is bound by memory bandwidth.)
        for (Eigen::Index r = 0; r < w.rows(); ++r) {
            const auto wr = w.row(r);
            for (Eigen::Index i = 0; i < x.rows(); ++i)
                out(i, r) = x.row(i).dot(wr);
        }
    } else {
        gemm(GemmArgs{x.data(), x.outerStride(), weight.data(), w.cols(), out.data(), out.cols(), x.rows(),
                      w.rows(), w.cols(),
                      /*transB=*/true, /*accumulate=*/false});
    }
    if (!bias.empty()) out.rowwise() += ConstVectorMap(bias.data(), bias.numel()).transpose();
}

void LinearWeights::rowInto(int64_t r, float* out) const {
    if (r < 0 || r >= outFeatures()) throw Error("linear: row " + std::to_string(r) + " out of range");
    if (!half.empty())
        half.rowsToFloat(r, 1, out);
    else
        std::copy_n(weight.data() + r * weight.dim(1), weight.dim(1), out);
}

void LinearWeights::pack() {
    if (!half.empty()) {
        // bf16 mode: a weight stored in bfloat16 is multiplied where it lies (no copy); f16 and GGML
        // weights stay on the exact float32 path
        if (linearPrecision() == LinearPrecision::Bf16 && half.format() == HalfMatrix::Format::BF16) {
            try {
                packed = PackedLinear(half);
            } catch (const Error&) { // no fast oneDNN kernel for this layout: the exact path stays
                packed = PackedLinear();
            }
        }
        return;
    }
    if (weight.rank() == 2 && !weight.empty())
        packed = PackedLinear(weight.data(), weight.dim(0), weight.dim(1));
}

namespace {
// The packed weight or the plain one. 2–8 rows (beam steps): oneDNN's matmul on its packed weight streams
// it at 21–22 GB/s against 13–20 for the row-by-row dot products (measured, [4, 512] x [512, 2048 | 58101]);
// one row (greedy) is as fast or faster on Eigen's matrix-vector product (27 vs 24 GB/s). Eigen's packed
// kernel only pays off beyond a few rows. bf16 weights are always used (that mode's point: half the bytes).
bool usePacked(const LinearWeights& layer, Eigen::Index rows, Eigen::Index cols) {
    if (!layer.packed.valid() || cols != layer.packed.inFeatures() || Fp32ReferenceScope::active())
        return false;
    // a bf16 weight kept as stored: decoder steps stream it on the float32 kernel (as many bytes, exact)
    if (!layer.half.empty()) return rows > kFewRows;
    if (layer.packed.precision() == LinearPrecision::Bf16) return true;
    if (activeGemmKernel() == GemmKernel::Onednn) return rows >= 2;
    return rows > kFewRows;
}
} // namespace

void linearInto(const Eigen::Ref<const RowMatrix>& x, const LinearWeights& layer, RowMatrix& out) {
    if (!layer.half.empty() && !usePacked(layer, x.rows(), x.cols())) {
        if (x.cols() != layer.half.cols())
            throw Error("linear: input has " + std::to_string(x.cols()) + " features, weight expects " +
                        std::to_string(layer.half.cols()));
        out.resize(x.rows(), layer.half.rows());
        halfLinear(x.data(), x.outerStride(), x.rows(), layer.half, out.data(), out.outerStride());
        if (!layer.bias.empty())
            out.rowwise() += ConstVectorMap(layer.bias.data(), layer.bias.numel()).transpose();
        return;
    }
    if (!usePacked(layer, x.rows(), x.cols())) {
        linearInto(x, layer.weight, layer.bias, out);
        return;
    }
    out.resize(x.rows(), layer.packed.outFeatures());
    layer.packed.multiply(x.data(), x.outerStride(), x.rows(), out.data(), out.outerStride());
    if (!layer.bias.empty())
        out.rowwise() += ConstVectorMap(layer.bias.data(), layer.bias.numel()).transpose();
}

RowMatrix linear(const Eigen::Ref<const RowMatrix>& x, const Tensor& weight, const Tensor& bias) {
    RowMatrix out;
    linearInto(x, weight, bias, out);
    return out;
}

namespace {

void layerNormRows(RowMatrix& x, const ConstVectorMap& g, const ConstVectorMap& b, float eps, int64_t r0,
                   int64_t r1) {
    const auto d = x.cols();
    for (Eigen::Index r = r0; r < r1; ++r) {
        auto row = x.row(r);
        const float mean = row.mean();
        row.array() -= mean;
        const float var = row.squaredNorm() / static_cast<float>(d);
        row *= 1.0f / std::sqrt(var + eps);
        row.array() = row.array() * g.transpose().array() + b.transpose().array();
    }
}

template <class Block> void applyActivationTo(Block&& x, Activation act) {
    switch (act) {
    case Activation::Gelu: { // Eigen's vectorised erf: 40× faster than std::erf per element, within 2e-6
        auto a = x.array();
        a = 0.5f * a * (1.0f + (a * 0.70710678118654752f).erf());
        break;
    }
    case Activation::GeluTanh: {
        auto a = x.array();
        a = 0.5f * a * (1.0f + (0.7978845608028654f * (a + 0.044715f * a * a * a)).tanh());
        break;
    }
    case Activation::Relu:
        x = x.cwiseMax(0.0f);
        break;
    case Activation::Silu: { // x · sigmoid(x), vectorised
        auto a = x.array();
        a = a / (1.0f + (-a).exp());
        break;
    }
    case Activation::QuickGelu: { // x · sigmoid(1.702 x), as transformers' QuickGELUActivation
        auto a = x.array();
        a = a / (1.0f + (-1.702f * a).exp());
        break;
    }
    }
}

} // namespace

void layerNormInPlace(RowMatrix& x, const Tensor& weight, const Tensor& bias, float eps) {
    const ConstVectorMap g(weight.data(), x.cols());
    const ConstVectorMap b(bias.data(), x.cols());
    parallelRows(x.rows(), x.cols(), [&](int64_t r0, int64_t r1) { layerNormRows(x, g, b, eps, r0, r1); });
}

Activation parseActivation(const std::string& name) {
    if (name == "gelu") return Activation::Gelu;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GeluTanh;
    if (name == "relu") return Activation::Relu;
    if (name == "silu" || name == "swish") return Activation::Silu;
    if (name == "quick_gelu") return Activation::QuickGelu;
    throw Error("unsupported activation function '" + name +
                "' (expected gelu, gelu_new, relu, silu, swish or quick_gelu)");
}

void applyActivationInPlace(RowMatrix& x, Activation act) {
    parallelRows(x.rows(), x.cols(),
                 [&](int64_t r0, int64_t r1) { applyActivationTo(x.middleRows(r0, r1 - r0), act); });
}

Tensor sinusoidalPositions(int64_t positions, int64_t dim) {
    Tensor table({positions, dim});
    const int64_t half = (dim + 1) / 2;
    const int64_t freqs = dim / 2;
    float* out = table.data();
    for (int64_t i = 0; i < half; ++i) { // odd dim: one more sin column than cos columns
        // one pow per column (not per element): same double values, much faster for P = D = 512
        const double denom = std::pow(10000.0, 2.0 * static_cast<double>(i) / static_cast<double>(dim));
        for (int64_t pos = 0; pos < positions; ++pos) {
            const double angle = static_cast<double>(pos) / denom;
            out[pos * dim + i] = static_cast<float>(std::sin(angle));
            if (i < freqs) out[pos * dim + half + i] = static_cast<float>(std::cos(angle));
        }
    }
    return table;
}

} // namespace attnlens
