#include "core/layers/multi_head_attention.h"

#include "core/ops/gemm.h"
#include "core/ops/nn.h"
#include "core/util/error.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace attnlens {

namespace {
// Heads are shared out on the team when a chunk of them costs at least this many multiply-adds (a decoder
// step's one query row stays on the calling thread).
constexpr int64_t kParallelHeadMacs = int64_t(1) << 20;
} // namespace

void KvCache::append(const RowMatrix& k, const RowMatrix& v) {
    const int64_t need = length + k.rows();
    if (keys.rows() < need || keys.cols() != k.cols()) {
        const int64_t capacity = std::max<int64_t>(need, std::max<int64_t>(16, keys.rows() * 2));
        RowMatrix nk(capacity, k.cols()), nv(capacity, v.cols());
        if (length > 0 && keys.cols() == k.cols()) {
            nk.topRows(length) = keys.topRows(length);
            nv.topRows(length) = values.topRows(length);
        }
        keys.swap(nk);
        values.swap(nv);
    }
    keys.middleRows(length, k.rows()) = k;
    values.middleRows(length, v.rows()) = v;
    length = need;
}

void KvCache::copyFrom(const KvCache& other) {
    if (this == &other) return;
    const int64_t n = other.length;
    if (keys.rows() < n || keys.cols() != other.keys.cols()) {
        keys.resize(other.keys.rows(), other.keys.cols());
        values.resize(other.values.rows(), other.values.cols());
    }
    keys.topRows(n) = other.keys.topRows(n);
    values.topRows(n) = other.values.topRows(n);
    length = n;
}

int keyValueHeadOf(int head, int heads, int kvHeads) {
    if (kvHeads <= 0 || kvHeads >= heads || heads % kvHeads != 0) return -1;
    return head / (heads / kvHeads);
}

MultiHeadAttention::MultiHeadAttention(LinearWeights q, LinearWeights k, LinearWeights v, LinearWeights out,
                                       int heads, QueryScale scale, std::optional<float> scaleFactor,
                                       int kvHeads)
    : m_q(std::move(q)), m_k(std::move(k)), m_v(std::move(v)), m_out(std::move(out)), m_heads(heads),
      m_kvHeads(kvHeads > 0 ? kvHeads : heads), m_scaleAt(scale) {
    m_dim = m_q.outFeatures();
    if (heads <= 0 || m_dim % heads != 0)
        throw Error("attention: d_model " + std::to_string(m_dim) + " is not divisible by " +
                    std::to_string(heads) + " heads");
    if (heads % m_kvHeads != 0)
        throw Error("attention: " + std::to_string(heads) + " query heads cannot share " +
                    std::to_string(m_kvHeads) + " key/value heads (not a divisor)");
    const int64_t kvDim = m_kvHeads * (m_dim / heads);
    if (!m_k.empty() && m_k.outFeatures() != kvDim)
        throw Error("attention: k_proj has " + std::to_string(m_k.outFeatures()) + " outputs, expected " +
                    std::to_string(kvDim) + " (" + std::to_string(m_kvHeads) + " key/value heads)");
    m_scale = scaleFactor ? *scaleFactor : 1.0f / std::sqrt(static_cast<float>(m_dim / heads));
}

void MultiHeadAttention::projectQuery(const Eigen::Ref<const RowMatrix>& x, RowMatrix& q) const {
    linearInto(x, m_q, q);
    if (m_scaleAt == QueryScale::Query) q *= m_scale;
}

void MultiHeadAttention::projectQueryUnscaled(const Eigen::Ref<const RowMatrix>& x, RowMatrix& q) const {
    linearInto(x, m_q, q);
}

void MultiHeadAttention::projectKeyValue(const Eigen::Ref<const RowMatrix>& x, RowMatrix& k,
                                         RowMatrix& v) const {
    linearInto(x, m_k, k);
    linearInto(x, m_v, v);
}

RowMatrix MultiHeadAttention::attend(const RowMatrix& q, const Eigen::Ref<const RowMatrix>& keys,
                                     const Eigen::Ref<const RowMatrix>& values, const RowMatrix* mask,
                                     Tensor* probs, std::span<const int> offHeads) const {
    return outProject(attendHeads(q, keys, values, mask, probs, offHeads));
}

void MultiHeadAttention::packWeights() {
    for (LinearWeights* l : {&m_q, &m_k, &m_v, &m_out})
        l->pack();
}

float* MultiHeadAttention::captureTarget(Tensor* probs, int64_t n, int64_t m) const {
    if (!probs) return nullptr;
    const Shape expected{m_heads, n, m};
    if (probs->empty())
        *probs = Tensor(expected);
    else if (probs->shape() != expected)
        throw Error("attention capture is " + shapeToString(probs->shape()) + ", the layer produces " +
                    shapeToString(expected));
    return probs->data();
}

const std::vector<Eigen::MatrixXd>& MultiHeadAttention::valueGram() const {
    std::call_once(m_gram->made, [this] {
        // G_h = W_O,hᵀ W_O,h over blocks of o_proj's rows (its stored format: 16-bit rows widened a block at
        // a time), accumulated in double
        const int heads = m_heads;
        const int64_t d = headDim(), rows = m_out.outFeatures(), block = 256;
        std::vector<Eigen::MatrixXd> gram(static_cast<size_t>(heads), Eigen::MatrixXd::Zero(d, d));
        RowMatrix widened(std::min(rows, block), heads * d);
        for (int64_t r0 = 0; r0 < rows; r0 += block) {
            const int64_t n = std::min(block, rows - r0);
            for (int64_t r = 0; r < n; ++r)
                m_out.rowInto(r0 + r, widened.row(r).data());
            const Eigen::MatrixXd w = widened.topRows(n).cast<double>();
            for (int h = 0; h < heads; ++h)
                gram[size_t(h)].noalias() += w.middleCols(h * d, d).transpose() * w.middleCols(h * d, d);
        }
        m_gram->heads = std::move(gram);
    });
    return m_gram->heads;
}

RowMatrix MultiHeadAttention::valueNorms(const Eigen::Ref<const RowMatrix>& values) const {
    const int heads = m_heads, kvHeads = m_kvHeads;
    const int64_t d = headDim();
    const LinearWeights& out = m_out;
    if (values.cols() != kvHeads * d || out.inFeatures() != heads * d)
        throw Error("value norms: values of " + std::to_string(values.cols()) + " columns for " +
                    std::to_string(kvHeads) + " key/value heads of " + std::to_string(d));
    const std::vector<Eigen::MatrixXd>& gram = valueGram();
    RowMatrix norms(heads, values.rows());
    // blocks of value rows on the team, every head's norms for each block (one head shares out too)
    const int64_t rowMacs = std::max<int64_t>(1, int64_t{heads} * d * d);
    parallelFor(
        values.rows(), std::max<int64_t>(1, kParallelHeadMacs / rowMacs), [&](int64_t r0, int64_t r1) {
            for (int h = 0; h < heads; ++h) {
                const int kv = keyValueHeadOf(h, heads, kvHeads);
                const int64_t column = (kv < 0 ? h : kv) * d;
                const Eigen::MatrixXd v = values.block(r0, column, r1 - r0, d).cast<double>(); // [rows, d]
                const Eigen::VectorXd squares = ((v * gram[size_t(h)]).array() * v.array()).rowwise().sum();
                norms.row(h).segment(r0, r1 - r0) =
                    squares.cwiseMax(0.0).cwiseSqrt().cast<float>().transpose();
            }
        });
    return norms;
}

RowMatrix MultiHeadAttention::outProject(const RowMatrix& context) const {
    RowMatrix out;
    linearInto(context, m_out, out); // [n, D]
    return out;
}

namespace {

constexpr int64_t kCausalRows =
    256; // rows per block of a causal head: a block scores the keys its last row sees

} // namespace

RowMatrix MultiHeadAttention::attendHeads(const Eigen::Ref<const RowMatrix>& q,
                                          const Eigen::Ref<const RowMatrix>& keys,
                                          const Eigen::Ref<const RowMatrix>& values, const RowMatrix* mask,
                                          Tensor* capture, std::span<const int> offHeads,
                                          const Callbacks* cancel) const {
    return attendEach(q, keys, values, mask, nullptr, capture, offHeads, cancel);
}

RowMatrix MultiHeadAttention::attendHeadsCausal(const Eigen::Ref<const RowMatrix>& q,
                                                const Eigen::Ref<const RowMatrix>& keys,
                                                const Eigen::Ref<const RowMatrix>& values, int64_t past,
                                                int window, Tensor* capture, std::span<const int> offHeads,
                                                const Callbacks* cancel) const {
    const CausalRule rule{past, window};
    return attendEach(q, keys, values, nullptr, &rule, capture, offHeads, cancel);
}

RowMatrix MultiHeadAttention::attendEach(const Eigen::Ref<const RowMatrix>& q,
                                         const Eigen::Ref<const RowMatrix>& keys,
                                         const Eigen::Ref<const RowMatrix>& values, const RowMatrix* mask,
                                         const CausalRule* causal, Tensor* capture,
                                         std::span<const int> offHeads, const Callbacks* cancel) const {
    const int64_t n = q.rows();
    const int64_t m = keys.rows();
    const int64_t hd = headDim();
    if (mask && (mask->rows() != n || mask->cols() != m))
        throw Error("attention: mask is " + std::to_string(mask->rows()) + "x" +
                    std::to_string(mask->cols()) + ", expected " + std::to_string(n) + "x" +
                    std::to_string(m));
    float* probs = captureTarget(capture, n, m); // [heads, n, m] or nullptr
    RowMatrix context(n, m_dim);                 // [n, D]
    const int group = m_heads / m_kvHeads;       // query heads per key/value head
    // heads on the team (each writes its own columns of context and its own slice of the capture)
    parallelFor(m_heads, std::max<int64_t>(1, kParallelHeadMacs / std::max<int64_t>(1, n * m * hd)),
                [&](int64_t h0, int64_t h1) {
                    RowMatrix scores(n, m); // [query, key] of one head
                    for (int h = int(h0); h < int(h1); ++h) {
                        if (cancel) cancel->checkCancel(); // thrown on a team thread: parallelFor rethrows it
                        const int64_t kv = static_cast<int64_t>(h / group) * hd; // the kv head's columns
                        if (std::find(offHeads.begin(), offHeads.end(), h) !=
                            offHeads.end()) { // ablated: probabilities × 0
                            if (probs) std::fill(probs + h * n * m, probs + (h + 1) * n * m, 0.0f);
                            context.middleCols(h * hd, hd).setZero();
                            continue;
                        }
                        if (causal)
                            headProbabilitiesCausal(q, keys, h, causal->past, causal->window, scores.data());
                        else
                            headProbabilities(q, keys, h, mask, scores.data());
                        if (probs)
                            std::memcpy(probs + h * n * m, scores.data(),
                                        sizeof(float) * static_cast<size_t>(n * m));
                        // context_h [n, hd] = scores · v_h; causal: block by block over the keys the block's
                        // rows see
                        for (int64_t i0 = 0; i0 < n; i0 += causal ? kCausalRows : n) {
                            const int64_t rows = causal ? std::min(kCausalRows, n - i0) : n;
                            const int64_t cols = causal ? std::min(m, causal->past + i0 + rows) : m;
                            gemm(GemmArgs{scores.data() + i0 * m, m, values.data() + kv, values.outerStride(),
                                          context.data() + i0 * m_dim + h * hd, m_dim, rows, hd, cols,
                                          /*transB=*/false, /*accumulate=*/false});
                        }
                    }
                });
    return context;
}

void MultiHeadAttention::scoreBlock(const Eigen::Ref<const RowMatrix>& q,
                                    const Eigen::Ref<const RowMatrix>& keys, int head, int64_t row,
                                    int64_t rows, int64_t cols, float* out, int64_t ld) const {
    const int64_t hd = headDim();
    const int64_t kv = static_cast<int64_t>(head / (m_heads / m_kvHeads)) * hd; // the kv head's columns
    gemm(GemmArgs{q.data() + row * q.outerStride() + head * hd, q.outerStride(), keys.data() + kv,
                  keys.outerStride(), out, ld, rows, cols, hd,
                  /*transB=*/true, /*accumulate=*/false}); // scores = q_h · k_hᵀ
}

void MultiHeadAttention::headScores(const Eigen::Ref<const RowMatrix>& q,
                                    const Eigen::Ref<const RowMatrix>& keys, int head, float* out) const {
    const int64_t n = q.rows(), m = keys.rows(), hd = headDim();
    const int64_t kv = static_cast<int64_t>(head / (m_heads / m_kvHeads)) * hd; // the kv head's columns
    gemm(GemmArgs{q.data() + head * hd, q.outerStride(), keys.data() + kv, keys.outerStride(), out, m, n, m,
                  hd,
                  /*transB=*/true, /*accumulate=*/false}); // scores [n, m] = q_h · k_hᵀ
    if (m_scaleAt == QueryScale::Scores) MatrixMap(out, n, m) *= m_scale;
}

void MultiHeadAttention::headProbabilities(const Eigen::Ref<const RowMatrix>& q,
                                           const Eigen::Ref<const RowMatrix>& keys, int head,
                                           const RowMatrix* mask, float* out) const {
    headScores(q, keys, head, out);
    MatrixMap scores(out, q.rows(), keys.rows());
    if (mask) scores += *mask;
    softmaxRowsInPlace(scores);
}

void MultiHeadAttention::headProbabilitiesCausal(const Eigen::Ref<const RowMatrix>& q,
                                                 const Eigen::Ref<const RowMatrix>& keys, int head,
                                                 int64_t past, int window, float* out) const {
    const int64_t n = q.rows(), m = keys.rows();
    for (int64_t i0 = 0; i0 < n; i0 += kCausalRows) {
        const int64_t rows = std::min(kCausalRows, n - i0), cols = std::min(m, past + i0 + rows);
        scoreBlock(q, keys, head, i0, rows, cols, out + i0 * m, m);
        for (int64_t i = i0; i < i0 + rows; ++i) { // causalMask's rule: keys [lo, hi) are seen
            float* row = out + i * m;
            const int64_t hi = std::min(m, past + i + 1);
            const int64_t lo = window > 0 ? std::clamp<int64_t>(past + i - window + 1, 0, hi - 1) : 0;
            std::fill(row, row + lo, 0.0f);
            std::fill(row + hi, row + m, 0.0f);
            MatrixMap seen(row + lo, 1, hi - lo);
            if (m_scaleAt == QueryScale::Scores) seen *= m_scale;
            softmaxRowsInPlace(seen);
        }
    }
}

RowMatrix MultiHeadAttention::forward(const RowMatrix& x, const RowMatrix& kv, const RowMatrix* mask,
                                      Tensor* probs, std::span<const int> offHeads) const {
    RowMatrix q, k, v;
    projectQuery(x, q);
    projectKeyValue(kv, k, v);
    return attend(q, k, v, mask, probs, offHeads);
}

void LayerRecall::headInto(int head, float* out) const {
    const int64_t n = queries.rows(), m = keys.rows();
    if (std::find(offHeads.begin(), offHeads.end(), head) != offHeads.end()) {
        std::fill(out, out + n * m, 0.0f);
        return;
    }
    if (causal)
        attention->headProbabilitiesCausal(queries, keys, head, past, window, out);
    else
        attention->headProbabilities(queries, keys, head, mask.size() ? &mask : nullptr, out);
}

RowMatrix causalMask(int64_t n, int64_t offset, int window) {
    RowMatrix mask = RowMatrix::Zero(n, offset + n); // [query, key]
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = offset + i + 1; j < offset + n; ++j)
            mask(i, j) = MultiHeadAttention::kMaskValue;
        for (int64_t j = 0; window > 0 && j <= offset + i - window; ++j)
            mask(i, j) = MultiHeadAttention::kMaskValue;
    }
    return mask;
}

} // namespace attnlens
