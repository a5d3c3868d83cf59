#pragma once
// Greedy decoding on a decoder-only text model through its KV cache: the one loop the Text page,
// `attnlens-cli text --generate` and `bench --text` share (issue 37: generation in core, used by both front
// ends).
//
//   TextCache cache = folder.model->newCache();
//   TextForward prompt = folder.model->extend(ids, cache, true, true, run);       // logits of the last token
//   std::vector<int> more = greedyContinuation(folder, prompt.logits, cache, 12, run,
//                                              [&](const TextStep& s) { /* s.id, s.forward.attentions */ });
//
// Thread-safety: as the model (immutable); the cache is the caller's, on one thread at a time.

#include "core/contract/run_controls.h"
#include "core/models/text_folder.h"

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace attnlens {

struct TextStep {
    int id = 0;          // the token chosen (the most likely after the tokens before it)
    TextForward forward; // its pass: attention rows [L, H, 1, n] (when captured), logits [1, V]
};

// The most likely next token after `logits` (its last row), run through the cache with `run`'s controls.
// Throws attnlens::Error for an encoder (only decoder-only models generate).
TextStep greedyStep(const TextFolder& folder, const RowMatrix& logits, TextCache& cache,
                    const RunControls& run = {});

// How the next token is chosen: greedy (temperature 0), or sampled as transformers' generate(do_sample=True)
// warps the logits — divided by the temperature, then only the topK most likely (0: all), then the smallest
// set whose probabilities reach topP (1: all; the most likely always stays) — from a generator seeded with
// `seed`, so that the same seed gives the same text (not torch's numbers: its generator is not reproduced).
struct Sampling {
    float temperature = 0.0f;
    int topK = 0;
    float topP = 1.0f;
    uint64_t seed = 0;
    bool greedy() const { return temperature <= 0.0f; }
};

// The token chosen from one logits row [V] (Sampling's rules; `rng` advances once when sampling). Throws
// attnlens::Error for a temperature, topK or topP out of range.
int chooseToken(const float* logits, int64_t vocab, const Sampling& sampling, std::mt19937_64& rng);

enum class StopAt {
    EndOfText,
    Count
}; // after the end-of-text token (and at the last position), or never early

// The first n entries of `cache` (n ≤ its length; attnlens::Error otherwise), copied: a pass from position n
// on over the same tokens.
TextCache cachePrefix(const TextCache& cache, int64_t n);

// Up to `count` tokens after `logits`, each through greedyStep; onStep (optional) sees every step as it is
// made (its progress and cancel stay the caller's: run.callbacks is polled between layers). Stops at the
// model's last position; with StopAt::EndOfText also after emitting the end-of-text token (which is
// returned).
std::vector<int> greedyContinuation(const TextFolder& folder, RowMatrix logits, TextCache& cache, int count,
                                    const RunControls& run = {},
                                    const std::function<void(const TextStep&)>& onStep = {},
                                    StopAt stop = StopAt::EndOfText);
// The same loop with each token chosen by `sampling` (a generator per position, seeded from sampling.seed and
// the position: the same text whether made in one call or several).
std::vector<int> sampleContinuation(const TextFolder& folder, RowMatrix logits, TextCache& cache, int count,
                                    const Sampling& sampling, const RunControls& run = {},
                                    const std::function<void(const TextStep&)>& onStep = {},
                                    StopAt stop = StopAt::EndOfText);

} // namespace attnlens
