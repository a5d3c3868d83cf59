#include "core/analysis/neuron_view.h"

#include "core/layers/transformer_block.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace attnlens {

std::vector<int> NeuronTerms::dimensionsByContribution() const {
    std::vector<int> order(product.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
        return std::abs(product[size_t(a)]) > std::abs(product[size_t(b)]);
    });
    return order;
}

double NeuronTerms::topShare(int n) const {
    if (dot == 0.0) return 0.0;
    const std::vector<int> order = dimensionsByContribution();
    double sum = 0.0;
    for (int i = 0; i < std::min<int>(n, static_cast<int>(order.size())); ++i)
        sum += product[size_t(order[size_t(i)])];
    return sum / dot;
}

ProjectedAttention projectAttention(const AttentionInputs& inputs) {
    const MultiHeadAttention* mha = inputs.attention;
    if (!mha) throw Error("neuron view: no attention layer");
    ProjectedAttention p;
    RowMatrix values;
    mha->projectQueryUnscaled(inputs.queryInput, p.queries);
    mha->projectKeyValue(inputs.keyInput, p.keys, values);
    p.heads = mha->heads();
    p.kvHeads = mha->kvHeads();
    p.scale = mha->scaleFactor();
    p.causal = inputs.causal;
    p.window = inputs.window;
    if (inputs.queryNorm) inputs.queryNorm->applyPerHead(p.queries, p.heads);
    if (inputs.keyNorm) inputs.keyNorm->applyPerHead(p.keys, p.kvHeads);
    if (inputs.rotary) { // the layer rotates queries and keys before their product
        inputs.rotary->apply(p.queries, p.heads, inputs.queryPosition);
        inputs.rotary->apply(p.keys, p.kvHeads, inputs.keyPosition);
    }
    return p;
}

namespace {

void checkIndices(int heads, int64_t queries, int64_t keys, int head, int query, int key) {
    if (head < 0 || head >= heads)
        throw Error("head " + std::to_string(head) + " is outside the layer's " + std::to_string(heads) +
                    " heads (numbered from 0)");
    if (query < 0 || query >= queries)
        throw Error("query " + std::to_string(query) + " is outside the " + std::to_string(queries) +
                    " query tokens (numbered from 0)");
    if (key < 0 || key >= keys)
        throw Error("key " + std::to_string(key) + " is outside the " + std::to_string(keys) +
                    " key tokens (numbered from 0)");
}

// The terms from one projected query row `q` [1, inner] at position `query` over every projected key.
NeuronTerms termsOf(const Eigen::Ref<const RowMatrix>& q, const RowMatrix& keys, int heads, int kvHeads,
                    double scale, bool causal, int window, int head, int query, int key) {
    auto hidden = [&](int64_t j) { return causal && (j > query || (window > 0 && j <= query - window)); };
    const int64_t hd = q.cols() / heads, m = keys.rows();
    const int64_t kc = static_cast<int64_t>(head / (heads / kvHeads)) * hd; // the key head's first column
    NeuronTerms t;
    t.head = head;
    t.query = query;
    t.key = key;
    t.headDim = static_cast<int>(hd);
    // 1/√d_k in double unless the layer scales otherwise (its factor is float32: compare, do not copy it).
    const double usual = 1.0 / std::sqrt(static_cast<double>(hd));
    t.scale = scale > 0 && std::abs(scale - usual) > 1e-6 * usual ? scale : usual;
    t.q.resize(size_t(hd));
    t.k.resize(size_t(hd));
    t.product.resize(size_t(hd));
    for (int64_t i = 0; i < hd; ++i) {
        t.q[size_t(i)] = q(0, head * hd + i);
        t.k[size_t(i)] = keys(key, kc + i);
        t.product[size_t(i)] = t.q[size_t(i)] * t.k[size_t(i)];
        t.dot += double(t.q[size_t(i)]) * double(t.k[size_t(i)]);
    }
    t.scaled = t.dot * t.scale;
    t.rowScores.resize(size_t(m));
    t.rowMax = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < m; ++j) {
        if (hidden(j)) {
            t.rowScores[size_t(j)] = -std::numeric_limits<double>::infinity();
            continue;
        }
        double s = 0.0;
        for (int64_t i = 0; i < hd; ++i)
            s += double(q(0, head * hd + i)) * double(keys(j, kc + i));
        t.rowScores[size_t(j)] = s * t.scale;
        t.rowMax = std::max(t.rowMax, t.rowScores[size_t(j)]);
    }
    t.masked = hidden(key);
    for (double s : t.rowScores)
        t.partition += std::exp(s - t.rowMax); // exp(-inf) = 0
    t.weight = t.masked ? 0.0 : std::exp(t.scaled - t.rowMax) / t.partition;
    return t;
}

} // namespace

NeuronTerms neuronTerms(const ProjectedAttention& p, int head, int query, int key) {
    checkIndices(p.heads, p.queries.rows(), p.keys.rows(), head, query, key);
    return termsOf(p.queries.row(query), p.keys, p.heads, p.kvHeads, p.scale, p.causal, p.window, head, query,
                   key);
}

NeuronTerms neuronTerms(const AttentionInputs& inputs, int head, int query, int key) {
    if (!inputs.attention) throw Error("neuron view: no attention layer");
    checkIndices(inputs.attention->heads(), inputs.queryInput.rows(), inputs.keyInput.rows(), head, query,
                 key);
    // Only this query's row is projected.
    AttentionInputs one = inputs;
    one.queryInput = inputs.queryInput.row(query);
    one.queryPosition = inputs.queryPosition + query;
    const ProjectedAttention p = projectAttention(one);
    return termsOf(p.queries.row(0), p.keys, p.heads, p.kvHeads, p.scale, p.causal, p.window, head, query,
                   key);
}

} // namespace attnlens
