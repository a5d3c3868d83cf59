#include "core/analysis/kv_rerun.h"

#include "core/util/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace attnlens {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// log-softmax of a logits row [V]
std::vector<float> logSoftmax(const RowMatrix& logits) {
    const float* row = logits.data() + (logits.rows() - 1) * logits.cols();
    const int64_t v = logits.cols();
    const float top = *std::max_element(row, row + v);
    double sum = 0.0;
    for (int64_t i = 0; i < v; ++i)
        sum += std::exp(double(row[i]) - top);
    const double log = double(top) + std::log(sum);
    std::vector<float> out(static_cast<size_t>(v));
    for (int64_t i = 0; i < v; ++i)
        out[size_t(i)] = float(double(row[i]) - log);
    return out;
}

int argmax(const std::vector<float>& row) {
    return int(std::max_element(row.begin(), row.end()) - row.begin());
}

// KL(p ‖ q) from log-probabilities, in nats
float kl(const std::vector<float>& logP, const std::vector<float>& logQ) {
    double sum = 0.0;
    for (size_t i = 0; i < logP.size(); ++i)
        if (logP[i] > -80.0f) sum += std::exp(double(logP[i])) * (double(logP[i]) - double(logQ[i]));
    return float(std::max(sum, 0.0));
}

bool endsText(const TextModel& model, int id) {
    const auto ends = model.endOfTextIds();
    return std::find(ends.begin(), ends.end(), id) != ends.end();
}

void checkDecoder(const TextModel& model) {
    if (!model.decoderOnly()) throw Error("KV what-if: only decoder-only models generate");
    if (!model.hasLmHead()) throw Error("KV what-if: the model has no language-model head");
}

} // namespace

int KvRerun::changed() const {
    return int(std::count_if(steps.begin(), steps.end(),
                             [](const KvRerunStep& s) { return s.samePrefix && s.chosen != s.original; }));
}

namespace {

// The prompt's pass, or the one given: base's cache, summed attention and first token.
void runPrompt(const TextModel& model, const KvOptions& options, const Callbacks& callbacks,
               KvBaseline& base) {
    const auto p = int64_t(base.prompt.size());
    if (options.promptAttention || options.promptCache) {
        if (!options.promptAttention || !options.promptCache || options.promptCache->length() < p ||
            options.promptAttention->rows() != p || options.promptAttention->cols() != p ||
            options.promptCache->layers.size() != size_t(model.layers()))
            throw Error("KV what-if: the prompt's run given does not match the prompt");
        base.summedPrompt = summedAttention(*options.promptAttention);
        base.promptCache = cachePrefix(*options.promptCache, p - 1);
        // the last prompt token again, for its logits (its entry the same up to float rounding)
        RunControls last;
        last.captureAttention = false;
        last.offHeads = options.offHeads;
        const TextForward f =
            model.extend(std::span<const int>(base.prompt).last(1), base.promptCache, true, true, last);
        base.tokens.push_back(argmax(logSoftmax(f.logits)));
        return;
    }
    base.promptCache = model.newCache();
    RunControls run;
    run.captureBudget = 0; // on demand: only the sum is kept
    run.callbacks = &callbacks;
    run.offHeads = options.offHeads;
    const TextForward first = model.extend(base.prompt, base.promptCache, true, true, run);
    base.summedPrompt = summedAttention(*first.attentionStore());
    base.tokens.push_back(argmax(logSoftmax(first.logits)));
}

} // namespace

KvRerun::Totals KvRerun::totals() const {
    Totals t;
    for (const KvRerunStep& st : steps) {
        if (!std::isfinite(st.logprob)) continue;
        t.logprob += st.logprob;
        t.baseLogprob += st.baseLogprob;
        t.kl += st.kl;
        ++t.compared;
    }
    return t;
}

KvBaseline kvBaseline(const TextModel& model, std::span<const int> prompt, const KvOptions& options,
                      const Callbacks& callbacks) {
    checkDecoder(model);
    if (prompt.empty()) throw Error("KV what-if: an empty prompt");
    if (options.steps > kMaxKvSteps)
        throw Error("KV what-if: " + std::to_string(options.steps) + " steps, at most " +
                    std::to_string(kMaxKvSteps));
    KvBaseline base;
    base.prompt.assign(prompt.begin(), prompt.end());
    base.offHeads = options.offHeads;
    const auto start = Clock::now();
    runPrompt(model, options, callbacks, base);
    for (const KvCache& layer : base.promptCache.layers)
        base.entryBytes += 2 * layer.keys.cols() * int64_t(sizeof(float));
    base.promptSeconds = secondsSince(start);

    const auto stepsStart = Clock::now();
    TextCache cache = base.promptCache;
    RunControls step;
    step.callbacks = &callbacks;
    step.offHeads = options.offHeads;
    const bool stopAtEnd = options.stop == StopAt::EndOfText;
    for (int s = 0; s < options.steps && cache.length() < model.maxPositions() &&
                    !(stopAtEnd && endsText(model, base.tokens.back()));
         ++s) {
        callbacks.report(double(s) / options.steps, "baseline");
        const TextForward f = model.extend(std::vector<int>{base.tokens.back()}, cache, true, true, step);
        base.logprobs.push_back(logSoftmax(f.logits));
        base.summedSteps.push_back(summedStepAttention(f.attentions));
        base.tokens.push_back(argmax(base.logprobs.back()));
    }
    base.stepsSeconds = secondsSince(stepsStart);
    return base;
}

KvRerun kvRerun(const TextModel& model, const KvBaseline& base, const KvPolicy& policy, KvRerunMode mode,
                const Callbacks& callbacks) {
    checkDecoder(model);
    if (base.promptCache.layers.size() != size_t(model.layers()))
        throw Error("KV what-if: a baseline of another model");
    const auto start = Clock::now();
    KvRerun out;
    out.policy = policy;
    out.mode = mode;
    out.kept.promptLength = base.promptLength();
    KvPolicyTracker tracker(policy, base.summedPrompt);
    const bool reads =
        policy.kind == KvPolicy::Kind::HeavyHitters; // the only one reading the steps' attention
    TextCache cache = base.promptCache;
    RunControls run;
    run.callbacks = &callbacks;
    run.offHeads = base.offHeads;
    run.captureAttention = reads;
    int fed = base.tokens.front();
    bool same = true; // Free: the text so far is the baseline's
    constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    for (int s = 0; s < base.steps(); ++s) {
        callbacks.report(double(s) / base.steps(), "re-run");
        const std::vector<char>& kept = tracker.kept();
        run.keptKeys = policy.kind == KvPolicy::Kind::Full ? nullptr : &kept;
        const TextForward f = model.extend(std::vector<int>{fed}, cache, true, true, run);
        const std::vector<float> logprobs = logSoftmax(f.logits);
        KvRerunStep step;
        step.fed = fed;
        step.original = base.tokens[size_t(s) + 1];
        step.chosen = argmax(logprobs);
        step.baseLogprob = base.logprobs[size_t(s)][size_t(step.original)];
        step.samePrefix = same;
        step.logprob = same ? logprobs[size_t(step.original)] : nan;
        step.kl = same ? kl(base.logprobs[size_t(s)], logprobs) : nan;
        step.kept = int(std::count(kept.begin(), kept.end(), 1));
        step.cacheBytes = step.kept * base.entryBytes;
        if (step.chosen != step.original && out.firstChange < 0) out.firstChange = s;
        out.kept.rows.push_back(kept);
        out.steps.push_back(step);
        if (reads)
            tracker.advance(summedStepAttention(f.attentions));
        else
            tracker.advance({});
        if (mode == KvRerunMode::Free) {
            same = same && step.chosen == step.original;
            fed = step.chosen;
            if (endsText(model, fed)) break;
        } else {
            fed = step.original;
        }
    }
    out.kept.steps = int(out.steps.size());
    out.seconds = secondsSince(start);
    return out;
}

} // namespace attnlens
