#include "core/analysis/logit_lens.h"

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

// One forward pass keeping the stream at `rows` (no attention, no logits).
ResidualTrace traceRun(const TextModel& model, std::span<const int> ids, std::vector<int> rows,
                       const Callbacks* callbacks, const HeadList& offHeads) {
    ResidualTrace trace;
    trace.rows = std::move(rows);
    RunControls run;
    run.captureAttention = false;
    run.trace = &trace;
    run.callbacks = callbacks;
    run.offHeads = offHeads;
    model.forward(ids, false, run);
    if (trace.layers.empty() || trace.final.rows() != static_cast<Eigen::Index>(trace.rows.size()))
        throw Error("this model family does not trace its residual stream");
    return trace;
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

std::vector<LogitLens> logitLens(const TextModel& model, std::span<const int> ids,
                                 std::span<const int> positions, std::span<const int> targets, int topK,
                                 const Callbacks* callbacks, const HeadList& offHeads) {
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
        traceRun(model, ids, {positions.begin(), positions.end()}, callbacks, offHeads);
    std::vector<LogitLens> lenses(positions.size());
    const size_t layers = trace.layers.size();
    // a few rows at a time: [rows, V] logits per readout (V = 152 k for Qwen: 0.6 MB a row)
    constexpr Eigen::Index kChunk = 32;
    for (Eigen::Index c0 = 0; c0 < Eigen::Index(lenses.size()); c0 += kChunk) {
        const Eigen::Index rows = std::min<Eigen::Index>(kChunk, Eigen::Index(lenses.size()) - c0);
        const RowMatrix output = model.readout(trace.final.middleRows(c0, rows));
        const int64_t v = output.cols();
        for (Eigen::Index i = 0; i < rows; ++i) {
            LogitLens& lens = lenses[size_t(c0 + i)];
            lens.position = positions[size_t(c0 + i)];
            const int asked = targets.empty() ? -1 : targets[size_t(c0 + i)];
            lens.target = asked >= 0 ? asked : argmax(output.row(i).data(), v);
            lens.layers.resize(layers + 1);
            lens.layers[layers] = summarize(output.row(i).data(), v, lens.target, topK);
        }
        for (size_t l = 0; l < layers; ++l) {
            if (callbacks) callbacks->checkCancel();
            const RowMatrix logits = model.readout(trace.layers[l].input.middleRows(c0, rows));
            for (Eigen::Index i = 0; i < rows; ++i) {
                LogitLens& lens = lenses[size_t(c0 + i)];
                lens.layers[l] = summarize(logits.row(i).data(), v, lens.target, topK);
            }
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
                                      int target, const Callbacks* callbacks, const HeadList& offHeads) {
    checkPosition(position, ids.size());
    checkTarget(target, model);
    // float32 throughout (a model packed in bf16 too): the parts are read with the plain weights
    const Fp32ReferenceScope fp32;
    const ResidualTrace trace = traceRun(model, ids, {position}, callbacks, offHeads);
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
