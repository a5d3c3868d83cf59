#include "core/models/llama_model.h"

#include "core/io/weight_binder.h"
#include "core/models/llama_gguf.h"
#include "core/models/text_model_util.h"
#include "core/util/error.h"

#include <cmath>

namespace attnlens {

namespace {

struct LayerBinder {
    WeightBinder& w;
    const LlamaConfig& c;
    std::string prefix; // "model.layers.N."

    LinearWeights linear(const std::string& name, int64_t out, int64_t in, bool bias) const {
        return storedLinear(w, prefix + name + ".weight", out, in,
                            bias ? w.require(prefix + name + ".bias", {out}) : Tensor{});
    }
    Norm rms(const std::string& name, int64_t d) const {
        return {
            Norm::Kind::RmsNorm, w.require(prefix + name + ".weight", {d}), {}, c.rmsNormEps, c.normPlusOne};
    }
};

TransformerBlock bindLayer(WeightBinder& w, const LlamaConfig& c, const std::string& p, int l) {
    const LayerBinder b{w, c, p + "layers." + std::to_string(l) + "."};
    const int64_t d = c.hiddenSize, hd = c.headDim, q = c.heads * hd, kv = c.kvHeads * hd,
                  f = c.intermediateSize;
    TransformerBlock layer;
    layer.placement = TransformerBlock::Placement::Pre;
    layer.causal = true;
    layer.window = c.windows[size_t(l)];
    layer.attentionNorm = b.rms("input_layernorm", d);
    if (c.gemma) { // input → attention → post_attention; pre_feedforward → MLP → post_feedforward
        layer.attentionOutputNorm = b.rms("post_attention_layernorm", d);
        layer.mlpNorm = b.rms("pre_feedforward_layernorm", d);
        layer.mlpOutputNorm = b.rms("post_feedforward_layernorm", d);
    } else {
        layer.mlpNorm = b.rms("post_attention_layernorm", d);
    }
    LinearWeights wq = b.linear("self_attn.q_proj", q, d, c.attentionBias),
                  wk = b.linear("self_attn.k_proj", kv, d, c.attentionBias),
                  wv = b.linear("self_attn.v_proj", kv, d, c.attentionBias),
                  wo = b.linear("self_attn.o_proj", d, q, c.outputBias);
    if (w.problems().empty())
        layer.attention = MultiHeadAttention(std::move(wq), std::move(wk), std::move(wv), std::move(wo),
                                             c.heads, QueryScale::Scores, c.queryScale, c.kvHeads);
    if (c.qkNorm) {
        layer.queryNorm = b.rms("self_attn.q_norm", hd);
        layer.keyNorm = b.rms("self_attn.k_norm", hd);
    }
    const RopeSpec& rope = c.sliding[size_t(l)] ? c.localRope : c.rope;
    layer.rotary = RotaryEmbedding{static_cast<int>(hd),
                                   static_cast<int>(hd),
                                   rope.theta,
                                   ropeInverseFrequencies(rope, static_cast<int>(hd)),
                                   1.0f,
                                   c.ropeInterleaved};
    layer.mlp = {Mlp::Kind::Gated, b.linear("mlp.gate_proj", f, d, c.mlpBias),
                 b.linear("mlp.up_proj", f, d, c.mlpBias), b.linear("mlp.down_proj", d, f, c.mlpBias),
                 c.activation};
    if (w.problems().empty()) {
        layer.attention.packWeights();
        layer.mlp.pack();
    }
    return layer;
}

} // namespace

std::shared_ptr<const LlamaModel> LlamaModel::load(const std::filesystem::path& dir,
                                                   const Callbacks& callbacks) {
    if (std::error_code ec; std::filesystem::is_regular_file(dir, ec) && GgufFile::isGguf(dir))
        return load(GgufFile::open(dir), callbacks);
    const LlamaConfig c = readLlamaConfig(dir);
    const auto [file, p] = openTextCheckpoint(dir, "embed_tokens.weight", "model.", c.modelType, callbacks);
    return build(c, file, p, dir, callbacks);
}

std::shared_ptr<const LlamaModel> LlamaModel::load(const GgufFile& file, const Callbacks& callbacks) {
    const std::string architecture = file.string("general.architecture").value_or("");
    return build(llamaConfigFromGguf(file), file.toTensorFile(transformersTensorNames(architecture)),
                 "model.", file.path(), callbacks);
}

std::shared_ptr<const LlamaModel> LlamaModel::build(const LlamaConfig& c, const TensorFile& file,
                                                    const std::string& p, const std::filesystem::path& dir,
                                                    const Callbacks& callbacks) {
    auto m = std::make_shared<LlamaModel>();
    m->m_dir = dir;
    m->m_config = c;
    WeightBinder w(file);
    w.setCallbacks(&callbacks);
    const int64_t d = c.hiddenSize;
    m->m_tokens = storedLinear(w, p + "embed_tokens.weight", c.vocabSize, d, {});
    // Gemma scales the embeddings by √hidden (a float32 constant in a float32 computation).
    m->m_embeddingScale = c.gemma ? static_cast<float>(std::sqrt(static_cast<double>(d))) : 1.0f;
    for (int l = 0; l < c.layers; ++l) {
        callbacks.report(0.05 + 0.9 * l / c.layers,
                         "layer " + std::to_string(l) + " of " + std::to_string(c.layers));
        m->m_layers.push_back(bindLayer(w, c, p, l));
    }
    m->m_finalNorm = {
        Norm::Kind::RmsNorm, w.require(p + "norm.weight", {d}), {}, c.rmsNormEps, c.normPlusOne};
    if (file.contains(p + "layers." + std::to_string(c.layers) + ".input_layernorm.weight"))
        w.problem("the checkpoint has more than num_hidden_layers = " + std::to_string(c.layers) + " layers");
    // Tied: the LM head is the token embeddings (a file may still carry lm_head.weight; transformers ties
    // it).
    if (!c.tied) m->m_head = storedLinear(w, "lm_head.weight", c.vocabSize, d, {});
    w.finish("'" + dir.string() + "': the checkpoint does not match " +
             (file.format() == TensorFile::Format::Gguf ? "its metadata" : "config.json"));
    if (c.tied) m->m_head = m->m_tokens;
    m->m_head.pack();
    callbacks.report(1.0, "loaded");
    return m;
}

TextForward LlamaModel::extend(std::span<const int> ids, TextCache& cache, bool logits, bool lastOnly,
                               const RunControls& run) const {
    const LlamaConfig& c = m_config;
    const auto n = static_cast<int64_t>(ids.size());
    const int64_t past = cache.length();
    if (n == 0) throw Error("nothing to run: no tokens");
    checkTextLength(past + n, c.maxPositions);
    if (cache.layers.size() != static_cast<size_t>(c.layers))
        throw Error(c.modelType + ": a cache of another model");
    checkTokenIds(ids, c.vocabSize, c.modelType);
    RowMatrix x = embed(ids) * m_embeddingScale;
    TextForward out;
    std::vector<LayerRecall> recall;
    auto* keep = prepareCapture(run, n, past + n, out, recall);
    const auto off = headsOffByLayer(run.offHeads, std::vector<int>(static_cast<size_t>(c.layers), c.heads));
    runBlocks(m_layers, x, cache.layers, out.attentions, off,
              {run.probe, run.probeLayer, run.callbacks, keep, run.trace, run.keptKeys});
    keepOnDemand(recall, out);
    m_finalNorm.apply(x);
    if (logits) {
        if (lastOnly)
            linearInto(x.bottomRows(1), m_head, out.logits);
        else
            linearInto(x, m_head, out.logits);
        if (c.finalSoftcap > 0)
            out.logits = ((out.logits.array() / c.finalSoftcap).tanh() * c.finalSoftcap).matrix();
    }
    out.hidden = std::move(x);
    return out;
}

RowMatrix LlamaModel::readout(const RowMatrix& stream) const {
    RowMatrix x = stream, logits;
    m_finalNorm.apply(x);
    linearInto(x, m_head, logits);
    if (m_config.finalSoftcap > 0)
        logits = ((logits.array() / m_config.finalSoftcap).tanh() * m_config.finalSoftcap).matrix();
    return logits;
}

std::optional<LogitDirection> LlamaModel::logitDirection(std::span<const float> finalRow, int token) const {
    LogitDirection d = normLogitDirection(finalRow, m_finalNorm, m_head, token);
    d.softcap = m_config.finalSoftcap;
    return d;
}

RowMatrix LlamaModel::embed(std::span<const int> ids) const {
    RowMatrix x(static_cast<Eigen::Index>(ids.size()), m_config.hiddenSize);
    for (size_t i = 0; i < ids.size(); ++i)
        m_tokens.rowInto(ids[i], x.row(static_cast<Eigen::Index>(i)).data());
    return x;
}

TextForward LlamaModel::forward(std::span<const int> ids, bool logits, const RunControls& run) const {
    TextCache cache = newCache();
    return extend(ids, cache, logits, false, run);
}

TextEmbeddingParts LlamaModel::embeddingParts(std::span<const int> ids) const {
    const auto n = static_cast<int64_t>(ids.size());
    checkTextLength(n, m_config.maxPositions);
    checkTokenIds(ids, m_config.vocabSize, m_config.modelType);
    // Positions enter through the rotation of queries and keys, not the embeddings: that part is zero.
    TextEmbeddingParts parts{embed(ids), RowMatrix::Zero(n, m_config.hiddenSize), {}};
    parts.input = parts.tokens * m_embeddingScale;
    return parts;
}

} // namespace attnlens
