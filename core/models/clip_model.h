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
// A SiglipModel folder (model_type "siglip") is read the same way, with SigLIP's differences (transformers
// v4.50.3's SiglipModel): SiglipTokenizer, the text padded to 64 tokens (the tokenizer's model_max_length, at
// most the tower's positions) without a mask, a non-causal tower pooled at the LAST position,
// text_model.head (with bias) as the projection, and
//   logits       = exp(logit_scale) · cos(image_embeds, text_embeds) + logit_bias   per text; each through a
//                  sigmoid (independent probabilities: several texts may fit, or none)
// where image_embeds is the attention-pooling head's output (VitOutput::imageEmbeds).
//
// Thread-safety: immutable after load(); embed() may run on any thread.

#include "core/models/clip_text_model.h"
#include "core/text/text_tokenizers.h"

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

class SiglipTokenizer;

struct ClipTextEmbedding {
    std::string text;
    std::vector<int> ids; // BOS … EOS as CLIPTokenizer gives them; SigLIP: … EOS, padded
    int pooledToken = 0;  // the position whose state is projected
    Tensor embeds;        // [P] text_projection(pooled), not normalised (get_text_features)
};

struct ClipScores {
    std::vector<float> logits;        // exp(logit_scale) · cosine, per text (logits_per_image)
    std::vector<float> probabilities; // softmax over the texts (zero-shot classification); SigLIP: sigmoid
};

// How logits become scores: CLIP's scale and softmax, SigLIP's scale, bias and sigmoid.
struct ClipScoring {
    float scale = 1, bias = 0;
    bool sigmoid = false;
};

class ClipTextSide {
public:
    // Whether `dir` is a CLIPModel or SiglipModel folder (config.json model_type "clip" / "siglip"), i.e. has
    // a text side.
    static bool present(const std::filesystem::path& dir);
    // Throws attnlens::Error naming the folder and what is wrong (config, tokenizer, tensors).
    static std::shared_ptr<const ClipTextSide> load(const std::filesystem::path& dir,
                                                    const Callbacks& callbacks = {});

    // Throws attnlens::Error for an empty text or one longer than the text tower's positions.
    ClipTextEmbedding embed(std::string_view text) const;
    float logitScale() const { return m_scoring.scale; } // exp(logit_scale)
    float logitBias() const { return m_scoring.bias; }   // SigLIP's logit_bias; 0 for CLIP
    bool siglip() const { return m_scoring.sigmoid; }
    const ClipScoring& scoring() const { return m_scoring; }
    int projectionDim() const { return static_cast<int>(m_projection.dim(0)); }
    const TextTokenizer& tokenizer() const { return *m_tokenizer; }
    const ClipTextModel& model() const { return *m_model; }
    int paddedLength() const { return m_padTo; } // SigLIP: the length every text is padded to; 0 for CLIP

private:
    static std::shared_ptr<const ClipTextSide> loadSiglip(const std::filesystem::path& dir,
                                                          const JsonConfig& top, const Callbacks& callbacks);
    std::vector<int> ids(std::string_view text) const;

    std::shared_ptr<const TextTokenizer> m_tokenizer;
    std::shared_ptr<const SiglipTokenizer> m_siglipTokenizer; // the same, typed, for SigLIP's padding
    std::shared_ptr<const ClipTextModel> m_model;
    Tensor m_projection;     // [P, D] text_projection.weight (no bias) / SigLIP's text_model.head.weight
    Tensor m_projectionBias; // [P] SigLIP's text_model.head.bias; empty for CLIP
    ClipScoring m_scoring;
    int m_padTo = 0;
};

// Throws attnlens::Error when the sizes disagree or there are no texts.
ClipScores clipScores(const Tensor& imageEmbeds, std::span<const ClipTextEmbedding> texts,
                      const ClipScoring& scoring);
// [N] cosine of each patch's projected embedding (VitOutput::patchEmbeds [N, P]) with the text's.
Tensor clipPatchSimilarity(const Tensor& patchEmbeds, const ClipTextEmbedding& text);
// [N] rollout (CLS → patch, [N]) · max(similarity − its mean, 0), divided by its maximum (all zero when no
// patch is above the mean).
Tensor clipTextRelevance(const Tensor& similarity, const Tensor& rollout);

} // namespace attnlens
