#pragma once
// Which heads an output leans on (issue 21, "most important heads"): every head switched off alone (ablation,
// transformers' head_mask semantics) and the drop of the original output's log-probability measured — one
// forward pass per head. Positive: the output needs the head; ≤ 0: it does not (or does better without).
//
//   VitHeadImportance v = vitHeadImportance(model, pixels);                // v.drop [L, H], v.top: the class
//   RowMatrix d = marianHeadImportance(model, sourceIds, targetIds, 2);    // cross-attention heads [L, H]
//
// Thread-safety: pure functions on immutable models; cancellable between passes, progress per head.

#include "core/models/marian_model.h"
#include "core/models/unet_model.h"
#include "core/models/vit_model.h"
#include "core/util/callbacks.h"

#include <functional>
#include <span>

namespace attnlens {

// The loop every family's importance shares: measure(layer, head) for each head of a model whose layers have
// headsPerLayer heads → [layers, the most heads of a layer] (NaN where a layer has fewer); cancellable
// between heads, progress per head.
RowMatrix measureEachHead(std::span<const int> headsPerLayer, const std::function<double(int, int)>& measure,
                          const Callbacks& callbacks = {});

struct VitHeadImportance {
    RowMatrix drop; // [layers, heads]: log p(top) with all heads − log p(top) with the head off
    Prediction top; // the class of the plain run
};
// pixels: a preprocessed image [C, H, W]. Throws attnlens::Error for a checkpoint without classifier.
VitHeadImportance vitHeadImportance(const VitModel& model, const Tensor& pixels,
                                    const Callbacks& callbacks = {});

// Σ_t log softmax(logits_t)[target_t] of a teacher-forced pass: target holds the generated ids (no start
// token, the final </s> included), source the encoder ids.
double marianSequenceLogProb(const MarianModel& model, std::span<const int> source,
                             std::span<const int> target, const MarianAblation* ablation = nullptr);
// The drop of that log-probability for each head of one kind (0 encoder, 1 decoder self, 2 cross) switched
// off alone → [layers, heads].
RowMatrix marianHeadImportance(const MarianModel& model, std::span<const int> source,
                               std::span<const int> target, AttentionKind kind,
                               const Callbacks& callbacks = {});

// A U-Net step has no output probability: each head's importance is how far the noise prediction moves when
// the head alone is off, ‖ε̂_off − ε̂‖ / ‖ε̂‖ → [attention layers, heads of the widest] (NaN for heads a layer
// lacks).
RowMatrix unetHeadImportance(const UNet2DModel& model, const Tensor& sample, float timestep,
                             std::optional<int> classLabel, const Callbacks& callbacks = {});

} // namespace attnlens
