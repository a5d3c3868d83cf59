#pragma once
// KV-cache eviction what-ifs (issue 42): which cache entries a policy would keep at every step of a decoder's
// generation, from the run's own attention (core/analysis/kv_rerun.h re-runs the generation with that cache).
//
//   KvPolicy p = parseKvPolicy("streaming:4,64");         // 4 sinks + the 64 latest
//   KvKeptMap kept = kvKeptMap(p, prompt, steps);          // kept.kept(s, j): key j in the cache at step s
//   KvPolicyTracker t(p, summedPrompt);                    // or step by step, as a re-run decides
//   use(t.kept()); t.advance(whatStep0Gave);  …
//
// Step s is the s-th generated token attending (s = 0: the first after the prompt of P tokens), over the keys
// 0 … P + s (its own included, always kept). Policies:
//   full       everything (the run itself)
//   streaming  StreamingLLM (Xiao et al., 2023): the first `sinks` tokens and the `window` latest — key j is
//   kept
//              at step s when j < sinks or j > P + s − window
//   h2o        H2O (Zhang et al., 2023): a budget of `budget` entries, the `recent` latest always, the rest
//   the
//              heaviest by the attention they received so far (summed over every layer, head and query —
//              one cache for all heads here, where H2O keeps one per head); an entry evicted never returns
//   snapkv     SnapKV (Li et al., 2024): at the end of the prompt, the last `window` prompt queries vote
//              (their attention summed over layers and heads) for `budget` − `window` earlier prompt entries;
//              the window and every generated token stay
//   keep       a hand-picked set of positions (and every generated token)
// Attention in: the prompt's [L, H, P, P] and each step's [L, H, 1, P + s + 1] as the Text page keeps them,
// or summed over layers and heads (what every policy reads): the prompt's [P, P] and each step's [P + s + 1].

#include "core/contract/attention_store.h"
#include "core/tensor/tensor.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct KvPolicy {
    enum class Kind { Full, Streaming, HeavyHitters, SnapKv, Keep };
    Kind kind = Kind::Full;
    int sinks = 4, window = 64; // streaming; snapkv: window = the observation window
    int budget = 64, recent = 16;
    std::vector<int> keep; // keep: positions from 0
};

// "full", "streaming:SINKS,WINDOW", "h2o:BUDGET,RECENT", "snapkv:BUDGET,WINDOW", "keep:0,1,5-9". Throws
// attnlens::Error naming what is wrong.
KvPolicy parseKvPolicy(std::string_view text);
std::string kvPolicyName(const KvPolicy& policy); // the same form

struct KvKeptMap {
    int promptLength = 0, steps = 0;
    std::vector<std::vector<char>> rows; // rows[s][j], j < P + s + 1
    bool kept(int step, int key) const { return rows[size_t(step)][size_t(key)] != 0; }
    int keptCount(int step) const; // the cache's entries at that step
};

KvKeptMap kvKeptMap(const KvPolicy& policy, const Tensor& prompt, const std::vector<Tensor>& steps);
KvKeptMap kvKeptMap(const KvPolicy& policy, const RowMatrix& summedPrompt,
                    const std::vector<std::vector<float>>& summedSteps);

// Σ over layers and heads: a prompt's attention [L, H, P, P] (captured or on demand) → [P, P]; one step's
// [L, H, 1, m] → [m].
RowMatrix summedAttention(const AttentionStore& prompt);
std::vector<float> summedStepAttention(const Tensor& step);

// One policy decided step by step from the attention seen so far (kvKeptMap's loop; a re-run feeds it its
// own attention, so H2O's heavy hitters are those of the run it steers).
class KvPolicyTracker {
public:
    // summedPrompt [P, P]; attnlens::Error when not square or a keep position is negative.
    KvPolicyTracker(KvPolicy policy, RowMatrix summedPrompt);
    int promptLength() const { return m_prompt; }
    int step() const { return m_step; } // the step kept() is for
    // The entries step() attends: [P + step() + 1], its own (the last) always 1.
    const std::vector<char>& kept() const { return m_kept; }
    // What step()'s token gave every key (summed over layers and heads, [P + step() + 1]; empty for a policy
    // that does not read it: all but H2O); moves on a step.
    void advance(std::span<const float> summed);

private:
    void decide();

    KvPolicy m_policy;
    int m_prompt = 0, m_step = 0;
    std::vector<double> m_received; // H2O: attention received so far; SnapKV: the window's votes
    std::vector<char> m_alive;      // H2O: entries not evicted (they never return); SnapKV: the prompt kept
    std::vector<char> m_kept;
};

} // namespace attnlens
