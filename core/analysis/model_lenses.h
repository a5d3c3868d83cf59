#pragma once
// The logit lens beyond the text models (issue 42), on the same LogitLens rows (core/analysis/logit_lens.h):
//   a translator's decoder (Marian): at each target position, the decoder stream entering each layer and
//   leaving the last read out through the LM head and final_logits_bias (post-norm layers: no final norm) —
//   when the translation settles on its word;
//   a ViT classifier: the CLS token's stream entering each layer and leaving the last through the final
//   layernorm and the classifier — when the class emerges (the lens's "tokens" are the classes).
//
//   auto lenses = marianLogitLens(model, model.encode(src), model.forcedDecoderInput(target), {0, 3}, {}, 5);
//   LogitLens cls = vitLogitLens(vit, pixels, -1, 5);   // layers[l].top: classes, most probable first
//
// Thread-safety: pure functions on immutable models.

#include "core/analysis/logit_lens.h"
#include "core/models/marian_model.h"
#include "core/models/vit_model.h"

#include <span>
#include <vector>

namespace attnlens {

// decoderInput: the decoder's input, start token first (MarianModel::forcedDecoderInput); position t reads
// the prediction of target token t. targets: empty or one per position (-1: the model's own top token).
// Throws attnlens::Error for a position outside the input or a target outside the decoder vocabulary.
std::vector<LogitLens> marianLogitLens(const MarianModel& model, const MarianEncoderOutput& encoder,
                                       std::span<const int> decoderInput, std::span<const int> positions,
                                       std::span<const int> targets, int topK,
                                       const MarianAblation* ablation = nullptr);

// pixels [C, H, W] as VitModel::forward takes them; target: a class, -1: the model's own top class. Throws
// attnlens::Error for a model without a classifier or a class outside it.
LogitLens vitLogitLens(const VitModel& model, const Tensor& pixels, int target, int topK,
                       const VitRunOptions& options = {});

} // namespace attnlens
