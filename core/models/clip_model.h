#pragma once
// CLIP's text side and what it does with an image: a CLIPModel folder (model_type "clip") holds a vision
// tower (VitModel loads it, with visual_projection) and a text tower; ClipTextSide is the latter —
// CLIPTokenizer, the CLIPTextTransformer (ClipTextModel, non-padded: one text at a time), text_projection and
// logit_scale — as transformers v4.50.3's CLIPModel computes them:
//   text_embeds  = text_projection(final_layer_norm(h)[pooled token])  (clipPooledIndex)
//   logits       = exp(logit_scale) · cos(image_embeds, text_embeds)   per text; softmax over the texts
// and, from the same features, where a text is in the picture (gradient-free, no extra forward):
//   similarity   = cos(visual_projection(post_layernorm(patch token)), text_embeds)   per patch
//   relevance    = rollout(CLS → patch) · max(similarity − mean similarity, 0), scaled to a maximum of 1
//
//   auto text = ClipTextSide::load(dir);                     // the same folder VitModel::load read
//   VitResult r = vision->run(image);                         // r.output.imageEmbeds, .patchEmbeds
//   std::vector<ClipTextEmbedding> labels = {text->embed("a dog"), text->embed("a cat")};
//   ClipScores s = clipScores(r.output.imageEmbeds, labels, text->logitScale());
//   Tensor where = clipPatchSimilarity(r.output.patchEmbeds, labels[0]);          // [N]
//
// Thread-safety: immutable after load(); embed() may run on any thread.

#include "core/models/clip_text_model.h"
#include "core/text/clip_tokenizer.h"

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct ClipTextEmbedding {
    std::string text;
    std::vector<int> ids; // BOS … EOS as CLIPTokenizer gives them
    int pooledToken = 0;  // the position whose state is projected
    Tensor embeds;        // [P] text_projection(pooled), not normalised (get_text_features)
};

struct ClipScores {
    std::vector<float> logits;        // exp(logit_scale) · cosine, per text (logits_per_image)
    std::vector<float> probabilities; // softmax over the texts (zero-shot classification)
};

class ClipTextSide {
public:
    // Whether `dir` is a CLIPModel folder (config.json model_type "clip"), i.e. has a text side.
    static bool present(const std::filesystem::path& dir);
    // Throws attnlens::Error naming the folder and what is wrong (config, tokenizer, tensors).
    static std::shared_ptr<const ClipTextSide> load(const std::filesystem::path& dir,
                                                    const Callbacks& callbacks = {});

    // Throws attnlens::Error for an empty text or one longer than the text tower's positions.
    ClipTextEmbedding embed(std::string_view text) const;
    float logitScale() const { return m_logitScale; } // exp(logit_scale)
    int projectionDim() const { return static_cast<int>(m_projection.dim(0)); }
    const ClipTokenizer& tokenizer() const { return *m_tokenizer; }
    const ClipTextModel& model() const { return *m_model; }

private:
    std::shared_ptr<const ClipTokenizer> m_tokenizer;
    std::shared_ptr<const ClipTextModel> m_model;
    Tensor m_projection; // [P, D] text_projection.weight (no bias)
    float m_logitScale = 1;
};

// Throws attnlens::Error when the sizes disagree or there are no texts.
ClipScores clipScores(const Tensor& imageEmbeds, std::span<const ClipTextEmbedding> texts, float logitScale);
// [N] cosine of each patch's projected embedding (VitOutput::patchEmbeds [N, P]) with the text's.
Tensor clipPatchSimilarity(const Tensor& patchEmbeds, const ClipTextEmbedding& text);
// [N] rollout (CLS → patch, [N]) · max(similarity − its mean, 0), divided by its maximum (all zero when no
// patch is above the mean).
Tensor clipTextRelevance(const Tensor& similarity, const Tensor& rollout);

} // namespace attnlens
