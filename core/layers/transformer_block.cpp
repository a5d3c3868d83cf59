#include "core/layers/transformer_block.h"

#include "core/util/error.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnlens {

namespace {

// RMSNorm of rows [r0, r1) in place.
void rmsNormRows(RowMatrix& x, const ConstVectorMap& g, float eps, bool unitOffset, int64_t r0, int64_t r1) {
    const auto d = x.cols();
    for (Eigen::Index r = r0; r < r1; ++r) {
        auto row = x.row(r);
        const float meanSquare = row.squaredNorm() / static_cast<float>(d);
        row *= 1.0f / std::sqrt(meanSquare + eps);
        if (unitOffset)
            row.array() *= g.transpose().array() + 1.0f;
        else
            row.array() *= g.transpose().array();
    }
}

} // namespace

void Norm::apply(RowMatrix& x) const {
    if (kind == Kind::LayerNorm) return layerNormInPlace(x, weight, bias, eps);
    const auto d = x.cols();
    const ConstVectorMap g(weight.data(), d);
    parallelRows(x.rows(), d, [&](int64_t r0, int64_t r1) { rmsNormRows(x, g, eps, unitOffset, r0, r1); });
}

void Norm::applyPerHead(RowMatrix& x, int heads) const {
    const int64_t d = x.cols() / heads;
    if (d * heads != x.cols() || d != weight.numel())
        throw Error("per-head norm: " + std::to_string(x.cols()) + " columns for " + std::to_string(heads) +
                    " heads of " + std::to_string(weight.numel()));
    RowMatrix rows = Eigen::Map<RowMatrix>(x.data(), x.rows() * heads, d);
    apply(rows);
    Eigen::Map<RowMatrix>(x.data(), x.rows() * heads, d) = rows;
}

std::vector<float> Norm::frozenTranspose(std::span<const float> direction, std::span<const float> y0,
                                         float& constant) const {
    const size_t d = y0.size();
    if (direction.size() != d || static_cast<size_t>(weight.numel()) != d)
        throw Error("norm: a row of " + std::to_string(d) + " for a norm of " +
                    std::to_string(weight.numel()));
    double mean = 0.0, square = 0.0;
    for (float v : y0) {
        mean += v;
        square += double(v) * v;
    }
    mean /= double(d);
    const bool layer = kind == Kind::LayerNorm;
    const double spread = layer ? square / double(d) - mean * mean : square / double(d);
    const double inverse = 1.0 / std::sqrt(std::max(spread, 0.0) + double(eps));
    const float* g = weight.data();
    std::vector<float> out(d);
    double outMean = 0.0, shift = 0.0;
    for (size_t i = 0; i < d; ++i) {
        const double gain = unitOffset ? 1.0 + g[i] : g[i];
        out[i] = static_cast<float>(direction[i] * gain * inverse);
        outMean += out[i];
        if (layer && !bias.empty()) shift += double(direction[i]) * bias.data()[i];
    }
    constant += static_cast<float>(shift);
    if (layer)
        for (float& v : out)
            v = static_cast<float>(v - outMean / double(d));
    return out;
}

RowMatrix Mlp::forward(const RowMatrix& x, const Callbacks* cancel) const {
    if (x.rows() > kRowsPerPiece) {
        RowMatrix result(x.rows(), x.cols());
        for (Eigen::Index r = 0; r < x.rows(); r += kRowsPerPiece) {
            if (cancel) cancel->checkCancel();
            const Eigen::Index rows = std::min<Eigen::Index>(kRowsPerPiece, x.rows() - r);
            result.middleRows(r, rows) = forward(x.middleRows(r, rows));
        }
        return result;
    }
    RowMatrix h, result;
    linearInto(x, in, h);
    applyActivationInPlace(h, activation);
    if (kind == Kind::Gated) {
        RowMatrix u;
        linearInto(x, up, u);
        h.array() *= u.array();
    }
    linearInto(h, out, result);
    return result;
}

void Mlp::pack() {
    in.pack();
    if (kind == Kind::Gated) up.pack();
    out.pack();
}

namespace {

const std::vector<int>& rowsOf(const BlockRun& run) {
    static const std::vector<int> all;
    return run.traceRows ? *run.traceRows : all;
}

// One residual sub-layer: x = x + f(N(x)) (pre; x + O(f(N(x))) with an output norm O) or x = N(x + f(x))
// (post). added: when set, a pre sub-layer keeps there the rows of f's output (before an output norm).
template <class F>
void residual(RowMatrix& x, const Norm& norm, bool pre, F&& f, const std::optional<Norm>& outNorm = {},
              RowMatrix* added = nullptr, const std::vector<int>& rows = {}) {
    if (pre) {
        RowMatrix normed = x;
        norm.apply(normed);
        if (!outNorm) {
            if (!added) {
                x += f(normed);
                return;
            }
            RowMatrix y = f(normed);
            *added = traceRows(y, rows);
            x += y;
            return;
        }
        RowMatrix y = f(normed);
        if (added) *added = traceRows(y, rows); // before the output norm (the lenses freeze its scale)
        outNorm->apply(y);
        x += y;
    } else {
        x += f(x);
        norm.apply(x);
    }
}

} // namespace

void TransformerBlock::selfAttentionSublayer(RowMatrix& x, const BlockRun& run) const {
    const int64_t past = run.cache ? run.cache->length : 0;
    if (run.trace) run.trace->input = traceRows(x, rowsOf(run));
    // the heads' contexts before o_proj, kept for a trace
    const auto project = [&](RowMatrix context) {
        if (run.trace) run.trace->context = traceRows(context, rowsOf(run));
        return attention.outProject(context);
    };
    residual(
        x, attentionNorm, placement == Placement::Pre,
        [&](const RowMatrix& input) {
            if (run.probe)
                *run.probe = {&attention,
                              input,
                              input,
                              causal,
                              rotary ? &*rotary : nullptr,
                              past,
                              past,
                              queryNorm ? &*queryNorm : nullptr,
                              keyNorm ? &*keyNorm : nullptr,
                              window};
            RowMatrix q, k, v;
            attention.projectQuery(input, q);
            attention.projectKeyValue(input, k, v);
            if (run.callbacks) run.callbacks->checkCancel();
            if (queryNorm) queryNorm->applyPerHead(q, attention.heads());
            if (keyNorm) keyNorm->applyPerHead(k, attention.kvHeads());
            if (rotary) {
                rotary->apply(q, attention.heads(), past);
                rotary->apply(k, attention.kvHeads(), past);
            }
            // one causal query sees every key before it, unless a window hides the oldest (attendHeadsCausal)
            const RowMatrix* maskPtr = causal ? nullptr : run.mask;
            if (run.cache) run.cache->append(k, v);
            if (run.recall) {
                LayerRecall& r = *run.recall;
                r = {&attention,
                     q,
                     run.cache ? run.cache->keys.topRows(run.cache->length) : k,
                     causal,
                     past,
                     window,
                     RowMatrix(),
                     std::vector<int>(run.offHeads.begin(), run.offHeads.end())};
                if (!causal && maskPtr) r.mask = *maskPtr;
            }
            const int64_t m = run.cache ? run.cache->length : k.rows();
            const auto keys = run.cache ? run.cache->keys.topRows(m) : k.topRows(m);
            const auto values = run.cache ? run.cache->values.topRows(m) : v.topRows(m);
            if (run.trace && run.traceValues) run.trace->valueNorms = attention.valueNorms(values);
            if (causal && run.keptKeys) return project(attendKept(q, keys, values, past, run));
            if (causal) // the keys a query cannot see are skipped, not masked
                return project(attention.attendHeadsCausal(q, keys, values, past, window, run.probs,
                                                           run.offHeads, run.callbacks));
            return project(
                attention.attendHeads(q, keys, values, maskPtr, run.probs, run.offHeads, run.callbacks));
        },
        attentionOutputNorm, run.trace ? &run.trace->attention : nullptr, rowsOf(run));
}

RowMatrix TransformerBlock::attendKept(const RowMatrix& q, const Eigen::Ref<const RowMatrix>& keys,
                                       const Eigen::Ref<const RowMatrix>& values, int64_t past,
                                       const BlockRun& run) const {
    const std::vector<char>& kept = *run.keptKeys;
    const int64_t m = keys.rows();
    if (q.rows() != 1 || m != past + 1)
        throw Error("KV what-if: kept keys apply to one new token at a time after a cache");
    if (run.recall) throw Error("KV what-if: kept keys with attention kept on demand");
    std::vector<Eigen::Index> index; // the keys attended: kept, inside the window, and the token's own
    for (int64_t j = 0; j < past; ++j)
        if (j < int64_t(kept.size()) && kept[size_t(j)] && (window <= 0 || j > past - window))
            index.push_back(j);
    index.push_back(past);
    if (int64_t(index.size()) == m) // nothing evicted: the plain pass, bit for bit
        return attention.attendHeadsCausal(q, keys, values, past, window, run.probs, run.offHeads);
    const RowMatrix k = keys(index, Eigen::all), v = values(index, Eigen::all);
    Tensor compact;
    RowMatrix context = attention.attendHeadsCausal(q, k, v, int64_t(index.size()) - 1, 0,
                                                    run.probs ? &compact : nullptr, run.offHeads);
    if (run.probs) { // back to every key's place, the evicted 0
        const int heads = attention.heads();
        if (run.probs->empty()) *run.probs = Tensor({heads, 1, m});
        float* out = run.probs->data();
        std::fill(out, out + heads * m, 0.0f);
        for (int h = 0; h < heads; ++h)
            for (size_t i = 0; i < index.size(); ++i)
                out[h * m + index[i]] = compact.data()[h * int64_t(index.size()) + int64_t(i)];
    }
    return context;
}

void TransformerBlock::crossSublayer(RowMatrix& x, const BlockRun& run) const {
    if (!run.crossKeys || !run.crossValues)
        throw Error(
            "transformer: a block with cross-attention ran without the other sequence's keys and values");
    if (run.trace && run.traceValues)
        run.trace->crossValueNorms = cross->attention.valueNorms(*run.crossValues);
    residual(
        x, cross->norm, placement == Placement::Pre,
        [&](const RowMatrix& input) {
            RowMatrix q;
            cross->attention.projectQuery(input, q);
            return cross->attention.attend(q, *run.crossKeys, *run.crossValues, run.crossMask, run.crossProbs,
                                           run.crossOffHeads);
        },
        {}, run.trace ? &run.trace->cross : nullptr, rowsOf(run));
}

void TransformerBlock::mlpSublayer(RowMatrix& x, const BlockRun& run) const {
    residual(
        x, mlpNorm, placement == Placement::Pre,
        [&](const RowMatrix& input) { return mlp.forward(input, run.callbacks); }, mlpOutputNorm,
        run.trace ? &run.trace->mlp : nullptr, rowsOf(run));
}

void TransformerBlock::forward(RowMatrix& x, const BlockRun& run) const {
    selfAttentionSublayer(x, run);
    if (run.callbacks) run.callbacks->checkCancel();
    if (cross) {
        crossSublayer(x, run);
        if (run.callbacks) run.callbacks->checkCancel();
    }
    mlpSublayer(x, run);
}

void TransformerBlock::forwardBatch(RowMatrix& x, const std::vector<KvCache*>& caches,
                                    const std::vector<Tensor*>& selfProbs,
                                    const std::vector<Tensor*>& crossProbs, const BlockRun& shared) const {
    if (rotary || queryNorm || window > 0 || attentionOutputNorm)
        throw Error("transformer: batched hypotheses through a rotary, windowed or sandwich block are not "
                    "supported");
    const Eigen::Index B = x.rows();
    if (static_cast<Eigen::Index>(caches.size()) != B || static_cast<Eigen::Index>(selfProbs.size()) != B ||
        (cross && static_cast<Eigen::Index>(crossProbs.size()) != B))
        throw Error("transformer: " + std::to_string(B) + " hypotheses but " + std::to_string(caches.size()) +
                    " caches");
    const bool pre = placement == Placement::Pre;
    RowMatrix context(B, x.cols()); // [B, D]
    residual(x, attentionNorm, pre, [&](const RowMatrix& input) {
        RowMatrix q, k, v;
        attention.projectQuery(input, q);       // [B, D]
        attention.projectKeyValue(input, k, v); // [B, D_kv]
        for (Eigen::Index b = 0; b < B; ++b) {
            KvCache& cache = *caches[size_t(b)];
            cache.append(k.row(b), v.row(b));
            context.row(b) = attention.attendHeads(q.row(b), cache.keys.topRows(cache.length),
                                                   cache.values.topRows(cache.length), nullptr,
                                                   selfProbs[size_t(b)], shared.offHeads);
        }
        return attention.outProject(context);
    });
    if (cross) {
        if (!shared.crossKeys || !shared.crossValues)
            throw Error(
                "transformer: a block with cross-attention ran without the other sequence's keys and values");
        residual(x, cross->norm, pre, [&](const RowMatrix& input) {
            RowMatrix q;
            cross->attention.projectQuery(input, q);
            for (Eigen::Index b = 0; b < B; ++b)
                context.row(b) =
                    cross->attention.attendHeads(q.row(b), *shared.crossKeys, *shared.crossValues, nullptr,
                                                 crossProbs[size_t(b)], shared.crossOffHeads);
            return cross->attention.outProject(context);
        });
    }
    mlpSublayer(x, shared);
}

void runBlocks(std::span<const TransformerBlock> blocks, RowMatrix& x, std::span<KvCache> caches,
               Tensor& attentions, const std::vector<std::vector<int>>& off, const BlocksRun& controls) {
    const auto [probe, probeLayer, callbacks, recall, trace, keptKeys] = controls;
    if (!caches.empty() && caches.size() != blocks.size())
        throw Error("transformer: " + std::to_string(caches.size()) + " caches for " +
                    std::to_string(blocks.size()) + " layers");
    if (recall) recall->assign(blocks.size(), LayerRecall());
    if (trace) trace->layers.assign(blocks.size(), LayerTrace());
    for (size_t l = 0; l < blocks.size(); ++l) {
        if (callbacks) callbacks->checkCancel();
        Tensor probs;
        if (!attentions.empty()) probs = attentions.sub({static_cast<int64_t>(l)});
        BlockRun run;
        run.cache = caches.empty() ? nullptr : &caches[l];
        run.probs = attentions.empty() ? nullptr : &probs;
        if (l < off.size()) run.offHeads = off[l];
        run.probe = probe && probeLayer == static_cast<int>(l) ? probe : nullptr;
        run.recall = recall ? &(*recall)[l] : nullptr;
        run.trace = trace ? &trace->layers[l] : nullptr;
        run.traceRows = trace ? &trace->rows : nullptr;
        run.traceValues = trace && trace->values;
        run.keptKeys = keptKeys;
        run.callbacks = callbacks;
        blocks[l].forward(x, run);
    }
    if (trace) trace->final = traceRows(x, trace->rows);
}

} // namespace attnlens
