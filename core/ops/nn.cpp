#include "core/ops/nn.h"

#include "core/ops/gemm.h"
#include "core/ops/gemv.h"
#include "core/util/error.h"

#include <cmath>

namespace attnlens {

void linearInto(const Eigen::Ref<const RowMatrix>& x, const Tensor& weight, const Tensor& bias, RowMatrix& out) {
    const auto w = weight.matrix(); // [out, in]
    if (x.cols() != w.cols())
        throw Error("linear: input has " + std::to_string(x.cols()) + " features, weight expects " +
                    std::to_string(w.cols()));
    out.resize(x.rows(), w.rows());
    if (x.rows() >= 1 && x.rows() <= kGemvMaxRows) {
        // A few rows (decoder steps, greedy or beam): memory-bound, each weight row read once for all inputs.
        gemvRows(x.data(), x.outerStride(), x.rows(), weight.data(), w.rows(), w.cols(), out.data(), out.outerStride());
    } else {
        gemm(GemmArgs{x.data(), x.outerStride(), weight.data(), w.cols(), out.data(), out.cols(), x.rows(), w.rows(), w.cols(),
                      /*transB=*/true, /*accumulate=*/false});
    }
    if (!bias.empty()) out.rowwise() += ConstVectorMap(bias.data(), bias.numel()).transpose();
}

RowMatrix linear(const Eigen::Ref<const RowMatrix>& x, const Tensor& weight, const Tensor& bias) {
    RowMatrix out;
    linearInto(x, weight, bias, out);
    return out;
}

void layerNormInPlace(RowMatrix& x, const Tensor& weight, const Tensor& bias, float eps) {
    const auto d = x.cols();
    const ConstVectorMap g(weight.data(), d);
    const ConstVectorMap b(bias.data(), d);
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        auto row = x.row(r);
        const float mean = row.mean();
        row.array() -= mean;
        const float var = row.squaredNorm() / static_cast<float>(d);
        row *= 1.0f / std::sqrt(var + eps);
        row.array() = row.array() * g.transpose().array() + b.transpose().array();
    }
}

Activation parseActivation(const std::string& name) {
    if (name == "gelu") return Activation::Gelu;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GeluTanh;
    if (name == "relu") return Activation::Relu;
    if (name == "silu" || name == "swish") return Activation::Silu;
    throw Error("unsupported activation function '" + name + "' (expected gelu, gelu_new, relu, silu or swish)");
}

void applyActivationInPlace(RowMatrix& x, Activation act) {
    float* p = x.data();
    const Eigen::Index n = x.size();
    switch (act) {
    case Activation::Gelu:
        for (Eigen::Index i = 0; i < n; ++i) p[i] = 0.5f * p[i] * (1.0f + std::erf(p[i] * 0.70710678118654752f));
        break;
    case Activation::GeluTanh:
        for (Eigen::Index i = 0; i < n; ++i) {
            const float v = p[i];
            p[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        }
        break;
    case Activation::Relu:
        x = x.cwiseMax(0.0f);
        break;
    case Activation::Silu: { // x · sigmoid(x), vectorised
        auto a = x.array();
        a = a / (1.0f + (-a).exp());
        break;
    }
    }
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
