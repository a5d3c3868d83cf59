#include "core/models/clip_text_model.h"

#include "core/io/json_file.h"
#include "core/io/weight_binder.h"
#include "core/models/text_model_util.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

namespace {

// The keys both readers share; `fallback` holds the defaults for absent keys (none for a clip_text_model
// folder's required ones: those are checked by positive()).
ClipTextConfig readKeys(const JsonConfig& cfg, const ClipTextConfig& fallback, bool required) {
    auto size = [&](const std::string& key, int def) {
        if (required) return cfg.positive(key);
        const int v = cfg.value<int>(key, def);
        cfg.checkPositive(v, key);
        return v;
    };
    ClipTextConfig c;
    c.hiddenSize = size("hidden_size", fallback.hiddenSize);
    c.layers = size("num_hidden_layers", fallback.layers);
    c.heads = size("num_attention_heads", fallback.heads);
    c.intermediateSize = size("intermediate_size", fallback.intermediateSize);
    c.maxPositions = cfg.value<int>("max_position_embeddings", fallback.maxPositions);
    cfg.checkPositive(c.maxPositions, "max_position_embeddings");
    c.vocabSize = size("vocab_size", fallback.vocabSize);
    c.layerNormEps = cfg.value<float>("layer_norm_eps", fallback.layerNormEps);
    c.activation = parseActivation(cfg.value<std::string>(
        "hidden_act", fallback.activation == Activation::GeluTanh ? "gelu_pytorch_tanh" : "quick_gelu"));
    c.eosTokenId = cfg.has("eos_token_id") && cfg.json()["eos_token_id"].is_null()
                       ? -1
                       : cfg.value<int>("eos_token_id", fallback.eosTokenId);
    c.causal = fallback.causal;
    if (c.hiddenSize % c.heads != 0)
        throw Error(quoted(cfg.path()) + ": hidden_size " + std::to_string(c.hiddenSize) +
                    " is not divisible by " + std::to_string(c.heads) + " heads");
    return c;
}

ClipTextConfig readClipTextConfig(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir / "config.json", ec))
        throw Error(quoted(dir) + ": config.json is missing");
    const JsonConfig cfg(dir / "config.json");
    if (const auto type = cfg.value<std::string>("model_type", ""); type != "clip_text_model")
        throw Error(quoted(cfg.path()) + ": model_type is '" + type + "', expected 'clip_text_model'");
    ClipTextConfig fallback;
    fallback.maxPositions = 77;
    return readKeys(cfg, fallback, true);
}

} // namespace

ClipTextConfig ClipTextConfig::fromNested(const JsonConfig& json) {
    ClipTextConfig defaults;
    defaults.hiddenSize = 512;
    defaults.layers = 12;
    defaults.heads = 8;
    defaults.intermediateSize = 2048;
    defaults.vocabSize = 49408;
    defaults.eosTokenId = 49407;
    defaults.maxPositions = 77;
    return readKeys(json, defaults, false);
}

ClipTextConfig ClipTextConfig::fromSiglipNested(const JsonConfig& json) {
    ClipTextConfig defaults;
    defaults.hiddenSize = 768;
    defaults.layers = 12;
    defaults.heads = 12;
    defaults.intermediateSize = 3072;
    defaults.vocabSize = 32000;
    defaults.maxPositions = 64;
    defaults.layerNormEps = 1e-6f;
    defaults.activation = Activation::GeluTanh;
    defaults.eosTokenId = 1;
    defaults.causal = false;
    ClipTextConfig c = readKeys(json, defaults, false);
    c.projectionSize = json.value<int>("projection_size", c.hiddenSize);
    json.checkPositive(c.projectionSize, "projection_size");
    return c;
}

int clipPooledIndex(std::span<const int> ids, int eosTokenId) {
    if (ids.empty()) return 0;
    if (eosTokenId == 2) return static_cast<int>(std::max_element(ids.begin(), ids.end()) - ids.begin());
    const auto it = std::find(ids.begin(), ids.end(), eosTokenId);
    return it == ids.end() ? 0 : static_cast<int>(it - ids.begin());
}

TransformerBlock bindClipLayer(WeightBinder& w, const ClipLayerShape& s, const std::string& prefix) {
    const int64_t d = s.hidden, f = s.inner;
    auto linear = [&](const std::string& name, int64_t out, int64_t in) {
        return storedLinear(w, prefix + name + ".weight", out, in, w.require(prefix + name + ".bias", {out}));
    };
    auto norm = [&](const std::string& name) {
        return Norm{Norm::Kind::LayerNorm, w.require(prefix + name + ".weight", {d}),
                    w.require(prefix + name + ".bias", {d}), s.eps};
    };
    TransformerBlock layer;
    layer.placement = TransformerBlock::Placement::Pre;
    layer.causal = s.causal;
    layer.attentionNorm = norm("layer_norm1");
    layer.mlpNorm = norm("layer_norm2");
    LinearWeights q = linear("self_attn.q_proj", d, d), k = linear("self_attn.k_proj", d, d),
                  v = linear("self_attn.v_proj", d, d), o = linear("self_attn.out_proj", d, d);
    if (!q.empty() && !k.empty() && !v.empty() && !o.empty()) // CLIPAttention: q_proj(x) · head_dim^−½
        layer.attention = MultiHeadAttention(std::move(q), std::move(k), std::move(v), std::move(o), s.heads,
                                             QueryScale::Query);
    layer.mlp = {Mlp::Kind::Plain, linear("mlp.fc1", f, d), {}, linear("mlp.fc2", d, f), s.activation};
    if (w.problems().empty()) {
        layer.attention.packWeights();
        layer.mlp.pack();
    }
    return layer;
}

std::shared_ptr<const ClipTextModel> ClipTextModel::load(const std::filesystem::path& dir,
                                                         const Callbacks& callbacks) {
    return loadTower(dir, readClipTextConfig(dir), callbacks);
}

std::shared_ptr<const ClipTextModel> ClipTextModel::loadTower(const std::filesystem::path& dir,
                                                              const ClipTextConfig& c,
                                                              const Callbacks& callbacks) {
    auto m = std::make_shared<ClipTextModel>();
    m->m_dir = dir;
    m->m_config = c;
    const auto [file, p] =
        openTextCheckpoint(dir, "embeddings.token_embedding.weight", "text_model.", "CLIP text", callbacks);
    WeightBinder w(file);
    w.setCallbacks(&callbacks);
    const int64_t d = c.hiddenSize;
    m->m_tokens = storedLinear(w, p + "embeddings.token_embedding.weight", c.vocabSize, d, {});
    m->m_positions = w.require(p + "embeddings.position_embedding.weight", {c.maxPositions, d});
    for (int l = 0; l < c.layers; ++l) {
        callbacks.report(0.05 + 0.9 * l / c.layers,
                         "layer " + std::to_string(l) + " of " + std::to_string(c.layers));
        m->m_layers.push_back(bindClipLayer(
            w, {c.hiddenSize, c.intermediateSize, c.heads, c.layerNormEps, c.activation, c.causal},
            p + "encoder.layers." + std::to_string(l) + "."));
    }
    m->m_finalNorm = {Norm::Kind::LayerNorm, w.require(p + "final_layer_norm.weight", {d}),
                      w.require(p + "final_layer_norm.bias", {d}), c.layerNormEps};
    if (file.contains(p + "encoder.layers." + std::to_string(c.layers) + ".layer_norm1.weight"))
        w.problem("the checkpoint has more than num_hidden_layers = " + std::to_string(c.layers) + " layers");
    w.finish(quoted(dir) + ": the checkpoint does not match config.json");
    callbacks.report(1.0, "loaded");
    return m;
}

TextEmbeddingParts ClipTextModel::embeddingParts(std::span<const int> ids) const {
    const auto n = static_cast<int64_t>(ids.size());
    checkTextLength(n, m_config.maxPositions);
    checkTokenIds(ids, m_config.vocabSize, "CLIP text");
    TextEmbeddingParts parts{RowMatrix(n, m_config.hiddenSize), m_positions.matrix().topRows(n), {}};
    for (int64_t i = 0; i < n; ++i)
        m_tokens.rowInto(ids[static_cast<size_t>(i)], parts.tokens.row(i).data());
    parts.input = parts.tokens + parts.positions;
    return parts;
}

TextForward ClipTextModel::forward(std::span<const int> ids, bool, const RunControls& run) const {
    if (ids.empty()) throw Error("nothing to run: no tokens");
    RowMatrix x = embeddingParts(ids).input;
    const auto n = static_cast<int64_t>(ids.size());
    TextForward out;
    std::vector<LayerRecall> recall;
    auto* keep = prepareCapture(run, n, n, out, recall);
    const auto off =
        headsOffByLayer(run.offHeads, std::vector<int>(static_cast<size_t>(m_config.layers), m_config.heads));
    TextCache cache = newCache();
    runBlocks(m_layers, x, cache.layers, out.attentions, off,
              {run.probe, run.probeLayer, run.callbacks, keep, run.trace});
    keepOnDemand(recall, out);
    m_finalNorm.apply(x);
    out.hidden = std::move(x);
    return out;
}

} // namespace attnlens
