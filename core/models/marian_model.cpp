#include "core/models/marian_model.h"

#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/safetensors.h"
#include "core/io/weight_binder.h"
#include "core/ops/nn.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnlens {

namespace {

void readGeneration(const JsonConfig& cfg, MarianGenerationConfig& gen) {
    gen.numBeams = cfg.value<int>("num_beams", gen.numBeams);
    gen.lengthPenalty = cfg.value<float>("length_penalty", gen.lengthPenalty);
    gen.maxLength = cfg.value<int>("max_length", gen.maxLength);
    if (cfg.has("max_new_tokens")) gen.maxNewTokens = cfg.get<int>("max_new_tokens");
    if (cfg.has("early_stopping")) {
        const Json& es = cfg.json()["early_stopping"];
        if (es.is_boolean())
            gen.earlyStopping = es.get<bool>() ? EarlyStopping::True : EarlyStopping::False;
        else if (es.is_string() && es.get<std::string>() == "never")
            gen.earlyStopping = EarlyStopping::Never;
        else
            throw Error(cfg.path().string() + ": 'early_stopping' must be true, false or \"never\"");
    }
    if (cfg.has("bad_words_ids")) gen.badWordsIds = cfg.get<std::vector<std::vector<int>>>("bad_words_ids");
    if (cfg.has("forced_eos_token_id")) {
        const Json& f = cfg.json()["forced_eos_token_id"];
        if (f.is_array()) { // a list is allowed by HF; we force the first
            if (!f.empty()) gen.forcedEosTokenId = f[0].get<int>();
        } else {
            gen.forcedEosTokenId = cfg.get<int>("forced_eos_token_id");
        }
    }
    gen.decoderStartTokenId = cfg.value<int>("decoder_start_token_id", gen.decoderStartTokenId);
    gen.eosTokenId = cfg.value<int>("eos_token_id", gen.eosTokenId);
    if (cfg.has("pad_token_id")) gen.padTokenId = cfg.get<int>("pad_token_id");
    if (gen.numBeams < 1) throw Error(cfg.path().string() + ": 'num_beams' must be at least 1");
    if (gen.maxLength < 2) throw Error(cfg.path().string() + ": 'max_length' must be at least 2");
}

} // namespace

MarianConfig MarianConfig::fromFolder(const std::filesystem::path& dir) {
    const JsonConfig cfg(dir / "config.json");
    MarianConfig c;
    const auto type = cfg.value<std::string>("model_type", "");
    if (type != "marian")
        throw Error(cfg.path().string() + ": model_type is '" + type + "', expected 'marian'");
    c.dModel = cfg.value<int64_t>("d_model", c.dModel);
    c.encoderLayers = cfg.value<int>("encoder_layers", c.encoderLayers);
    c.decoderLayers = cfg.value<int>("decoder_layers", c.decoderLayers);
    c.encoderHeads = cfg.value<int>("encoder_attention_heads", c.encoderHeads);
    c.decoderHeads = cfg.value<int>("decoder_attention_heads", c.decoderHeads);
    c.encoderFfn = cfg.value<int64_t>("encoder_ffn_dim", c.encoderFfn);
    c.decoderFfn = cfg.value<int64_t>("decoder_ffn_dim", c.decoderFfn);
    c.vocabSize = cfg.value<int64_t>("vocab_size", c.vocabSize);
    c.decoderVocabSize = cfg.value<int64_t>("decoder_vocab_size", c.vocabSize);
    c.maxPositions = cfg.value<int64_t>("max_position_embeddings", c.maxPositions);
    c.scaleEmbedding = cfg.value<bool>("scale_embedding", c.scaleEmbedding);
    c.shareEmbeddings = cfg.value<bool>("share_encoder_decoder_embeddings", c.shareEmbeddings);
    c.activationName = cfg.value<std::string>("activation_function", c.activationName);
    try {
        c.activation = parseActivation(c.activationName);
    } catch (const Error& e) {
        throw Error(cfg.path().string() + ": " + e.what());
    }
    c.eosTokenId = cfg.value<int>("eos_token_id", c.eosTokenId);
    c.padTokenId = cfg.value<int>("pad_token_id", c.padTokenId);
    c.decoderStartTokenId = cfg.value<int>("decoder_start_token_id", c.decoderStartTokenId);

    const auto positive = [&](int64_t v, const char* key) { cfg.checkPositive(v, key); };
    positive(c.dModel, "d_model");
    cfg.checkLayerCount(c.encoderLayers, "encoder_layers");
    cfg.checkLayerCount(c.decoderLayers, "decoder_layers");
    positive(c.encoderHeads, "encoder_attention_heads");
    positive(c.decoderHeads, "decoder_attention_heads");
    positive(c.encoderFfn, "encoder_ffn_dim");
    positive(c.decoderFfn, "decoder_ffn_dim");
    positive(c.vocabSize, "vocab_size");
    positive(c.decoderVocabSize, "decoder_vocab_size");
    positive(c.maxPositions, "max_position_embeddings");
    if (c.dModel % c.encoderHeads != 0 || c.dModel % c.decoderHeads != 0)
        throw Error(cfg.path().string() + ": d_model " + std::to_string(c.dModel) +
                    " is not divisible by the number of attention heads");
    const auto tokenInRange = [&](int id, int64_t vocab, const char* key) {
        if (id < 0 || id >= vocab)
            throw Error(cfg.path().string() + ": '" + key + "' " + std::to_string(id) +
                        " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    };
    tokenInRange(c.eosTokenId, c.decoderVocabSize, "eos_token_id");
    tokenInRange(c.decoderStartTokenId, c.decoderVocabSize, "decoder_start_token_id");

    // Generation: generation_config.json replaces the model config's generation keys, as in HF.
    c.generation.decoderStartTokenId = c.decoderStartTokenId;
    c.generation.eosTokenId = c.eosTokenId;
    c.generation.padTokenId = c.padTokenId;
    std::error_code ec;
    const auto genPath = dir / "generation_config.json";
    if (std::filesystem::exists(genPath, ec))
        readGeneration(JsonConfig(genPath), c.generation);
    else
        readGeneration(cfg, c.generation);
    return c;
}

std::shared_ptr<const MarianModel> MarianModel::load(const std::filesystem::path& dir,
                                                     const Callbacks& callbacks) {
    callbacks.report(0.0, "reading config");
    const ModelFolderInfo folder = inspectModelFolder(dir);
    auto model = std::make_shared<MarianModel>();
    model->m_dir = dir;
    model->m_config = MarianConfig::fromFolder(dir);
    const MarianConfig& c = model->m_config;
    const int64_t D = c.dModel;

    callbacks.report(0.1, "mapping the weights file");
    const TensorFile file = TensorFile::open(folder.weights);
    WeightBinder bind(file);
    model->bindEmbeddings(bind, folder.dir);
    model->bindLayers(bind);
    bind.finish("'" + folder.weights.string() + "'");

    callbacks.report(0.8, "packing " + std::to_string(file.tensors().size()) + " weight tensors");
    model->packWeights();
    callbacks.report(0.9, "sinusoidal position table");
    model->m_embedScale = c.scaleEmbedding ? std::sqrt(static_cast<float>(D)) : 1.0f;
    model->m_positions = sinusoidalPositions(c.maxPositions, D);
    for (const auto& info : file.tensors())
        model->m_parameterCount += shapeNumel(info.shape);
    callbacks.report(1.0, "loaded");
    return model;
}

// Embeddings: every accepted layout of the tied group (docs/model-semantics.md).
void MarianModel::bindEmbeddings(WeightBinder& bind, const std::filesystem::path& dir) {
    const MarianConfig& c = m_config;
    const int64_t D = c.dModel, V = c.vocabSize, Vd = c.decoderVocabSize;
    if (c.shareEmbeddings && V != Vd)
        throw Error(dir.string() + "/config.json: share_encoder_decoder_embeddings is true but vocab_size " +
                    std::to_string(V) + " differs from decoder_vocab_size " + std::to_string(Vd));
    if (bind.has("model.shared.weight")) {
        const Tensor shared = bind.require("model.shared.weight", {V, D});
        m_encoderEmbed = shared;
        if (c.shareEmbeddings) {
            m_decoderEmbed = shared;
            m_lmHead = shared;
        }
    }
    if (!c.shareEmbeddings || m_encoderEmbed.empty()) {
        // encoder/decoder embeddings stored under their own names (unshared, or older files)
        if (m_encoderEmbed.empty())
            m_encoderEmbed = bind.require("model.encoder.embed_tokens.weight", {V, D});
        if (c.shareEmbeddings) {
            m_decoderEmbed = bind.optional("model.decoder.embed_tokens.weight", {Vd, D});
            if (m_decoderEmbed.empty()) m_decoderEmbed = m_encoderEmbed;
        } else {
            m_decoderEmbed = bind.require("model.decoder.embed_tokens.weight", {Vd, D});
        }
        m_lmHead = bind.optional("lm_head.weight", {Vd, D});
        if (m_lmHead.empty()) m_lmHead = m_decoderEmbed;
    } else {
        // shared present: duplicates under the other names are accepted (their shapes are checked)
        bind.optional("model.encoder.embed_tokens.weight", {V, D});
        bind.optional("model.decoder.embed_tokens.weight", {Vd, D});
        bind.optional("lm_head.weight", {Vd, D});
    }
    m_finalLogitsBias = bind.optional("final_logits_bias", {1, Vd});
    m_finalLogitsBias = m_finalLogitsBias.empty() ? Tensor({Vd}) : m_finalLogitsBias.reshaped({Vd});
    // Position tables are computed; a stored copy is only checked for its shape.
    bind.optional("model.encoder.embed_positions.weight", {c.maxPositions, D});
    bind.optional("model.decoder.embed_positions.weight", {c.maxPositions, D});
}

void MarianModel::bindLayers(WeightBinder& bind) {
    const MarianConfig& c = m_config;
    const int64_t D = c.dModel;
    const auto linearW = [&](const std::string& p, int64_t out, int64_t in) {
        return LinearWeights{bind.require(p + ".weight", {out, in}), bind.require(p + ".bias", {out})};
    };
    const auto norm = [&](const std::string& p) {
        return Norm{Norm::Kind::LayerNorm, bind.require(p + ".weight", {D}), bind.require(p + ".bias", {D}),
                    c.layerNormEps, false};
    };
    const auto mlp = [&](const std::string& p, int64_t ffn) {
        return Mlp{
            Mlp::Kind::Plain, linearW(p + ".fc1", ffn, D), {}, linearW(p + ".fc2", D, ffn), c.activation};
    };
    const auto attention = [&](const std::string& p, int heads) {
        auto q = linearW(p + ".q_proj", D, D);
        auto k = linearW(p + ".k_proj", D, D);
        auto v = linearW(p + ".v_proj", D, D);
        auto o = linearW(p + ".out_proj", D, D);
        if (q.weight.empty()) q.weight = Tensor({D, D}); // keep construction valid; the error is recorded
        return MultiHeadAttention(q, k, v, o, heads);
    };
    for (int i = 0; i < c.encoderLayers; ++i) {
        const std::string p = "model.encoder.layers." + std::to_string(i);
        TransformerBlock layer;
        layer.placement = TransformerBlock::Placement::Post;
        layer.attention = attention(p + ".self_attn", c.encoderHeads);
        layer.attentionNorm = norm(p + ".self_attn_layer_norm");
        layer.mlp = mlp(p, c.encoderFfn);
        layer.mlpNorm = norm(p + ".final_layer_norm");
        m_encoderLayers.push_back(std::move(layer));
    }
    for (int i = 0; i < c.decoderLayers; ++i) {
        const std::string p = "model.decoder.layers." + std::to_string(i);
        TransformerBlock layer;
        layer.placement = TransformerBlock::Placement::Post;
        layer.causal = true;
        layer.attention = attention(p + ".self_attn", c.decoderHeads);
        layer.attentionNorm = norm(p + ".self_attn_layer_norm");
        layer.cross = CrossAttention{attention(p + ".encoder_attn", c.decoderHeads),
                                     norm(p + ".encoder_attn_layer_norm")};
        layer.mlp = mlp(p, c.decoderFfn);
        layer.mlpNorm = norm(p + ".final_layer_norm");
        m_decoderLayers.push_back(std::move(layer));
    }
}

RowMatrix MarianModel::embed(std::span<const int> ids, const Tensor& table, int64_t firstPosition,
                             int64_t vocab, const char* what) const {
    const int64_t D = m_config.dModel;
    RowMatrix x(static_cast<Eigen::Index>(ids.size()), D); // [n, D]
    const auto E = table.matrix();
    const auto P = m_positions.matrix();
    for (size_t i = 0; i < ids.size(); ++i) {
        const int id = ids[i];
        if (id < 0 || id >= vocab)
            throw Error(std::string(what) + ": token id " + std::to_string(id) +
                        " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
        const int64_t pos = firstPosition + static_cast<int64_t>(i);
        x.row(static_cast<Eigen::Index>(i)) = E.row(id) * m_embedScale + P.row(pos);
    }
    return x;
}

MarianEmbeddingParts MarianModel::embeddingParts(std::span<const int> ids, MarianSide side,
                                                 int64_t firstPosition) const {
    const bool encoder = side == MarianSide::Encoder;
    const Tensor& table = encoder ? m_encoderEmbed : m_decoderEmbed;
    const int64_t vocab = encoder ? m_config.vocabSize : m_config.decoderVocabSize;
    const int64_t n = static_cast<int64_t>(ids.size());
    if (firstPosition < 0 || firstPosition + n > m_config.maxPositions)
        throw Error(std::string(encoder ? "encoder" : "decoder") + ": positions " +
                    std::to_string(firstPosition) + ".." + std::to_string(firstPosition + n - 1) +
                    " exceed max_position_embeddings " + std::to_string(m_config.maxPositions));
    MarianEmbeddingParts parts;
    parts.tokens.resize(n, m_config.dModel);    // [n, D]
    parts.positions.resize(n, m_config.dModel); // [n, D]
    const auto E = table.matrix();
    const auto P = m_positions.matrix();
    for (int64_t i = 0; i < n; ++i) {
        const int id = ids[static_cast<size_t>(i)];
        if (id < 0 || id >= vocab)
            throw Error(std::string(encoder ? "encoder" : "decoder") + ": token id " + std::to_string(id) +
                        " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
        parts.tokens.row(i) = E.row(id) * m_embedScale;
        parts.positions.row(i) = P.row(firstPosition + i);
    }
    return parts;
}

void MarianModel::checkDecoderPosition(int64_t pos) const {
    if (pos >= m_config.maxPositions)
        throw Error("decoder: position " + std::to_string(pos) + " exceeds max_position_embeddings " +
                    std::to_string(m_config.maxPositions));
}

namespace {

std::span<const int> offIn(const std::vector<std::vector<int>>& perLayer, int layer) {
    return layer >= 0 && layer < static_cast<int>(perLayer.size()) ? std::span<const int>(perLayer[layer])
                                                                   : std::span<const int>();
}

} // namespace

bool MarianAblation::any() const {
    return count() > 0;
}

int MarianAblation::count() const {
    int n = 0;
    for (AttentionKind kind : {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross})
        for (const auto& heads : perLayer(kind))
            n += static_cast<int>(heads.size());
    return n;
}

std::vector<std::vector<int>>& MarianAblation::perLayer(AttentionKind kind) {
    return kind == AttentionKind::EncoderSelf   ? encoder
           : kind == AttentionKind::DecoderSelf ? decoder
                                                : cross;
}
const std::vector<std::vector<int>>& MarianAblation::perLayer(AttentionKind kind) const {
    return kind == AttentionKind::EncoderSelf   ? encoder
           : kind == AttentionKind::DecoderSelf ? decoder
                                                : cross;
}

void MarianAblation::add(AttentionKind kind, int layer, int head, const MarianConfig& c) {
    if (static_cast<int>(kind) < 0 || static_cast<int>(kind) > 2)
        throw Error("ablation: unknown attention kind");
    const bool encoderSide = kind == AttentionKind::EncoderSelf;
    const int layers = encoderSide ? c.encoderLayers : c.decoderLayers;
    const int heads = encoderSide ? c.encoderHeads : c.decoderHeads;
    if (layer < 0 || layer >= layers || head < 0 || head >= heads)
        throw Error(std::string(attentionKindId(kind)) + " head " + std::to_string(layer) + ":" +
                    std::to_string(head) + " is outside the " + std::to_string(layers) + " layers × " +
                    std::to_string(heads) + " heads (numbered from 0)");
    auto& layersOff = perLayer(kind);
    if (layersOff.size() <= static_cast<size_t>(layer)) layersOff.resize(static_cast<size_t>(layer) + 1);
    auto& list = layersOff[static_cast<size_t>(layer)];
    if (std::find(list.begin(), list.end(), head) == list.end()) list.push_back(head);
}

HeadList MarianAblation::heads(AttentionKind kind) const {
    HeadList pairs;
    const auto& layersOff = perLayer(kind);
    for (size_t l = 0; l < layersOff.size(); ++l)
        for (int h : layersOff[l])
            pairs.emplace_back(static_cast<int>(l), h);
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

void MarianAblation::setHeads(AttentionKind kind, const HeadList& heads, const MarianConfig& config) {
    MarianAblation next = *this; // unchanged when a pair is out of range
    next.perLayer(kind).clear();
    for (const auto& [layer, head] : heads)
        next.add(kind, layer, head, config);
    *this = std::move(next);
}

std::span<const int> MarianAblation::encoderOff(int layer) const {
    return offIn(encoder, layer);
}
std::span<const int> MarianAblation::decoderOff(int layer) const {
    return offIn(decoder, layer);
}
std::span<const int> MarianAblation::crossOff(int layer) const {
    return offIn(cross, layer);
}

MarianEncoderOutput MarianModel::encode(std::span<const int> ids, bool captureAttention,
                                        const MarianAblation* ablation, ResidualTrace* trace) const {
    const int64_t S = static_cast<int64_t>(ids.size());
    if (S == 0) throw Error("encoder: the input has no tokens");
    if (S > m_config.maxPositions)
        throw Error("input too long: " + std::to_string(S) + " tokens, the model accepts at most " +
                    std::to_string(m_config.maxPositions) + " (max_position_embeddings)");
    MarianEncoderOutput out;
    out.length = S;
    out.states = embed(ids, m_encoderEmbed, 0, m_config.vocabSize, "encoder"); // [S, D]
    const int L = m_config.encoderLayers, H = m_config.encoderHeads;
    ResidualTrace local; // the value norms that come with the attention
    local.rows = {0};
    if (!trace && captureAttention) trace = &local;
    if (captureAttention) out.selfAttention = Tensor({L, H, S, S});
    if (trace) trace->layers.assign(size_t(L), LayerTrace());
    for (int l = 0; l < L; ++l) {
        Tensor probs = captureAttention ? out.selfAttention.sub({l}) : Tensor(); // [H, S, S] view
        BlockRun run;
        run.probs = captureAttention ? &probs : nullptr;
        if (ablation) run.offHeads = ablation->encoderOff(l);
        if (trace) {
            run.trace = &trace->layers[size_t(l)];
            run.traceRows = &trace->rows;
            run.traceValues = trace->values || captureAttention;
        }
        m_encoderLayers[l].forward(out.states, run);
    }
    if (trace) trace->final = traceRows(out.states, trace->rows);
    const int Ld = m_config.decoderLayers, Hd = m_config.decoderHeads;
    out.crossKeys.resize(size_t(Ld));
    out.crossValues.resize(size_t(Ld));
    for (int l = 0; l < Ld; ++l)
        m_decoderLayers[l].cross->attention.projectKeyValue(out.states, out.crossKeys[l], out.crossValues[l]);
    if (captureAttention) {
        out.selfValueNorms = Tensor({L, H, S});
        for (int l = 0; l < L; ++l)
            out.selfValueNorms.slice2d({l}) = trace->layers[size_t(l)].valueNorms;
        out.crossValueNorms = Tensor({Ld, Hd, S});
        for (int l = 0; l < Ld; ++l)
            out.crossValueNorms.slice2d({l}) =
                m_decoderLayers[l].cross->attention.valueNorms(out.crossValues[l]);
    }
    return out;
}

void MarianModel::packWeights() {
    for (TransformerBlock& l : m_encoderLayers) {
        l.attention.packWeights();
        l.mlp.pack();
    }
    for (TransformerBlock& l : m_decoderLayers) {
        l.attention.packWeights();
        l.cross->attention.packWeights();
        l.mlp.pack();
    }
    m_outputProjection = LinearWeights{m_lmHead, m_finalLogitsBias, {}};
    m_outputProjection.pack();
}

BlockRun MarianModel::decoderRun(int l, KvCache& cache, const MarianEncoderOutput& encoder, Tensor* self,
                                 Tensor* cross, const MarianAblation* ablation) const {
    BlockRun run;
    run.cache = &cache;
    run.probs = self;
    run.crossKeys = &encoder.crossKeys[size_t(l)];
    run.crossValues = &encoder.crossValues[size_t(l)];
    run.crossProbs = cross;
    if (ablation) {
        run.offHeads = ablation->decoderOff(l);
        run.crossOffHeads = ablation->crossOff(l);
    }
    return run;
}

MarianDecoderCache MarianModel::newCache() const {
    MarianDecoderCache cache;
    cache.layers.resize(m_decoderLayers.size());
    return cache;
}

MarianStepOutput MarianModel::decodeStep(int token, const MarianEncoderOutput& encoder,
                                         MarianDecoderCache& cache, bool captureAttention,
                                         const MarianAblation* ablation) const {
    if (cache.layers.size() != m_decoderLayers.size()) cache = newCache();
    const int64_t t = cache.length();
    checkDecoderPosition(t);
    const int64_t S = encoder.length;
    const int L = m_config.decoderLayers, H = m_config.decoderHeads;
    const int ids[1] = {token};
    RowMatrix x = embed(ids, m_decoderEmbed, t, m_config.decoderVocabSize, "decoder"); // [1, D]
    MarianStepOutput out;
    if (captureAttention) {
        out.selfAttention = Tensor({L, H, t + 1});
        out.crossAttention = Tensor({L, H, S});
    }
    for (int l = 0; l < L; ++l) {
        // Layer l of the capture as [H, 1, keys] views.
        Tensor self = captureAttention ? out.selfAttention.sub({l}).reshaped({H, 1, t + 1}) : Tensor();
        Tensor cross = captureAttention ? out.crossAttention.sub({l}).reshaped({H, 1, S}) : Tensor();
        m_decoderLayers[l].forward(x,
                                   decoderRun(l, cache.layers[l], encoder, captureAttention ? &self : nullptr,
                                              captureAttention ? &cross : nullptr, ablation));
    }
    if (captureAttention) appendedKeyNorms(out, cache);
    RowMatrix logits;
    linearInto(x, m_outputProjection, logits); // [1, V_dec]
    out.logits.assign(logits.data(), logits.data() + logits.size());
    return out;
}

void MarianModel::appendedKeyNorms(MarianStepOutput& out, const MarianDecoderCache& cache) const {
    const int L = m_config.decoderLayers, H = m_config.decoderHeads;
    out.selfValueNorms = Tensor({L, H});
    for (int l = 0; l < L; ++l) {
        const KvCache& c = cache.layers[size_t(l)];
        const RowMatrix norms = m_decoderLayers[l].attention.valueNorms(c.values.middleRows(c.length - 1, 1));
        std::copy(norms.data(), norms.data() + H, out.selfValueNorms.data() + int64_t(l) * H);
    }
}

std::vector<MarianStepOutput> MarianModel::decodeSteps(std::span<const int> tokens,
                                                       const MarianEncoderOutput& encoder,
                                                       const std::vector<MarianDecoderCache*>& caches,
                                                       bool captureAttention,
                                                       const MarianAblation* ablation) const {
    const size_t B = tokens.size();
    if (caches.size() != B)
        throw Error("decoder: " + std::to_string(B) + " tokens but " + std::to_string(caches.size()) +
                    " caches");
    if (B == 0) return {};
    for (auto* c : caches)
        if (c->layers.size() != m_decoderLayers.size()) *c = newCache();
    const int64_t t = caches.front()->length();
    for (auto* c : caches)
        if (c->length() != t) throw Error("decoder: batched hypotheses must be at the same position");
    checkDecoderPosition(t);
    const int64_t S = encoder.length;
    const int L = m_config.decoderLayers, H = m_config.decoderHeads;
    RowMatrix x(static_cast<Eigen::Index>(B), m_config.dModel); // [B, D]
    for (size_t b = 0; b < B; ++b)
        x.row(static_cast<Eigen::Index>(b)) =
            embed(tokens.subspan(b, 1), m_decoderEmbed, t, m_config.decoderVocabSize, "decoder");
    std::vector<MarianStepOutput> out(B);
    if (captureAttention)
        for (auto& o : out) {
            o.selfAttention = Tensor({L, H, t + 1});
            o.crossAttention = Tensor({L, H, S});
        }
    std::vector<KvCache*> layerCaches(B);
    std::vector<Tensor> selfViews(B), crossViews(B); // layer l of each capture as [H, 1, keys]
    std::vector<Tensor*> selfProbs(B, nullptr), crossProbs(B, nullptr);
    for (int l = 0; l < L; ++l) {
        for (size_t b = 0; b < B; ++b) {
            layerCaches[b] = &caches[b]->layers[l];
            if (captureAttention) {
                selfViews[b] = out[b].selfAttention.sub({l}).reshaped({H, 1, t + 1});
                crossViews[b] = out[b].crossAttention.sub({l}).reshaped({H, 1, S});
                selfProbs[b] = &selfViews[b];
                crossProbs[b] = &crossViews[b];
            }
        }
        BlockRun shared;
        shared.crossKeys = &encoder.crossKeys[l];
        shared.crossValues = &encoder.crossValues[l];
        if (ablation) {
            shared.offHeads = ablation->decoderOff(l);
            shared.crossOffHeads = ablation->crossOff(l);
        }
        m_decoderLayers[l].forwardBatch(x, layerCaches, selfProbs, crossProbs, shared);
    }
    RowMatrix logits;
    linearInto(x, m_outputProjection, logits); // [B, V_dec]
    for (size_t b = 0; b < B; ++b) {
        const auto row = logits.row(static_cast<Eigen::Index>(b));
        out[b].logits.assign(row.data(), row.data() + row.size());
        if (captureAttention) appendedKeyNorms(out[b], *caches[b]);
    }
    return out;
}

std::vector<int> MarianModel::forcedDecoderInput(std::span<const int> target) const {
    std::vector<int> input{m_config.generation.decoderStartTokenId};
    if (!target.empty())
        input.insert(input.end(), target.begin(), target.end() - 1); // the last is predicted, never fed
    return input;
}

RowMatrix MarianModel::readout(const RowMatrix& stream) const {
    RowMatrix logits;
    linearInto(stream, m_outputProjection, logits);
    return logits;
}

MarianForcedOutput MarianModel::decodeForced(std::span<const int> decoderInput,
                                             const MarianEncoderOutput& encoder,
                                             const MarianAblation* ablation, ResidualTrace* trace) const {
    const int64_t T = static_cast<int64_t>(decoderInput.size());
    if (T == 0) throw Error("decoder: no input tokens");
    checkDecoderPosition(T - 1);
    const int64_t S = encoder.length;
    const int L = m_config.decoderLayers, H = m_config.decoderHeads;
    MarianForcedOutput out;
    out.selfAttention = Tensor({L, H, T, T});
    out.crossAttention = Tensor({L, H, T, S});
    MarianDecoderCache cache = newCache();
    RowMatrix x = embed(decoderInput, m_decoderEmbed, 0, m_config.decoderVocabSize, "decoder"); // [T, D]
    if (trace) trace->layers.assign(size_t(L), LayerTrace());
    for (int l = 0; l < L; ++l) {
        Tensor self = out.selfAttention.sub({l});   // [H, T, T] view
        Tensor cross = out.crossAttention.sub({l}); // [H, T, S] view
        BlockRun run = decoderRun(l, cache.layers[l], encoder, &self, &cross, ablation);
        if (trace) {
            run.trace = &trace->layers[size_t(l)];
            run.traceRows = &trace->rows;
            run.traceValues = trace->values;
        }
        m_decoderLayers[l].forward(x, run);
    }
    if (trace) trace->final = traceRows(x, trace->rows);
    RowMatrix logits;
    linearInto(x, m_outputProjection, logits); // [T, V_dec]
    out.logits = Tensor::fromMatrix(logits);
    return out;
}

AttentionInputs MarianModel::attentionInputs(AttentionKind kind, int layer, std::span<const int> source,
                                             std::span<const int> decoderInput,
                                             const MarianAblation* ablation) const {
    const int layers = kind == AttentionKind::EncoderSelf ? m_config.encoderLayers : m_config.decoderLayers;
    if (static_cast<int>(kind) < 0 || static_cast<int>(kind) > 2)
        throw Error("attention kind " + std::to_string(static_cast<int>(kind)) +
                    " is not encoder, decoder or cross");
    if (layer < 0 || layer >= layers)
        throw Error("layer " + std::to_string(layer) + " is outside the " + std::to_string(layers) +
                    " layers (numbered from 0)");
    if (kind == AttentionKind::EncoderSelf) {
        if (source.empty()) throw Error("encoder: the input has no tokens");
        if (static_cast<int64_t>(source.size()) > m_config.maxPositions)
            encode(source, false); // throws its message
        RowMatrix x = embed(source, m_encoderEmbed, 0, m_config.vocabSize, "encoder");
        for (int l = 0; l < layer; ++l)
            m_encoderLayers[l].forward(
                x, BlockRun{.offHeads = ablation ? ablation->encoderOff(l) : std::span<const int>()});
        return {&m_encoderLayers[layer].attention, x, x, false};
    }
    const MarianEncoderOutput encoder = encode(source, false, ablation);
    const int64_t T = static_cast<int64_t>(decoderInput.size());
    if (T == 0) throw Error("decoder: no input tokens");
    checkDecoderPosition(T - 1);
    MarianDecoderCache cache = newCache();
    RowMatrix x = embed(decoderInput, m_decoderEmbed, 0, m_config.decoderVocabSize, "decoder"); // [T, D]
    for (int l = 0; l < layer; ++l)
        m_decoderLayers[l].forward(x, decoderRun(l, cache.layers[l], encoder, nullptr, nullptr, ablation));
    const TransformerBlock& L = m_decoderLayers[layer];
    if (kind == AttentionKind::DecoderSelf) return {&L.attention, x, x, true};
    L.selfAttentionSublayer(x, decoderRun(layer, cache.layers[layer], encoder, nullptr, nullptr, ablation));
    return {&L.cross->attention, x, encoder.states, false};
}

std::vector<float> MarianModel::cacheRow(const MarianDecoderCache& cache, int64_t pos) const {
    const int64_t D = m_config.dModel;
    std::vector<float> row(static_cast<size_t>(cache.layers.size() * 2 * D));
    for (size_t l = 0; l < cache.layers.size(); ++l) {
        const auto& c = cache.layers[l];
        if (pos < 0 || pos >= c.length)
            throw Error("decoder cache: position " + std::to_string(pos) + " not cached");
        std::memcpy(row.data() + (2 * l) * D, c.keys.row(pos).data(), sizeof(float) * D);
        std::memcpy(row.data() + (2 * l + 1) * D, c.values.row(pos).data(), sizeof(float) * D);
    }
    return row;
}

void MarianModel::appendCacheRow(MarianDecoderCache& cache, std::span<const float> row) const {
    const int64_t D = m_config.dModel;
    if (cache.layers.size() != m_decoderLayers.size()) cache = newCache();
    if (static_cast<int64_t>(row.size()) != static_cast<int64_t>(cache.layers.size()) * 2 * D)
        throw Error("decoder cache: row has the wrong size");
    for (size_t l = 0; l < cache.layers.size(); ++l) {
        const RowMatrix k = ConstMatrixMap(row.data() + (2 * l) * D, 1, D);
        const RowMatrix v = ConstMatrixMap(row.data() + (2 * l + 1) * D, 1, D);
        cache.layers[l].append(k, v);
    }
}

} // namespace attnlens
