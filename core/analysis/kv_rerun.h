#pragma once
// KV-cache what-ifs, re-run (issue 42): a decoder's greedy continuation made once with its whole cache (the
// baseline), then again with a policy's cache (core/analysis/kv_policy.h) — which entries it evicts at every
// step, what that does to the next-token distribution and to the text, and what the cache then holds.
//
//   KvBaseline base = kvBaseline(*folder.model, promptIds, {.steps = 64});  // the prompt + 64 steps
//   KvRerun what = kvRerun(*folder.model, base, parseKvPolicy("streaming:4,64"));  // the steps again
//   what.steps[s].kl, what.steps[s].logprob, what.kept.kept(s, j), what.firstChange
//
// Step s feeds the s-th generated token t_s at position P + s (over keys 0 … P + s) and gives the
// distribution of t_{s+1}; t_0 comes from the prompt's own pass. Eviction starts after the prompt (as SnapKV
// and H2O's generation phase do), so the re-run starts from the baseline's prompt cache, a copy — the prompt
// is not run again. Evicted entries are left out of each layer's attention, the kept keep their own positions
// (rotary or learned): no re-numbering inside the cache as StreamingLLM's rolling cache does. One cache for
// every layer and head (H2O and SnapKV keep one per head). Modes: Forced feeds the baseline's tokens whatever
// the policy would choose — the log-probability of the original continuation and KL(baseline ‖ policy) at the
// same prefix every step, and where the policy's own choice differs; Free feeds the policy's own choice — the
// text it would write (log-probabilities and KL up to the step it first writes something else, NaN after).
// Cost: a step of the re-run is a step of the baseline (attention over the kept keys only), plus the
// log-softmax and KL over the vocabulary; the attention is captured only for H2O (it reads it).
//
// Thread-safety: as the model; the results are plain values.

#include "core/analysis/kv_policy.h"
#include "core/models/text_generation.h"
#include "core/models/text_models.h"
#include "core/util/callbacks.h"

#include <span>
#include <vector>

namespace attnlens {

// The longest continuation a what-if runs: the baseline keeps every step's distribution ([V] floats: 256
// steps of Qwen's 152 k tokens are 155 MB).
inline constexpr int kMaxKvSteps = 256;

struct KvBaseline {
    std::vector<int> prompt;
    HeadList offHeads;       // heads switched off in every pass (the re-runs' too)
    TextCache promptCache;   // after the prompt
    RowMatrix summedPrompt;  // [P, P]: the prompt's attention summed over layers and heads
    std::vector<int> tokens; // t_0 … t_N: the continuation and, last, the choice after the last step
    std::vector<std::vector<float>> logprobs; // per step s: log-softmax of the distribution of t_{s+1}, [V]
    std::vector<std::vector<float>> summedSteps; // per step s: its attention summed, [P + s + 1]
    int64_t entryBytes = 0; // one cache entry in every layer: keys and values, float32 as this run keeps them
    double promptSeconds = 0.0, stepsSeconds = 0.0;
    int promptLength() const { return int(prompt.size()); }
    int steps() const { return int(logprobs.size()); }
};

struct KvOptions {
    int steps = 32;                  // greedy steps after the prompt
    StopAt stop = StopAt::EndOfText; // EndOfText: none fed after an end-of-text token
    HeadList offHeads = {};          // heads switched off (as the run on screen)
    // The prompt already run (a page's run, with these offHeads): its attention [L, H, P, P] and a cache of
    // at least its P entries — not run again. Both or neither. steps: at most kMaxKvSteps (attnlens::Error).
    const AttentionStore* promptAttention = nullptr;
    const TextCache* promptCache = nullptr;
};

// Runs the prompt (attention kept on demand and summed) unless given, then up to `steps` greedy steps,
// stopping at the model's last position and (StopAt::EndOfText) before feeding an end-of-text token. Throws
// attnlens::Error for an encoder, a model without an LM head, an empty prompt, a given prompt run of another
// size; attnlens::Cancelled from callbacks (progress: the steps).
KvBaseline kvBaseline(const TextModel& model, std::span<const int> prompt, const KvOptions& options,
                      const Callbacks& callbacks = {});

enum class KvRerunMode { Forced, Free };

struct KvRerunStep {
    int fed = 0;            // the token this step fed (Forced: the baseline's t_s)
    int original = 0;       // the baseline's t_{s+1}
    int chosen = 0;         // the policy's most likely next token
    float logprob = 0;      // log p_policy(original) (NaN in Free mode once the text differs)
    float baseLogprob = 0;  // log p_baseline(original)
    float kl = 0;           // KL(baseline ‖ policy) in nats (NaN as logprob)
    int kept = 0;           // cache entries attended, its own included
    int64_t cacheBytes = 0; // what they hold (KvBaseline::entryBytes each)
    bool samePrefix = true; // fed the baseline's text so far (Free mode: false once it wrote something else)
};

struct KvRerun {
    KvPolicy policy;
    KvRerunMode mode = KvRerunMode::Forced;
    KvKeptMap kept; // per step, the entries attended
    std::vector<KvRerunStep> steps;
    int firstChange = -1; // the first step whose choice differs from the baseline's, -1: none
    double seconds = 0.0;
    int changed() const; // steps whose choice differs from the baseline's after the same text
    // Over the steps compared (Free mode: until the texts part): Σ log p of the baseline's tokens under the
    // policy and under the baseline, Σ KL.
    struct Totals {
        double logprob = 0, baseLogprob = 0, kl = 0;
        int compared = 0;
        double meanKl() const { return compared ? kl / compared : 0.0; }
    };
    Totals totals() const;
};

// The baseline's steps again under `policy` (the same count). attnlens::Cancelled from callbacks.
KvRerun kvRerun(const TextModel& model, const KvBaseline& baseline, const KvPolicy& policy,
                KvRerunMode mode = KvRerunMode::Forced, const Callbacks& callbacks = {});

} // namespace attnlens
