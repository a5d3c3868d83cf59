#pragma once
// KV-cache eviction what-ifs (issue 42): which cache entries a policy would keep at every step of a decoder's
// generation, from the run's own attention. (Re-running the generation with that cache is the next step.)
//
//   KvPolicy p = parseKvPolicy("streaming:4,64");         // 4 sinks + the 64 latest
//   KvKeptMap kept = kvKeptMap(p, prompt, steps);          // kept.kept(s, j): key j in the cache at step s
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
// Attention in: the prompt's [L, H, P, P] and each step's [L, H, 1, P + s + 1] as the Text page keeps them.

#include "core/tensor/tensor.h"

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

} // namespace attnlens
