#include "core/analysis/logit_lens.h"

#include "core/models/text_generation.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace attnlens {

namespace {

void checkPosition(int position, size_t n) {
    if (position < 0 || position >= static_cast<int>(n))
        throw Error("position " + std::to_string(position) + " is outside the text of " + std::to_string(n) +
                    " tokens (numbered from 0)");
}

void checkTarget(int target, const TextModel& model) {
    if (target >= model.vocabSize())
        throw Error("token id " + std::to_string(target) + " is outside the vocabulary of " +
                    std::to_string(model.vocabSize()));
}

int argmax(const float* row, int64_t v) {
    return static_cast<int>(std::max_element(row, row + v) - row);
}

LogitLensLayer summarize(const float* logits, int64_t v, int target, int topK) {
    LogitLensLayer out;
    const float top = *std::max_element(logits, logits + v);
    double sum = 0.0;
    for (int64_t i = 0; i < v; ++i)
        sum += std::exp(double(logits[i]) - top);
    const auto prob = [&](int64_t i) { return static_cast<float>(std::exp(double(logits[i]) - top) / sum); };
    const int k = static_cast<int>(std::min<int64_t>(std::max(topK, 0), v));
    std::vector<int> order(static_cast<size_t>(v));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    for (int i = 0; i < k; ++i)
        out.top.push_back({order[size_t(i)], prob(order[size_t(i)])});
    out.targetLogit = logits[target];
    out.targetProb = prob(target);
    out.targetRank =
        static_cast<int>(std::count_if(logits, logits + v, [&](float x) { return x > logits[target]; }));
    return out;
}

std::span<const float> rowOf(const RowMatrix& m) {
    return {m.data(), size_t(m.cols())};
}

float dot(const std::vector<float>& direction, const float* row) {
    double s = 0.0;
    for (size_t i = 0; i < direction.size(); ++i)
        s += double(direction[i]) * row[i];
    return static_cast<float>(s);
}

} // namespace

ResidualTrace traceForward(const TextModel& model, std::span<const int> ids, std::vector<int> rows,
                           bool values, const Callbacks* callbacks, const HeadList& offHeads,
                           const TextCache* past) {
    ResidualTrace trace;
    trace.rows = std::move(rows);
    trace.values = values;
    RunControls run;
    run.captureAttention = false;
    run.trace = &trace;
    run.callbacks = callbacks;
    run.offHeads = offHeads;
    const bool any = !trace.rows.empty();
    const int from = any ? *std::min_element(trace.rows.begin(), trace.rows.end()) : 0;
    const int to = any ? *std::max_element(trace.rows.begin(), trace.rows.end()) : 0;
    if (past && !values && model.decoderOnly() && any && from >= 0 && to < int(ids.size()) &&
        past->length() >= from) {
        // from the first row on, over the cache's entries before it; the trace's rows counted from there
        const std::vector<int> absolute = trace.rows;
        for (int& r : trace.rows)
            r -= from;
        TextCache cache = cachePrefix(*past, from);
        model.extend(ids.subspan(size_t(from), size_t(to - from + 1)), cache, false, false, run);
        trace.rows = absolute;
    } else {
        model.forward(ids, false, run);
    }
    if (trace.layers.empty() || trace.final.rows() != static_cast<Eigen::Index>(trace.rows.size()))
        throw Error("this model family does not trace its residual stream");
    return trace;
}

std::vector<LogitLens> logitLens(const TextModel& model, std::span<const int> ids,
                                 std::span<const int> positions, std::span<const int> targets, int topK,
                                 const Callbacks* callbacks, const HeadList& offHeads,
                                 const TextCache* past) {
    if (!model.hasLmHead()) throw Error("the logit lens needs a model with a language-model head");
    if (positions.empty()) throw Error("logit lens: no position asked for");
    if (!targets.empty() && targets.size() != positions.size())
        throw Error("logit lens: " + std::to_string(targets.size()) + " targets for " +
                    std::to_string(positions.size()) + " positions");
    for (int p : positions)
        checkPosition(p, ids.size());
    for (int t : targets)
        checkTarget(t, model);
    const ResidualTrace trace =
        traceForward(model, ids, {positions.begin(), positions.end()}, false, callbacks, offHeads, past);
    return lensOfTrace(
        trace, targets, topK, [&](const RowMatrix& stream) { return model.readout(stream); }, callbacks);
}

std::vector<LogitLens> lensOfTrace(const ResidualTrace& trace, std::span<const int> targets, int topK,
                                   const Readout& readout, const Callbacks* callbacks) {
    const size_t n = trace.rows.size();
    if (!targets.empty() && targets.size() != n)
        throw Error("logit lens: " + std::to_string(targets.size()) + " targets for " + std::to_string(n) +
                    " positions");
    std::vector<LogitLens> lenses(n);
    const size_t layers = trace.layers.size();
    // The readouts stacked, 64 rows per product: the head's weight (Qwen: 152 k × 896) is read once per 64
    // rows instead of once per layer, and the logits held are [64, V]. The output rows go first (their
    // targets).
    constexpr size_t kRows = 64;
    struct Item {
        size_t lens, layer; // layer == layers: the output
    };
    std::vector<Item> items;
    for (size_t i = 0; i < n; ++i)
        items.push_back({i, layers});
    for (size_t l = 0; l < layers; ++l)
        for (size_t i = 0; i < n; ++i)
            items.push_back({i, l});
    for (size_t i = 0; i < n; ++i) {
        lenses[i].position = trace.rows[i];
        lenses[i].layers.resize(layers + 1);
    }
    RowMatrix stacked(Eigen::Index(std::min(kRows, items.size())), trace.final.cols());
    for (size_t c0 = 0; c0 < items.size(); c0 += kRows) {
        if (callbacks) callbacks->checkCancel();
        const size_t rows = std::min(kRows, items.size() - c0);
        for (size_t k = 0; k < rows; ++k) {
            const Item& it = items[c0 + k];
            const RowMatrix& from = it.layer == layers ? trace.final : trace.layers[it.layer].input;
            stacked.row(Eigen::Index(k)) = from.row(Eigen::Index(it.lens));
        }
        const RowMatrix logits = readout(stacked.topRows(Eigen::Index(rows)));
        const int64_t v = logits.cols();
        for (size_t k = 0; k < rows; ++k) {
            const Item& it = items[c0 + k];
            LogitLens& lens = lenses[it.lens];
            const float* row = logits.row(Eigen::Index(k)).data();
            if (it.layer == layers) {
                const int asked = targets.empty() ? -1 : targets[it.lens];
                if (asked >= v)
                    throw Error("token id " + std::to_string(asked) + " is outside the " + std::to_string(v) +
                                " the readout gives");
                lens.target = asked >= 0 ? asked : argmax(row, v);
            }
            lens.layers[it.layer] = summarize(row, v, lens.target, topK);
        }
    }
    return lenses;
}

RowMatrix headWrites(const MultiHeadAttention& attention, const LayerTrace& trace, int row) {
    const int heads = attention.heads();
    const int64_t hd = attention.headDim();
    if (row < 0 || row >= trace.context.rows() || trace.context.cols() != heads * hd)
        throw Error("head writes: row " + std::to_string(row) + " of a trace of " +
                    std::to_string(trace.context.rows()));
    RowMatrix one = RowMatrix::Zero(heads, trace.context.cols()), writes;
    for (int h = 0; h < heads; ++h)
        one.row(h).segment(h * hd, hd) = trace.context.row(row).segment(h * hd, hd);
    linearInto(one, attention.outWeights(), writes); // [H, D], each with o_proj's bias
    if (const Tensor& bias = attention.outWeights().bias; !bias.empty())
        writes.rowwise() -= Eigen::Map<const Eigen::RowVectorXf>(bias.data(), writes.cols());
    return writes;
}

float LogitContributions::total() const {
    double s = double(constant) + embeddings;
    for (Eigen::Index i = 0; i < heads.size(); ++i)
        s += heads.data()[i];
    for (const auto* part : {&outputBias, &cross, &mlp, &whole})
        for (float v : *part)
            s += v;
    return static_cast<float>(s);
}

LogitContributions logitContributions(const TextModel& model, std::span<const int> ids, int position,
                                      int target, const Callbacks* callbacks, const HeadList& offHeads,
                                      const TextCache* past) {
    checkPosition(position, ids.size());
    checkTarget(target, model);
    // float32 throughout (a model packed in bf16 too): the parts are read with the plain weights
    const Fp32ReferenceScope fp32;
    const ResidualTrace trace = traceForward(model, ids, {position}, false, callbacks, offHeads, past);
    const RowMatrix output = model.readout(trace.final);
    LogitContributions c;
    c.position = position;
    c.target = target >= 0 ? target : argmax(output.data(), output.cols());
    c.logit = output(0, c.target);
    const auto d = model.logitDirection({trace.final.data(), size_t(trace.final.cols())}, c.target);
    if (!d)
        throw Error("direct logit attribution needs a final norm and a linear language-model head (this "
                    "model's head is neither)");
    c.constant = d->constant;
    c.softcap = d->softcap;
    const auto blocks = model.blocks();
    const size_t layers = trace.layers.size();
    if (blocks.size() != layers) throw Error("logit attribution: the blocks and the trace disagree");
    c.embeddings = dot(d->direction, trace.layers[0].input.data());
    const int heads = layers ? blocks[0].attention.heads() : 0;
    c.heads = RowMatrix::Zero(Eigen::Index(layers), heads);
    c.outputBias.assign(layers, 0.0f);
    c.cross = c.mlp = c.whole = c.outputBias;
    c.split.assign(layers, 0);
    for (size_t l = 0; l < layers; ++l) {
        if (callbacks) callbacks->checkCancel();
        const LayerTrace& t = trace.layers[l];
        const MultiHeadAttention& attention = blocks[l].attention;
        if (t.attention.size() == 0 || t.mlp.size() == 0 || attention.heads() != heads) {
            const RowMatrix& next = l + 1 < layers ? trace.layers[l + 1].input : trace.final;
            const RowMatrix change = next - t.input;
            c.whole[l] = dot(d->direction, change.data());
            continue;
        }
        c.split[l] = 1;
        const TransformerBlock& block = blocks[l];
        // a sub-layer's output norm (Gemma's sandwich) frozen at its output, as the final norm is
        float attentionShift = 0.0f, mlpShift = 0.0f;
        const std::vector<float> da =
            block.attentionOutputNorm
                ? block.attentionOutputNorm->frozenTranspose(d->direction, rowOf(t.attention), attentionShift)
                : d->direction;
        const std::vector<float> dm =
            block.mlpOutputNorm ? block.mlpOutputNorm->frozenTranspose(d->direction, rowOf(t.mlp), mlpShift)
                                : d->direction;
        const RowMatrix writes = headWrites(attention, t, 0);
        const Tensor& bias = attention.outWeights().bias;
        if (!bias.empty()) {
            c.outputBias[l] = dot(da, bias.data());
        }
        c.outputBias[l] += attentionShift;
        for (int h = 0; h < heads; ++h)
            c.heads(Eigen::Index(l), h) = dot(da, writes.row(h).data());
        if (t.cross.size()) c.cross[l] = dot(d->direction, t.cross.data());
        c.mlp[l] = dot(dm, t.mlp.data()) + mlpShift;
    }
    return c;
}

} // namespace attnlens
