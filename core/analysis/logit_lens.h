#pragma once
// Lenses that look past the attention weights (issue 42), written once against the text model contract
// (TextModel::readout / logitDirection / blocks and RunControls::trace):
//
// Logit lens (nostalgebraist, 2020): the residual stream after each layer read out through the model's own
// final norm and LM head — what the model would say if it stopped there. Row L is the model's output itself.
//
//   auto lens = logitLens(model, ids, {n - 1}, {}, 5);    // the last position; target: the model's top token
//   lens[0].layers[l].top[0].id, lens[0].layers[l].targetRank
//
// Direct logit attribution: the target token's logit split into what each part of the model wrote into the
// stream — the embeddings, each head through its slice of o_proj, o_proj's bias, each MLP — read through the
// final norm with its scale frozen at the final stream (LogitDirection in core/models/text_models.h); a
// sub-layer's own output norm (Gemma's sandwich) is frozen the same way at that sub-layer's output, so its
// heads still split. The parts sum to the logit (before a soft-cap). A layer whose sub-layers the trace does
// not keep (post-norm blocks) keeps its net effect whole instead.
//
//   LogitContributions c = logitContributions(model, ids, n - 1, -1);   // c.heads [L, H], c.mlp [L]
//
// Thread-safety: pure functions on an immutable model; cancellable between layers through `callbacks`.

#include "core/contract/run_controls.h"
#include "core/models/text_models.h"
#include "core/util/callbacks.h"

#include <functional>
#include <span>
#include <vector>

namespace attnlens {

// One forward pass (no attention kept, no logits) keeping the residual stream at `rows` of `ids` (and, with
// `values`, each layer's value norms). Throws attnlens::Error for a family that does not trace its stream.
// past (decoders, without `values`): a cache of these ids (run with these offHeads) holding at least the
// entries before the first row — the pass then runs from that row to the last only, over a copy of the
// cache's prefix (the same numbers up to float rounding: a few rows instead of the whole text).
ResidualTrace traceForward(const TextModel& model, std::span<const int> ids, std::vector<int> rows,
                           bool values = false, const Callbacks* callbacks = nullptr,
                           const HeadList& offHeads = {}, const TextCache* past = nullptr);

struct LensToken {
    int id = 0;
    float prob = 0.0f;
};

struct LogitLensLayer {
    std::vector<LensToken> top; // the most probable tokens, most probable first
    int targetRank = 0;         // the target's rank among all tokens (0: the most probable)
    float targetProb = 0.0f, targetLogit = 0.0f;
};

struct LogitLens {
    int position = 0;
    int target = 0; // the model's own top token at `position` unless one was asked for
    // layers + 1 rows: 0 the embeddings, l the stream after layer l − 1, the last the model's output
    std::vector<LogitLensLayer> layers;
};

// One LogitLens per position (rows of `ids`, from 0). targets: empty, or one per position (-1: the model's
// top token there). offHeads: heads switched off for the pass (as the run on screen). Throws attnlens::Error
// for no position, a position outside the text, a target outside the vocabulary or a model without an LM
// head. The readouts go a few positions at a time: every position of a long text costs [32, V] floats at
// once.
// past: as traceForward's.
std::vector<LogitLens> logitLens(const TextModel& model, std::span<const int> ids,
                                 std::span<const int> positions, std::span<const int> targets, int topK,
                                 const Callbacks* callbacks = nullptr, const HeadList& offHeads = {},
                                 const TextCache* past = nullptr);

// The lens of a traced pass, for any model with a readout (core/analysis/model_lenses.h: Marian's decoder,
// ViT's classifier): trace row i of every layer's input and of the final stream through `readout` ([r, D] →
// [r, V]), stacked 64 rows per product; LogitLens::position is trace.rows[i]. targets: empty or one per row
// (-1: the top token of the final stream's readout).
using Readout = std::function<RowMatrix(const RowMatrix&)>;
std::vector<LogitLens> lensOfTrace(const ResidualTrace& trace, std::span<const int> targets, int topK,
                                   const Readout& readout, const Callbacks* callbacks = nullptr);

// What each head of one traced layer wrote into the stream at trace row `row`: [heads, D], the head's slice
// of the context through its slice of o_proj (o_proj's bias apart). They sum, with the bias, to the layer's
// LayerTrace::attention row.
RowMatrix headWrites(const MultiHeadAttention& attention, const LayerTrace& trace, int row);

struct LogitContributions {
    int position = 0, target = 0;
    float logit = 0.0f;   // the model's own logit of target at position (after a soft-cap, if any)
    float softcap = 0.0f; // c where the model's logits are c·tanh(z / c) (then logit = c·tanh(total() / c))
    float constant = 0.0f; // u · β + b: the final norm's bias and the head's
    float embeddings = 0.0f;
    RowMatrix heads;               // [L, H] each head's write
    std::vector<float> outputBias; // [L] o_proj's bias (0 without one)
    std::vector<float> cross;      // [L] the cross-attention sub-layer (0 without one)
    std::vector<float> mlp;        // [L] the MLP sub-layer
    std::vector<char> split;       // [L] 1: the parts above; 0: the layer's net effect is in `whole`
    std::vector<float> whole;      // [L] direction · (stream after − stream before) where not split
    float total() const;           // everything summed: the logit up to float rounding
};

// Throws attnlens::Error where the readout is not one norm and a linear map (BERT: "direct logit attribution
// needs a final norm and a linear LM head"), or for a bad position or target. Always float32 (a model packed
// in bf16 is read with its plain weights, Fp32ReferenceScope), so the parts sum to its float32 logit.
// past: as traceForward's (its entries as the model computed them, in its packed precision).
LogitContributions logitContributions(const TextModel& model, std::span<const int> ids, int position,
                                      int target, const Callbacks* callbacks = nullptr,
                                      const HeadList& offHeads = {}, const TextCache* past = nullptr);

} // namespace attnlens
