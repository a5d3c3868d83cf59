#pragma once
// Stateless neural-network ops shared by every model (ops/ level: no weights of their own).
// All work on row-major [tokens, features] matrices; "in place" variants avoid allocations on hot paths.

#include "core/ops/gemm.h"
#include "core/tensor/half_matrix.h"
#include "core/tensor/tensor.h"

#include <string>

namespace attnlens {

// y = x · Wᵀ + b   x [n, in], W [out, in] (PyTorch nn.Linear layout), b [out] or empty.
RowMatrix linear(const Eigen::Ref<const RowMatrix>& x, const Tensor& weight, const Tensor& bias);
void linearInto(const Eigen::Ref<const RowMatrix>& x, const Tensor& weight, const Tensor& bias,
                RowMatrix& out);

// A linear layer's parameters; pack() prepares the weight once for many-row inputs (a ViT's 197 tokens)
// at the cost of a second copy of it in memory. Few-row inputs (decoder steps, ≤ 8) use the plain weight.
// A weight stored in 16 bits may be kept that way (`half`, `weight` then empty: ops/half_linear.h computes
// with it in float32); pack() leaves such a weight as it is, except a bfloat16 one in LinearPrecision::Bf16:
// then inputs of more than 8 rows (prompts) multiply it in bf16 where it lies (no copy), decoding steps
// stay on the float32 streaming kernel.
struct LinearWeights {
    Tensor weight;         // [out, in]
    Tensor bias;           // [out] (may be empty)
    PackedLinear packed{}; // empty until pack()
    HalfMatrix half{};     // [out, in] in 16 bits, or empty
    void pack();
    bool empty() const { return weight.empty() && half.empty(); }
    int64_t outFeatures() const { return half.empty() ? (weight.empty() ? 0 : weight.dim(0)) : half.rows(); }
    int64_t inFeatures() const { return half.empty() ? (weight.empty() ? 0 : weight.dim(1)) : half.cols(); }
    // Weight row r ([in] values, float32) into out: an embedding table's row.
    void rowInto(int64_t r, float* out) const;
};
// y = x · Wᵀ + b through the packed weight when it is valid for the active kernel, else as above.
void linearInto(const Eigen::Ref<const RowMatrix>& x, const LinearWeights& layer, RowMatrix& out);

// While one is alive on a thread, linearInto(x, LinearWeights) and applyConv (ops/conv.h) on that thread use
// the plain float32 weight, never one packed in bf16 (linearInto: never a packed one at all): a model packed
// in bf16 computes its float32 reference with it (the plain weights are kept, so this costs no memory).
// Nests.
class Fp32ReferenceScope {
public:
    Fp32ReferenceScope();
    ~Fp32ReferenceScope();
    Fp32ReferenceScope(const Fp32ReferenceScope&) = delete;
    Fp32ReferenceScope& operator=(const Fp32ReferenceScope&) = delete;
    static bool active();
};

// LayerNorm over the last axis with biased variance (divide by D), in place. weight/bias [D].
void layerNormInPlace(RowMatrix& x, const Tensor& weight, const Tensor& bias, float eps);

enum class Activation { Gelu, GeluTanh, Relu, Silu, QuickGelu };
// Parses HF activation names: "gelu" (exact erf), "gelu_new"/"gelu_pytorch_tanh" (tanh approx.),
// "relu", "silu"/"swish", "quick_gelu" (x · sigmoid(1.702 x), CLIP's). Throws attnlens::Error naming the
// unknown value.
Activation parseActivation(const std::string& name);
void applyActivationInPlace(RowMatrix& x, Activation act);

// Row-wise numerically stable softmax in place (declared in ops/attention.h as well).
void softmaxRowsInPlace(MatrixMap m);
inline void softmaxRowsInPlace(RowMatrix& m) {
    softmaxRowsInPlace(MatrixMap(m.data(), m.rows(), m.cols()));
}

// Marian/BART sinusoidal position table [positions, dim]: columns [0, ceil(dim/2)) hold sin,
// the rest cos, both of angle pos / 10000^(2i/dim); computed in double, stored as float.
Tensor sinusoidalPositions(int64_t positions, int64_t dim);

} // namespace attnlens
