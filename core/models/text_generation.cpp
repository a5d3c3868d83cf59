#include "core/models/text_generation.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlens {

TextCache cachePrefix(const TextCache& cache, int64_t n) {
    if (n < 0 || n > cache.length())
        throw Error("a cache prefix of " + std::to_string(n) + " entries from " +
                    std::to_string(cache.length()));
    TextCache out;
    out.layers.resize(cache.layers.size());
    for (size_t l = 0; l < cache.layers.size(); ++l) {
        out.layers[l].keys = cache.layers[l].keys.topRows(n);
        out.layers[l].values = cache.layers[l].values.topRows(n);
        out.layers[l].length = n;
    }
    return out;
}

TextStep greedyStep(const TextFolder& folder, const RowMatrix& logits, TextCache& cache,
                    const RunControls& run) {
    if (!folder.decoderOnly()) throw Error("only decoder-only models generate");
    if (logits.rows() == 0) throw Error("greedy step: no logits to choose from");
    TextStep step;
    step.id = topCandidates(logits.data() + (logits.rows() - 1) * logits.cols(), logits.cols(), 1).front().id;
    step.forward = folder.model->extend(std::vector<int>{step.id}, cache, true, true, run);
    return step;
}

int chooseToken(const float* logits, int64_t vocab, const Sampling& s, std::mt19937_64& rng) {
    if (vocab <= 0) throw Error("choosing a token: no logits");
    if (!std::isfinite(s.temperature) || s.temperature < 0 || s.topK < 0 || !(s.topP > 0 && s.topP <= 1))
        throw Error("sampling: temperature ≥ 0, top-k ≥ 0 and top-p in (0, 1] expected");
    if (s.greedy()) return static_cast<int>(std::max_element(logits, logits + vocab) - logits);
    std::vector<int> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    const size_t k = s.topK > 0 ? std::min<size_t>(size_t(s.topK), order.size()) : order.size();
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(k), order.end(), [&](int a, int b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    order.resize(k);
    std::vector<double> p(k);
    const double top = double(logits[order[0]]) / s.temperature;
    for (size_t i = 0; i < k; ++i)
        p[i] = std::exp(double(logits[order[i]]) / s.temperature - top);
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    size_t keep = k; // top-p: the smallest prefix whose mass reaches topP
    double mass = 0;
    for (size_t i = 0; i < k && s.topP < 1; ++i) {
        mass += p[i] / sum;
        if (mass >= s.topP) {
            keep = i + 1;
            break;
        }
    }
    const double kept = std::accumulate(p.begin(), p.begin() + std::ptrdiff_t(keep), 0.0);
    const double u = std::uniform_real_distribution<double>(0.0, kept)(rng);
    double acc = 0;
    for (size_t i = 0; i < keep; ++i)
        if ((acc += p[i]) > u) return order[i];
    return order[keep - 1];
}

namespace {

std::vector<int> continuation(const TextFolder& folder, RowMatrix logits, TextCache& cache, int count,
                              const Sampling& sampling, const RunControls& run,
                              const std::function<void(const TextStep&)>& onStep, StopAt stop) {
    if (!folder.decoderOnly()) throw Error("only decoder-only models generate");
    std::vector<int> ids;
    for (int i = 0; i < count && cache.length() < folder.maxPositions(); ++i) {
        if (logits.rows() == 0) throw Error("generation: no logits to choose from");
        // one generator per position: the token at a position is the same whether the text was generated in
        // one call or step by step
        std::mt19937_64 rng(sampling.seed ^ (0x9E3779B97F4A7C15ull * uint64_t(cache.length() + 1)));
        TextStep step;
        step.id =
            chooseToken(logits.data() + (logits.rows() - 1) * logits.cols(), logits.cols(), sampling, rng);
        step.forward = folder.model->extend(std::vector<int>{step.id}, cache, true, true, run);
        ids.push_back(step.id);
        if (onStep) onStep(step);
        if (stop == StopAt::EndOfText && folder.isEndOfText(step.id)) break;
        logits = std::move(step.forward.logits);
    }
    return ids;
}

} // namespace

std::vector<int> greedyContinuation(const TextFolder& folder, RowMatrix logits, TextCache& cache, int count,
                                    const RunControls& run,
                                    const std::function<void(const TextStep&)>& onStep, StopAt stop) {
    return continuation(folder, std::move(logits), cache, count, Sampling{}, run, onStep, stop);
}

std::vector<int> sampleContinuation(const TextFolder& folder, RowMatrix logits, TextCache& cache, int count,
                                    const Sampling& sampling, const RunControls& run,
                                    const std::function<void(const TextStep&)>& onStep, StopAt stop) {
    return continuation(folder, std::move(logits), cache, count, sampling, run, onStep, stop);
}

} // namespace attnlens
