#pragma once
// Typed texts against a CLIP or SigLIP picture — what the Vision page's Text box and `attnlens-cli vision
// --texts` show: each text's zero-shot score (exp(logit_scale) · cosine, softmax over the texts; SigLIP: +
// bias, sigmoid per text) and two maps over the patch grid, from the forward pass already made (no gradients,
// no second run):
//   similarity  cosine of each patch's projected embedding with the text's (core/models/clip_model.h)
//   relevance   summaryRollout (CLS → patch; SigLIP: probe → patch) × the similarity above its mean,
//               scaled to a maximum of 1 — where the picture's summary draws on patches that match the text
//
//   auto texts = splitClipTexts("a dog | a cat");                     // {"a dog", "a cat"}
//   std::vector<ClipTextRun> runs = runClipTexts(*side, result.output, result.grid, texts);
//   runs[0].probability; runs[0].relevance;                           // [rows, cols]

#include "core/models/clip_model.h"
#include "core/models/vit_model.h"
#include "core/tensor/tensor.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct ClipTextRun {
    ClipTextEmbedding embedding;
    float logit = 0;       // exp(logit_scale) · cosine(image, text)
    float probability = 0; // softmax over the texts run together; SigLIP: this text's sigmoid
    RowMatrix similarity;  // [rows, cols]
    RowMatrix relevance;   // [rows, cols], in [0, 1]
};

inline constexpr int kMaxClipTexts = 32;

// "a dog | a cat |  | a red car" → {"a dog", "a cat", "a red car"}: split at '|', white space trimmed, empty
// pieces dropped. Throws attnlens::Error above kMaxClipTexts texts.
std::vector<std::string> splitClipTexts(std::string_view line);

// What the picture's summary draws on, per patch [N]: the rollout's CLS row (heads' mean, all layers) or,
// without a CLS (SigLIP), the pooling probe's heads-mean attention times the rollout — the probe reads the
// last layer's tokens, each of which the rollout traces back to the patches. Throws attnlens::Error without
// the attention captured.
Tensor summaryRollout(const VitOutput& output, const PatchGrid& grid);

// `output` must hold the captured attentions and the patch embeddings (a CLIP VitModel with
// visual_projection). Throws attnlens::Error otherwise, for no texts, or for a text the tower refuses.
std::vector<ClipTextRun> runClipTexts(const ClipTextSide& side, const VitOutput& output,
                                      const PatchGrid& grid, std::span<const std::string> texts);

} // namespace attnlens
