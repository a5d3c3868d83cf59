#pragma once
// What switching heads off did to a translation (issue 21, M11, "show what changed"): where the tokens part,
// how likely each token of the plain translation still is without the heads (teacher-forced over the plain
// output), and the top candidates with and without them at the position that changed most.
//
//   AblationChange c = marianAblationChange(model, sourceIds, plainIds, ablatedIds, ablation);
//   c.partsAt;                       // first target position whose token differs (-1: the same tokens)
//   c.plainProbability[c.position];  // p(plain token) with all heads … c.ablatedProbability: with them off
//   c.topPlain, c.topAblated;        // the top 5 at c.position, both teacher-forced over the plain prefix
//
// Thread-safety: a pure function on an immutable model.

#include "core/models/marian_model.h"

#include <span>
#include <vector>

namespace attnlens {

struct TokenChoice {
    int id = 0;
    float probability = 0;
};

struct AblationChange {
    int partsAt = -1;  // first position where the plain and the ablated ids differ (-1: identical)
    int position = -1; // partsAt, or (identical outputs) the position where p(plain token) drops most
    std::vector<float> plainProbability, ablatedProbability; // per position of the plain output
    std::vector<TokenChoice> topPlain, topAblated;           // at `position`, most probable first
};

// plainIds / ablatedIds: generated ids (no start token, the final </s> kept). Throws attnlens::Error for an
// empty plain output.
AblationChange marianAblationChange(const MarianModel& model, std::span<const int> source,
                                    std::span<const int> plainIds, std::span<const int> ablatedIds,
                                    const MarianAblation& ablation, int topK = 5);

} // namespace attnlens
