#include "core/ops/attention.h"

#include "core/util/error.h"

#include <cmath>

namespace attnlens {

namespace {

constexpr float kExpUnderflow = -88.3762626647949f; // exp below this is not a normal float32

} // namespace

void softmaxRowsInPlace(MatrixMap m) {
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        auto row = m.row(r);
        if (row.size() == 0) continue;
        const float maxValue = row.maxCoeff();
        // Eigen's vectorised exp (8 lanes; a scalar expf per weight was most of a long prompt's softmax)
        // clamps its argument at kExpUnderflow and so returns ~4e-39 there, never 0: masked keys (the mask
        // adds float32's lowest) must weigh exactly 0, as in PyTorch, and so must every weight below
        // float32's normal range — exactly those that come out at or below the clamp's value.
        row.array() = (row.array() - maxValue).exp();
        static const float floor = Eigen::Array<float, 8, 1>::Constant(kExpUnderflow).exp()(0);
        float* p = row.data();
        for (Eigen::Index i = 0; i < row.size(); ++i)
            p[i] = p[i] <= floor ? 0.0f : p[i];
        row /= row.sum();
    }
}

AttentionResult multiHeadAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const Tensor* mask, int heads, bool recordStages) {
    if (query.rank() != 2 || key.rank() != 2 || value.rank() != 2)
        throw Error("attention: query, key and value must be matrices; got " + shapeToString(query.shape()) +
                    ", " + shapeToString(key.shape()) + ", " + shapeToString(value.shape()));
    // Q and K share their width (d_model for queries and keys, split into heads of d_k); V has its own
    // (d_v overall, heads of d_v / h); the output is [queries, d_v].
    const int64_t nq = query.dim(0), nk = key.dim(0), dModel = query.dim(1), dValue = value.dim(1);
    if (nq == 0 || nk == 0 || dModel == 0 || dValue == 0)
        throw Error("attention: query, key and value must not be empty");
    if (key.dim(1) != dModel)
        throw Error("attention: key has " + std::to_string(key.dim(1)) + " columns, query has " +
                    std::to_string(dModel));
    if (value.dim(0) != nk)
        throw Error("attention: value has " + std::to_string(value.dim(0)) + " rows, key has " +
                    std::to_string(nk));
    if (heads < 1 || dModel % heads != 0)
        throw Error("attention: " + std::to_string(heads) +
                    " heads do not divide the query/key width d_model = " + std::to_string(dModel));
    if (dValue % heads != 0)
        throw Error("attention: " + std::to_string(heads) +
                    " heads do not divide the value width d_v = " + std::to_string(dValue));
    if (mask && (mask->rank() != 2 || mask->dim(0) != nq || mask->dim(1) != nk))
        throw Error("attention: mask has shape " + shapeToString(mask->shape()) + ", expected " +
                    shapeToString({nq, nk}));

    const int64_t dk = dModel / heads, dv = dValue / heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
    AttentionResult result;
    result.output = Tensor({nq, dValue});
    result.weights = Tensor({heads, nq, nk});
    AttentionStages stages;
    if (recordStages) {
        stages.scores = Tensor({heads, nq, nk});
        stages.scaled = Tensor({heads, nq, nk});
        stages.masked = Tensor({heads, nq, nk});
        stages.weights = result.weights; // shared buffer
        stages.output = Tensor({heads, nq, dv});
    }

    const auto q = query.matrix();
    const auto k = key.matrix();
    const auto v = value.matrix();
    RowMatrix scores(nq, nk);
    for (int h = 0; h < heads; ++h) {
        const auto qh = q.middleCols(h * dk, dk); // [q, d_k]
        const auto kh = k.middleCols(h * dk, dk); // [k, d_k]
        const auto vh = v.middleCols(h * dv, dv); // [k, d_v / h]
        scores.noalias() = qh * kh.transpose();   // [q, k]
        if (recordStages) stages.scores.slice2d({h}) = scores;
        scores *= scale;
        if (recordStages) stages.scaled.slice2d({h}) = scores;
        if (mask) {
            const auto m = mask->matrix();
            for (int64_t i = 0; i < nq; ++i)
                for (int64_t j = 0; j < nk; ++j)
                    if (m(i, j) == 0.0f) scores(i, j) = kPlaygroundMaskValue;
        }
        if (recordStages) stages.masked.slice2d({h}) = scores;
        auto w = result.weights.slice2d({h});
        w = scores;
        softmaxRowsInPlace(w);
        const RowMatrix out = w * vh; // [q, d_v / h]
        result.output.matrix().middleCols(h * dv, dv) = out;
        if (recordStages) stages.output.slice2d({h}) = out;
    }
    if (recordStages) result.stages = std::move(stages);
    return result;
}

} // namespace attnlens
