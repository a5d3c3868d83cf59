#include "core/models/text_models.h"

#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/io/weight_binder.h"
#include "core/models/gpt2_gguf.h"
#include "core/models/text_model_util.h"
#include "core/util/error.h"

#include <cmath>

namespace attnlens {

namespace {

JsonConfig readConfig(const std::filesystem::path& dir, const char* modelType) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error(quoted(dir) + ": model folder not found");
    if (!std::filesystem::exists(dir / "config.json", ec))
        throw Error(quoted(dir) + ": config.json is missing");
    JsonConfig config(dir / "config.json");
    const auto type = config.value<std::string>("model_type", "");
    if (type != modelType)
        throw Error(quoted(dir / "config.json") + ": model_type is '" + type + "', expected '" + modelType +
                    "'");
    return config;
}

// LayerNorm weights under `prefix` named weight/bias, or gamma/beta as in the original BERT checkpoints.
LayerNormWeights layerNorm(WeightBinder& w, const std::string& prefix, int64_t d) {
    if (!w.has(prefix + ".weight") && w.has(prefix + ".gamma"))
        return {w.require(prefix + ".gamma", {d}), w.require(prefix + ".beta", {d})};
    return {w.require(prefix + ".weight", {d}), w.require(prefix + ".bias", {d})};
}

// A Conv1D weight [in, out] (y = x·W + b) as a linear layer's [out, in].
Tensor transposed(const Tensor& t) {
    if (t.empty()) return {};
    return Tensor::fromMatrix(t.matrix().transpose());
}

} // namespace

TextForward TextModel::extend(std::span<const int>, TextCache&, bool, bool, const RunControls&) const {
    throw Error("only decoder-only models generate");
}

RowMatrix TextModel::readout(const RowMatrix&) const {
    throw Error("this model has no language-model head: nothing to read the stream out to");
}

std::optional<LogitDirection> TextModel::logitDirection(std::span<const float>, int) const {
    return std::nullopt;
}

std::shared_ptr<const AttentionStore> TextForward::attentionStore() const {
    if (onDemand) return onDemand;
    if (attentions.empty()) return nullptr;
    return std::make_shared<const AttentionStore>(attentions);
}

std::vector<LayerRecall>* TextModel::prepareCapture(const RunControls& run, int64_t n, int64_t m,
                                                    TextForward& out,
                                                    std::vector<LayerRecall>& recall) const {
    if (!run.captureAttention) return nullptr;
    if (capturedAttentionBytes(layers(), heads(), n, m) > run.captureBudget) return &recall;
    out.attentions = Tensor({layers(), heads(), n, m});
    return nullptr;
}

void TextModel::keepOnDemand(std::vector<LayerRecall>& recall, TextForward& out) const {
    if (recall.empty()) return;
    out.onDemand =
        std::make_shared<const AttentionStore>(std::move(recall), heads(), weak_from_this().lock());
}

// --- BERT
// ----------------------------------------------------------------------------------------------------

std::shared_ptr<const BertModel> BertModel::load(const std::filesystem::path& dir,
                                                 const Callbacks& callbacks) {
    const JsonConfig cfg = readConfig(dir, "bert");
    BertConfig c;
    c.hiddenSize = cfg.positive("hidden_size");
    c.layers = cfg.layerCount("num_hidden_layers");
    c.heads = cfg.positive("num_attention_heads");
    c.intermediateSize = cfg.positive("intermediate_size");
    c.maxPositions = cfg.positive("max_position_embeddings");
    c.typeVocabSize = cfg.value<int>("type_vocab_size", 2);
    c.vocabSize = cfg.positive("vocab_size");
    c.layerNormEps = cfg.value<float>("layer_norm_eps", 1e-12f);
    c.activation = parseActivation(cfg.value<std::string>("hidden_act", "gelu"));
    if (c.hiddenSize % c.heads != 0)
        throw Error(quoted(cfg.path()) + ": hidden_size " + std::to_string(c.hiddenSize) +
                    " is not divisible by " + std::to_string(c.heads) + " heads");
    if (const auto pos = cfg.value<std::string>("position_embedding_type", "absolute"); pos != "absolute")
        throw Error(quoted(cfg.path()) + ": position_embedding_type '" + pos +
                    "' is not supported (only 'absolute')");
    if (cfg.value<bool>("is_decoder", false))
        throw Error(quoted(cfg.path()) + ": is_decoder = true (BERT as a decoder) is not supported");
    if (c.typeVocabSize <= 0) throw Error(quoted(cfg.path()) + ": type_vocab_size must be positive");

    auto m = std::make_shared<BertModel>();
    m->m_dir = dir;
    m->m_config = c;
    const auto [file, p] =
        openTextCheckpoint(dir, "embeddings.word_embeddings.weight", "bert.", "BERT", callbacks);
    WeightBinder w(file);
    w.setCallbacks(&callbacks);
    const int64_t d = c.hiddenSize, inter = c.intermediateSize;
    m->m_words = w.require(p + "embeddings.word_embeddings.weight", {c.vocabSize, d});
    m->m_positions = w.require(p + "embeddings.position_embeddings.weight", {c.maxPositions, d});
    m->m_types = w.require(p + "embeddings.token_type_embeddings.weight", {c.typeVocabSize, d});
    m->m_embeddingNorm = layerNorm(w, p + "embeddings.LayerNorm", d);
    for (int l = 0; l < c.layers; ++l) {
        callbacks.report(0.05 + 0.9 * l / c.layers,
                         "layer " + std::to_string(l) + " of " + std::to_string(c.layers));
        const std::string q = p + "encoder.layer." + std::to_string(l) + ".";
        auto linear = [&](const std::string& name, int64_t out, int64_t in) {
            return LinearWeights{w.require(q + name + ".weight", {out, in}),
                                 w.require(q + name + ".bias", {out})};
        };
        TransformerBlock layer;
        layer.placement = TransformerBlock::Placement::Post;
        LinearWeights query = linear("attention.self.query", d, d), key = linear("attention.self.key", d, d),
                      value = linear("attention.self.value", d, d),
                      out = linear("attention.output.dense", d, d);
        if (!query.weight.empty() && !key.weight.empty() && !value.weight.empty() && !out.weight.empty())
            layer.attention = MultiHeadAttention(std::move(query), std::move(key), std::move(value),
                                                 std::move(out), c.heads, QueryScale::Scores);
        const LayerNormWeights n1 = layerNorm(w, q + "attention.output.LayerNorm", d);
        const LayerNormWeights n2 = layerNorm(w, q + "output.LayerNorm", d);
        layer.attentionNorm = {Norm::Kind::LayerNorm, n1.weight, n1.bias, c.layerNormEps};
        layer.mlpNorm = {Norm::Kind::LayerNorm, n2.weight, n2.bias, c.layerNormEps};
        layer.mlp = {Mlp::Kind::Plain,
                     linear("intermediate.dense", inter, d),
                     {},
                     linear("output.dense", d, inter),
                     c.activation};
        if (w.problems().empty()) {
            layer.attention.packWeights();
            layer.mlp.pack();
        }
        m->m_layers.push_back(std::move(layer));
    }
    if (file.contains(p + "pooler.dense.weight"))
        m->m_pooler = {w.require(p + "pooler.dense.weight", {d, d}), w.require(p + "pooler.dense.bias", {d})};
    if (file.contains("cls.predictions.transform.dense.weight")) {
        m->m_transform = {w.require("cls.predictions.transform.dense.weight", {d, d}),
                          w.require("cls.predictions.transform.dense.bias", {d})};
        m->m_transformNorm = layerNorm(w, "cls.predictions.transform.LayerNorm", d);
        // The decoder is tied to the word embeddings (a checkpoint may still carry its own copy); its bias is
        // cls.predictions.bias (older files: cls.predictions.decoder.bias).
        Tensor decoder = file.contains("cls.predictions.decoder.weight")
                             ? w.require("cls.predictions.decoder.weight", {c.vocabSize, d})
                             : m->m_words;
        Tensor bias = file.contains("cls.predictions.bias")
                          ? w.require("cls.predictions.bias", {c.vocabSize})
                          : w.require("cls.predictions.decoder.bias", {c.vocabSize});
        m->m_decoder = {decoder, bias};
        if (w.problems().empty()) m->m_decoder.pack();
    }
    if (file.contains(p + "encoder.layer." + std::to_string(c.layers) + ".attention.self.query.weight"))
        w.problem("the checkpoint has more than num_hidden_layers = " + std::to_string(c.layers) + " layers");
    w.finish(quoted(dir) + ": the checkpoint does not match config.json");
    callbacks.report(1.0, "loaded");
    return m;
}

TextEmbeddingParts BertModel::embeddingParts(std::span<const int> ids) const {
    const BertConfig& c = m_config;
    const auto t = static_cast<int64_t>(ids.size());
    checkTextLength(t, c.maxPositions);
    checkTokenIds(ids, c.vocabSize, "BERT");
    const auto words = m_words.matrix(), positions = m_positions.matrix(), types = m_types.matrix();
    TextEmbeddingParts parts{RowMatrix(t, c.hiddenSize), RowMatrix(t, c.hiddenSize), {}};
    for (int64_t i = 0; i < t; ++i) {
        parts.tokens.row(i) = words.row(ids[static_cast<size_t>(i)]);
        parts.positions.row(i) = positions.row(i) + types.row(0);
    }
    parts.input = parts.tokens + parts.positions;
    layerNormInPlace(parts.input, m_embeddingNorm.weight, m_embeddingNorm.bias, c.layerNormEps);
    return parts;
}

TextForward BertModel::forward(std::span<const int> ids, bool logits, const RunControls& run) const {
    const BertConfig& c = m_config;
    const auto t = static_cast<int64_t>(ids.size());
    if (t == 0) throw Error("nothing to run: no tokens");
    checkTextLength(t, c.maxPositions);
    RowMatrix x = std::move(embeddingParts(ids).input);
    TextForward out;
    std::vector<LayerRecall> recall;
    auto* keep = prepareCapture(run, t, t, out, recall);
    const auto off = headsOffByLayer(run.offHeads, std::vector<int>(static_cast<size_t>(c.layers), c.heads));
    runBlocks(m_layers, x, {}, out.attentions, off,
              {run.probe, run.probeLayer, run.callbacks, keep, run.trace});
    keepOnDemand(recall, out);
    RowMatrix h;
    if (!m_pooler.weight.empty()) {
        RowMatrix pooled;
        linearInto(x.topRows(1), m_pooler, pooled);
        out.pooled = Tensor::fromMatrix(pooled.array().tanh().matrix()).reshaped({c.hiddenSize});
    }
    if (logits && hasLmHead()) out.logits = readout(x);
    out.hidden = std::move(x);
    return out;
}

RowMatrix BertModel::readout(const RowMatrix& stream) const {
    if (!hasLmHead()) return TextModel::readout(stream);
    RowMatrix h, logits;
    linearInto(stream, m_transform, h);
    applyActivationInPlace(h, m_config.activation);
    layerNormInPlace(h, m_transformNorm.weight, m_transformNorm.bias, m_config.layerNormEps);
    linearInto(h, m_decoder, logits);
    return logits;
}

// --- GPT-2
// ---------------------------------------------------------------------------------------------------

std::shared_ptr<const Gpt2Model> Gpt2Model::load(const std::filesystem::path& dir,
                                                 const Callbacks& callbacks) {
    if (std::error_code ec; std::filesystem::is_regular_file(dir, ec) && GgufFile::isGguf(dir))
        return loadGpt2Gguf(GgufFile::open(dir), callbacks);
    const JsonConfig cfg = readConfig(dir, "gpt2");
    Gpt2Config c;
    c.embd = cfg.positive("n_embd");
    c.layers = cfg.layerCount("n_layer");
    c.heads = cfg.positive("n_head");
    c.inner = cfg.value<int>("n_inner", 4 * c.embd);
    c.positions = cfg.positive("n_positions");
    c.vocabSize = cfg.positive("vocab_size");
    c.layerNormEps = cfg.value<float>("layer_norm_epsilon", 1e-5f);
    c.activation = parseActivation(cfg.value<std::string>("activation_function", "gelu_new"));
    c.scaleAttnWeights = cfg.value<bool>("scale_attn_weights", true);
    c.scaleByInverseLayerIdx = cfg.value<bool>("scale_attn_by_inverse_layer_idx", false);
    c.eosTokenId = cfg.value<int>("eos_token_id", -1);
    if (cfg.value<bool>("add_cross_attention", false))
        throw Error(quoted(cfg.path()) +
                    ": add_cross_attention = true (GPT-2 as an encoder-decoder) is not supported");
    if (c.embd % c.heads != 0)
        throw Error(quoted(cfg.path()) + ": n_embd " + std::to_string(c.embd) + " is not divisible by " +
                    std::to_string(c.heads) + " heads");
    if (c.inner <= 0) throw Error(quoted(cfg.path()) + ": n_inner must be positive");
    const auto [file, p] = openTextCheckpoint(dir, "wte.weight", "transformer.", "GPT-2", callbacks);
    return build(c, file, p, true, dir, callbacks);
}

std::shared_ptr<const Gpt2Model> Gpt2Model::build(const Gpt2Config& c, const TensorFile& file,
                                                  const std::string& p, bool conv1d,
                                                  const std::filesystem::path& dir,
                                                  const Callbacks& callbacks) {
    auto m = std::make_shared<Gpt2Model>();
    m->m_dir = dir;
    m->m_config = c;
    WeightBinder w(file);
    w.setCallbacks(&callbacks);
    const int64_t d = c.embd, inner = c.inner;
    m->m_tokens = w.require(p + "wte.weight", {c.vocabSize, d});
    m->m_positions = w.require(p + "wpe.weight", {c.positions, d});
    const float headScale = 1.0f / std::sqrt(static_cast<float>(d / c.heads));
    for (int l = 0; l < c.layers; ++l) {
        callbacks.report(0.05 + 0.9 * l / c.layers,
                         "layer " + std::to_string(l) + " of " + std::to_string(c.layers));
        const std::string q = p + "h." + std::to_string(l) + ".";
        TransformerBlock layer;
        layer.placement = TransformerBlock::Placement::Pre;
        layer.causal = true;
        layer.attentionNorm = {Norm::Kind::LayerNorm, w.require(q + "ln_1.weight", {d}),
                               w.require(q + "ln_1.bias", {d}), c.layerNormEps};
        layer.mlpNorm = {Norm::Kind::LayerNorm, w.require(q + "ln_2.weight", {d}),
                         w.require(q + "ln_2.bias", {d}), c.layerNormEps};
        // a linear layer's [out, in] weight, from Conv1D's [in, out] where the file keeps that
        auto weight = [&](const std::string& name, int64_t out, int64_t in) {
            return conv1d ? transposed(w.require(name, {in, out})) : w.require(name, {out, in});
        };
        const Tensor qkv = weight(q + "attn.c_attn.weight", 3 * d, d);
        const Tensor qkvBias = w.require(q + "attn.c_attn.bias", {3 * d});
        const Tensor proj = weight(q + "attn.c_proj.weight", d, d);
        const Tensor projBias = w.require(q + "attn.c_proj.bias", {d});
        if (!qkv.empty() && !qkvBias.empty() && !proj.empty() && !projBias.empty()) {
            const auto all = qkv.matrix(); // [3d, d]: the q, k and v rows
            const auto bias = qkvBias.matrix();
            auto part = [&](int k) {
                return LinearWeights{Tensor::fromMatrix(all.middleRows(k * d, d)),
                                     Tensor::fromMatrix(bias.middleCols(k * d, d)).reshaped({d})};
            };
            float scale = c.scaleAttnWeights ? headScale : 1.0f;
            if (c.scaleByInverseLayerIdx) scale /= static_cast<float>(l + 1);
            layer.attention = MultiHeadAttention(part(0), part(1), part(2), LinearWeights{proj, projBias},
                                                 c.heads, QueryScale::Scores, scale);
        }
        layer.mlp = {Mlp::Kind::Plain,
                     {weight(q + "mlp.c_fc.weight", inner, d), w.require(q + "mlp.c_fc.bias", {inner})},
                     {},
                     {weight(q + "mlp.c_proj.weight", d, inner), w.require(q + "mlp.c_proj.bias", {d})},
                     c.activation};
        if (w.problems().empty()) {
            layer.attention.packWeights();
            layer.mlp.pack();
        }
        m->m_layers.push_back(std::move(layer));
    }
    m->m_finalNorm = {w.require(p + "ln_f.weight", {d}), w.require(p + "ln_f.bias", {d})};
    if (file.contains(p + "h." + std::to_string(c.layers) + ".ln_1.weight"))
        w.problem("the checkpoint has more than n_layer = " + std::to_string(c.layers) + " layers");
    w.finish(quoted(dir) + ": the checkpoint does not match " + (conv1d ? "config.json" : "its metadata"));
    // The LM head is tied to the token embeddings (lm_head.weight, when a file has it, is the same tensor).
    m->m_head = {m->m_tokens, {}};
    m->m_head.pack();
    callbacks.report(1.0, "loaded");
    return m;
}

TextForward Gpt2Model::extend(std::span<const int> ids, TextCache& cache, bool logits, bool lastOnly,
                              bool captureAttention) const {
    RunControls run;
    run.captureAttention = captureAttention;
    return extend(ids, cache, logits, lastOnly, run);
}

TextForward Gpt2Model::extend(std::span<const int> ids, TextCache& cache, bool logits, bool lastOnly,
                              const RunControls& run) const {
    const Gpt2Config& c = m_config;
    const auto n = static_cast<int64_t>(ids.size());
    const int64_t past = cache.length();
    if (n == 0) throw Error("nothing to run: no tokens");
    checkTextLength(past + n, c.positions);
    if (cache.layers.size() != static_cast<size_t>(c.layers)) throw Error("GPT-2: a cache of another model");
    checkTokenIds(ids, c.vocabSize, "GPT-2");
    const auto tokens = m_tokens.matrix(), positions = m_positions.matrix();
    RowMatrix x(n, c.embd);
    for (int64_t i = 0; i < n; ++i)
        x.row(i) = tokens.row(ids[static_cast<size_t>(i)]) + positions.row(past + i);
    TextForward out;
    std::vector<LayerRecall> recall;
    auto* keep = prepareCapture(run, n, past + n, out, recall);
    const auto off = headsOffByLayer(run.offHeads, std::vector<int>(static_cast<size_t>(c.layers), c.heads));
    runBlocks(m_layers, x, cache.layers, out.attentions, off,
              {run.probe, run.probeLayer, run.callbacks, keep, run.trace, run.keptKeys});
    keepOnDemand(recall, out);
    layerNormInPlace(x, m_finalNorm.weight, m_finalNorm.bias, c.layerNormEps);
    if (logits) {
        if (lastOnly)
            linearInto(x.bottomRows(1), m_head, out.logits);
        else
            linearInto(x, m_head, out.logits);
    }
    out.hidden = std::move(x);
    return out;
}

RowMatrix Gpt2Model::readout(const RowMatrix& stream) const {
    RowMatrix x = stream, logits;
    layerNormInPlace(x, m_finalNorm.weight, m_finalNorm.bias, m_config.layerNormEps);
    linearInto(x, m_head, logits);
    return logits;
}

std::optional<LogitDirection> Gpt2Model::logitDirection(std::span<const float> finalRow, int token) const {
    const Norm norm{Norm::Kind::LayerNorm, m_finalNorm.weight, m_finalNorm.bias, m_config.layerNormEps};
    return normLogitDirection(finalRow, norm, m_head, token);
}

TextEmbeddingParts Gpt2Model::embeddingParts(std::span<const int> ids) const {
    const Gpt2Config& c = m_config;
    const auto n = static_cast<int64_t>(ids.size());
    checkTextLength(n, c.positions);
    checkTokenIds(ids, c.vocabSize, "GPT-2");
    const auto tokens = m_tokens.matrix(), positions = m_positions.matrix();
    TextEmbeddingParts parts{RowMatrix(n, c.embd), positions.topRows(n), {}};
    for (int64_t i = 0; i < n; ++i)
        parts.tokens.row(i) = tokens.row(ids[static_cast<size_t>(i)]);
    parts.input = parts.tokens + parts.positions;
    return parts;
}

TextForward Gpt2Model::forward(std::span<const int> ids, bool logits, const RunControls& run) const {
    TextCache cache = newCache();
    return extend(ids, cache, logits, false, run);
}

} // namespace attnlens
