#include "core/models/clip_model.h"

#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
#include "core/text/clip_tokenizer.h"
#include "core/text/siglip_tokenizer.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

namespace {

float norm(const float* v, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i)
        s += double(v[i]) * v[i];
    return static_cast<float>(std::sqrt(s));
}

float cosine(const float* a, const float* b, int64_t n) {
    double dot = 0;
    for (int64_t i = 0; i < n; ++i)
        dot += double(a[i]) * b[i];
    const float na = norm(a, n), nb = norm(b, n);
    return na > 0 && nb > 0 ? static_cast<float>(dot / (double(na) * nb)) : 0.f;
}

} // namespace

bool ClipTextSide::present(const std::filesystem::path& dir) {
    try {
        std::error_code ec;
        if (!std::filesystem::exists(dir / "config.json", ec)) return false;
        const auto type = JsonConfig(dir / "config.json").value<std::string>("model_type", "");
        return type == "clip" || type == "siglip";
    } catch (const Error&) {
        return false;
    }
}

std::shared_ptr<const ClipTextSide> ClipTextSide::load(const std::filesystem::path& dir,
                                                       const Callbacks& callbacks) {
    const JsonConfig top(dir / "config.json");
    const auto type = top.value<std::string>("model_type", "");
    if (type == "siglip") return loadSiglip(dir, top, callbacks);
    if (type != "clip")
        throw Error(quoted(top.path()) + ": model_type is '" + type +
                    "', a text side needs 'clip' (CLIPModel) or 'siglip' (SiglipModel)");
    if (!top.has("text_config") || !top.json()["text_config"].is_object())
        throw top.refuse("text_config", "must be an object (the CLIPModel's text tower)");
    const ClipTextConfig c = ClipTextConfig::fromNested(JsonConfig(top.json()["text_config"], top.path()));
    const int projection = top.value<int>("projection_dim", 512);
    top.checkPositive(projection, "projection_dim");

    auto side = std::make_shared<ClipTextSide>();
    side->m_tokenizer = ClipTokenizer::load(dir);
    side->m_model = ClipTextModel::loadTower(dir, c, callbacks);
    const TensorFile file = TensorFile::open(findWeightsFile(dir, "model"));
    WeightBinder w(file);
    side->m_projection = w.require("text_projection.weight", {projection, c.hiddenSize});
    const Tensor scale = w.require("logit_scale", {});
    w.finish(quoted(dir) + ": the checkpoint does not match config.json");
    side->m_scoring.scale = std::exp(scale.data()[0]);
    if (!std::isfinite(side->m_scoring.scale))
        throw Error(quoted(dir) + ": logit_scale " + std::to_string(scale.data()[0]) + " overflows exp()");
    return side;
}

std::shared_ptr<const ClipTextSide> ClipTextSide::loadSiglip(const std::filesystem::path& dir,
                                                             const JsonConfig& top,
                                                             const Callbacks& callbacks) {
    if (!top.has("text_config") || !top.json()["text_config"].is_object())
        throw top.refuse("text_config", "must be an object (the SiglipModel's text tower)");
    const ClipTextConfig c =
        ClipTextConfig::fromSiglipNested(JsonConfig(top.json()["text_config"], top.path()));
    auto side = std::make_shared<ClipTextSide>();
    const auto tokenizer = SiglipTokenizer::load(dir);
    side->m_tokenizer = tokenizer;
    side->m_siglipTokenizer = tokenizer;
    side->m_padTo = std::min(tokenizer->modelMaxLength(), c.maxPositions);
    side->m_model = ClipTextModel::loadTower(dir, c, callbacks);
    const TensorFile file = TensorFile::open(findWeightsFile(dir, "model"));
    WeightBinder w(file);
    side->m_projection = w.require("text_model.head.weight", {c.projectionSize, c.hiddenSize});
    side->m_projectionBias = w.require("text_model.head.bias", {c.projectionSize});
    const Tensor scale = w.require("logit_scale", {1});
    const Tensor bias = w.require("logit_bias", {1});
    w.finish(quoted(dir) + ": the checkpoint does not match config.json");
    side->m_scoring = {std::exp(scale.data()[0]), bias.data()[0], true};
    if (!std::isfinite(side->m_scoring.scale) || !std::isfinite(side->m_scoring.bias))
        throw Error(quoted(dir) + ": logit_scale " + std::to_string(scale.data()[0]) + " / logit_bias " +
                    std::to_string(bias.data()[0]) + " are not finite scores");
    return side;
}

std::vector<int> ClipTextSide::ids(std::string_view text) const {
    if (m_siglipTokenizer) return m_siglipTokenizer->encodePadded(text, m_padTo).ids;
    std::vector<int> ids = m_tokenizer->encode(text).ids;
    const int limit = m_model->maxPositions();
    if (static_cast<int>(ids.size()) > limit)
        throw Error("\"" + std::string(text) + "\" is " + std::to_string(ids.size()) +
                    " tokens; CLIP's text tower reads at most " + std::to_string(limit));
    return ids;
}

ClipTextEmbedding ClipTextSide::embed(std::string_view text) const {
    ClipTextEmbedding e;
    e.text = std::string(text);
    e.ids = ids(text);
    e.pooledToken = m_padTo > 0 ? static_cast<int>(e.ids.size()) - 1 // SigLIP: the last position
                                : clipPooledIndex(e.ids, m_model->config().eosTokenId);
    const TextForward f = m_model->forward(e.ids);
    const RowMatrix pooled = f.hidden.row(e.pooledToken);
    const RowMatrix projected = linear(pooled, m_projection, m_projectionBias); // [1, P]
    e.embeds = Tensor::fromMatrix(projected).reshaped({projected.cols()});
    return e;
}

ClipScores clipScores(const Tensor& imageEmbeds, std::span<const ClipTextEmbedding> texts,
                      const ClipScoring& scoring) {
    if (texts.empty()) throw Error("no texts to score");
    ClipScores s;
    const int64_t p = imageEmbeds.numel();
    for (const ClipTextEmbedding& t : texts) {
        if (t.embeds.numel() != p)
            throw Error("text embedding of " + std::to_string(t.embeds.numel()) +
                        " values against an image's " + std::to_string(p));
        s.logits.push_back(scoring.scale * cosine(imageEmbeds.data(), t.embeds.data(), p) + scoring.bias);
    }
    if (scoring.sigmoid) {
        for (float l : s.logits)
            s.probabilities.push_back(static_cast<float>(1.0 / (1.0 + std::exp(-double(l)))));
        return s;
    }
    const float top = *std::max_element(s.logits.begin(), s.logits.end());
    double sum = 0;
    for (float l : s.logits) {
        s.probabilities.push_back(std::exp(l - top));
        sum += s.probabilities.back();
    }
    for (float& q : s.probabilities)
        q = static_cast<float>(q / sum);
    return s;
}

Tensor clipPatchSimilarity(const Tensor& patchEmbeds, const ClipTextEmbedding& text) {
    if (patchEmbeds.rank() != 2 || patchEmbeds.dim(1) != text.embeds.numel())
        throw Error("patch embeddings " + shapeToString(patchEmbeds.shape()) +
                    " do not match a text embedding of " + std::to_string(text.embeds.numel()));
    const int64_t n = patchEmbeds.dim(0), p = patchEmbeds.dim(1);
    Tensor out({n});
    for (int64_t i = 0; i < n; ++i)
        out.data()[i] = cosine(patchEmbeds.data() + i * p, text.embeds.data(), p);
    return out;
}

Tensor clipTextRelevance(const Tensor& similarity, const Tensor& rollout) {
    const int64_t n = similarity.numel();
    if (rollout.numel() != n)
        throw Error("rollout over " + std::to_string(rollout.numel()) + " patches against " +
                    std::to_string(n));
    double mean = 0;
    for (int64_t i = 0; i < n; ++i)
        mean += similarity.data()[i];
    mean = n ? mean / n : 0;
    Tensor out({n});
    float top = 0;
    for (int64_t i = 0; i < n; ++i) {
        out.data()[i] = rollout.data()[i] * std::max(0.f, static_cast<float>(similarity.data()[i] - mean));
        top = std::max(top, out.data()[i]);
    }
    if (top > 0)
        for (int64_t i = 0; i < n; ++i)
            out.data()[i] /= top;
    return out;
}

} // namespace attnlens
