// config.json of the Llama-style families (core/models/llama_model.h) as transformers reads them.
#include "core/io/json_file.h"
#include "core/io/model_limits.h"
#include "core/models/llama_model.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attnlens {

namespace {

constexpr const char* kTypes[] = {"llama", "mistral", "qwen2", "qwen3", "gemma3_text"};

// One rope_scaling / rope_parameters object (`theta` when it names none).
RopeSpec parseRope(const Json& json, const std::filesystem::path& path, const std::string& field,
                   float theta) {
    RopeSpec rope;
    rope.theta = theta;
    if (json.is_null()) return rope;
    if (!json.is_object()) throw Error(quoted(path) + ": " + field + " is not an object");
    const JsonConfig r(json, path);
    rope.type = r.value<std::string>("rope_type", r.value<std::string>("type", "default"));
    rope.theta = r.value<float>("rope_theta", theta);
    rope.factor = r.value<float>("factor", 1.0f);
    if (rope.type == "llama3") {
        rope.lowFreqFactor = r.value<float>("low_freq_factor", 1.0f);
        rope.highFreqFactor = r.value<float>("high_freq_factor", 4.0f);
        rope.originalMaxPositions = r.get<int>("original_max_position_embeddings");
        if (rope.originalMaxPositions <= 0 || rope.highFreqFactor <= rope.lowFreqFactor ||
            rope.lowFreqFactor <= 0)
            throw Error(quoted(path) + ": " + field + " of type llama3 has impossible factors");
    } else if (rope.type != "default" && rope.type != "linear") {
        throw Error(quoted(path) + ": " + field + " of type '" + rope.type +
                    "' is not supported (default, linear, llama3)");
    }
    if (!(rope.factor > 0) || !std::isfinite(rope.factor))
        throw Error(quoted(path) + ": " + field + " has factor " + std::to_string(rope.factor));
    if (!(rope.theta > 1) || !std::isfinite(rope.theta))
        throw Error(quoted(path) + ": rope theta must be above 1, found " + std::to_string(rope.theta));
    return rope;
}

// The ropes of full and sliding layers: v5's rope_parameters (one object, or one per layer type) or
// rope_theta + rope_scaling; Gemma 3's local layers rotate with rope_local_base_freq.
void readRopes(const JsonConfig& cfg, LlamaConfig& c) {
    const bool gemma = c.modelType == "gemma3_text";
    const float theta = cfg.value<float>("rope_theta", gemma ? 1e6f : 10000.0f);
    const float localTheta = cfg.value<float>("rope_local_base_freq", 10000.0f);
    if (cfg.has("rope_parameters")) {
        const Json& p = cfg.json()["rope_parameters"];
        if (p.is_object() && p.contains("full_attention")) {
            c.rope = parseRope(p["full_attention"], cfg.path(), "rope_parameters.full_attention", theta);
            c.localRope = p.contains("sliding_attention")
                              ? parseRope(p["sliding_attention"], cfg.path(),
                                          "rope_parameters.sliding_attention", localTheta)
                              : c.rope;
            return;
        }
        c.rope = parseRope(p, cfg.path(), "rope_parameters", theta);
    } else {
        c.rope = parseRope(cfg.has("rope_scaling") ? cfg.json()["rope_scaling"] : Json(), cfg.path(),
                           "rope_scaling", theta);
    }
    c.localRope = c.rope;
    if (gemma) c.localRope = parseRope(Json(), cfg.path(), "rope_local_base_freq", localTheta);
}

// Per layer, its sliding window (0: full attention).
void readWindows(const JsonConfig& cfg, LlamaConfig& c) {
    const std::string& type = c.modelType;
    // absent: the config class's default (4096); null: no window
    const bool present = cfg.json().is_object() && cfg.json().contains("sliding_window");
    const int window = present ? cfg.value<int>("sliding_window", 0) : 4096;
    c.windows.assign(static_cast<size_t>(c.layers), 0);
    c.sliding.assign(static_cast<size_t>(c.layers), 0);
    if (cfg.has("layer_types") &&
        type != "mistral") { // Mistral windows every layer whatever layer_types says
        const auto types = cfg.get<std::vector<std::string>>("layer_types");
        if (types.size() != c.windows.size())
            throw Error(quoted(cfg.path()) + ": layer_types has " + std::to_string(types.size()) +
                        " entries for " + std::to_string(c.layers) + " layers");
        for (size_t l = 0; l < types.size(); ++l) {
            if (types[l] != "full_attention" && types[l] != "sliding_attention")
                throw Error(quoted(cfg.path()) + ": layer_types[" + std::to_string(l) + "] '" + types[l] +
                            "' is not supported (full_attention, sliding_attention)");
            c.sliding[l] = types[l] == "sliding_attention";
            if (c.sliding[l] && (type == "gemma3_text" || cfg.value<bool>("use_sliding_window", false)))
                c.windows[l] = window;
        }
    } else if (type == "mistral") {
        std::fill(c.windows.begin(), c.windows.end(), window);
    } else if ((type == "qwen2" || type == "qwen3") && cfg.value<bool>("use_sliding_window", false)) {
        const int first = cfg.value<int>("max_window_layers", 28); // the config classes' default
        for (int l = std::max(first, 0); l < c.layers; ++l)
            c.windows[size_t(l)] = window, c.sliding[size_t(l)] = 1;
    } else if (type == "gemma3_text") {
        const int pattern = cfg.value<int>("sliding_window_pattern", 6);
        for (int l = 0; l < c.layers; ++l)
            if (pattern <= 0 || (l + 1) % pattern != 0)
                c.windows[size_t(l)] = window, c.sliding[size_t(l)] = 1;
    }
    for (int w : c.windows)
        if (w < 0) throw Error(quoted(cfg.path()) + ": sliding_window must not be negative");
}

std::vector<int> idList(const JsonConfig& cfg, const std::string& key) {
    if (!cfg.has(key)) return {};
    if (cfg.json()[key].is_array()) return cfg.get<std::vector<int>>(key);
    return {cfg.get<int>(key)};
}

void refuseUnsupported(const JsonConfig& cfg) {
    for (const char* moe : {"num_local_experts", "num_experts", "n_routed_experts"})
        if (cfg.has(moe) && cfg.value<int>(moe, 0) > 0)
            throw Error(quoted(cfg.path()) + ": " + moe + " — mixture-of-experts models are not supported");
    if (cfg.has("attn_logit_softcapping"))
        throw Error(quoted(cfg.path()) + ": attn_logit_softcapping is not supported");
    if (cfg.value<float>("partial_rotary_factor", 1.0f) != 1.0f)
        throw Error(quoted(cfg.path()) + ": partial_rotary_factor other than 1 is not supported");
    if (cfg.value<int>("pretraining_tp", 1) < 1)
        throw Error(quoted(cfg.path()) + ": pretraining_tp must be positive");
}

} // namespace

bool isLlamaModelType(const std::string& modelType) {
    return std::find(std::begin(kTypes), std::end(kTypes), modelType) != std::end(kTypes);
}

LlamaConfig readLlamaConfig(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error(quoted(dir) + ": model folder not found");
    if (!std::filesystem::exists(dir / "config.json", ec))
        throw Error(quoted(dir) + ": config.json is missing");
    const JsonConfig cfg(dir / "config.json");
    LlamaConfig c;
    c.modelType = cfg.value<std::string>("model_type", "");
    if (!isLlamaModelType(c.modelType))
        throw Error(quoted(cfg.path()) + ": model_type '" + c.modelType +
                    "' is not a Llama-style decoder (llama, mistral, qwen2, qwen3, gemma3_text)");
    refuseUnsupported(cfg);
    const std::string& type = c.modelType;
    c.gemma = c.normPlusOne = type == "gemma3_text";
    c.hiddenSize = cfg.positive("hidden_size");
    c.layers = cfg.layerCount("num_hidden_layers");
    c.heads = cfg.positive("num_attention_heads");
    c.kvHeads = cfg.value<int>("num_key_value_heads", c.heads);
    c.intermediateSize = cfg.positive("intermediate_size");
    c.maxPositions = cfg.positive("max_position_embeddings");
    c.vocabSize = cfg.positive("vocab_size");
    if (cfg.has("head_dim"))
        c.headDim = cfg.positive("head_dim");
    else if (type == "qwen3" || c.gemma)
        c.headDim = c.gemma ? 256 : 128; // their config classes' defaults
    else if (c.hiddenSize % c.heads == 0)
        c.headDim = c.hiddenSize / c.heads;
    else
        throw Error(quoted(cfg.path()) + ": hidden_size " + std::to_string(c.hiddenSize) +
                    " is not divisible by " + std::to_string(c.heads) + " heads (and there is no head_dim)");
    if (c.kvHeads <= 0 || c.heads % c.kvHeads != 0)
        throw Error(quoted(cfg.path()) + ": " + std::to_string(c.heads) + " attention heads cannot share " +
                    std::to_string(c.kvHeads) + " key/value heads (num_key_value_heads)");
    checkLlamaWidths(c, quoted(cfg.path()));
    c.rmsNormEps = cfg.value<float>("rms_norm_eps", 1e-6f);
    c.activation = parseActivation(c.gemma ? cfg.value<std::string>("hidden_activation", "gelu_pytorch_tanh")
                                           : cfg.value<std::string>("hidden_act", "silu"));
    const bool bias = type != "mistral" && cfg.value<bool>("attention_bias", false); // Mistral: never
    c.attentionBias = type == "qwen2" || bias;
    c.outputBias = type != "qwen2" && bias;
    c.mlpBias = type == "llama" && cfg.value<bool>("mlp_bias", false);
    c.qkNorm = type == "qwen3" || c.gemma;
    c.tied = cfg.value<bool>("tie_word_embeddings", c.gemma);
    c.queryScale = c.gemma ? 1.0f / std::sqrt(cfg.value<float>("query_pre_attn_scalar", 256.0f))
                           : 1.0f / std::sqrt(static_cast<float>(c.headDim));
    if (!(c.queryScale > 0) || !std::isfinite(c.queryScale))
        throw Error(quoted(cfg.path()) + ": query_pre_attn_scalar must be positive");
    c.finalSoftcap = c.gemma ? cfg.value<float>("final_logit_softcapping", 0.0f) : 0.0f;
    readRopes(cfg, c);
    readWindows(cfg, c);
    c.eosIds = idList(cfg, "eos_token_id");
    c.bosId = cfg.value<int>("bos_token_id", -1);
    if (std::filesystem::exists(dir / "generation_config.json", ec)) { // what generate() reads
        const JsonConfig gen(dir / "generation_config.json");
        if (gen.has("eos_token_id")) c.eosIds = idList(gen, "eos_token_id");
        c.bosId = gen.value<int>("bos_token_id", c.bosId);
    }
    return c;
}

void checkLlamaWidths(const LlamaConfig& c, const std::string& where) {
    const std::pair<const char*, int> widths[] = {
        {"hidden size", c.hiddenSize}, {"feed-forward size", c.intermediateSize},
        {"head size", c.headDim},      {"vocabulary size", c.vocabSize},
        {"attention heads", c.heads},  {"key/value heads", c.kvHeads}};
    for (const auto& [what, value] : widths)
        if (value > kMaxModelWidth)
            throw Error(where + ": a " + what + " of " + std::to_string(value) + " is more than " +
                        std::to_string(kMaxModelWidth) + " (no model is that wide)");
}

std::vector<float> ropeInverseFrequencies(const RopeSpec& rope, int rotaryDim) {
    std::vector<float> f = RotaryEmbedding::defaultInverseFrequencies(rope.theta, rotaryDim);
    if (rope.type == "linear") {
        for (float& x : f)
            x /= rope.factor;
    } else if (rope.type == "llama3") { // transformers' _compute_llama3_parameters, in float32
        const float old = static_cast<float>(rope.originalMaxPositions);
        const float lowWavelen = old / rope.lowFreqFactor, highWavelen = old / rope.highFreqFactor;
        for (float& x : f) {
            const float wavelen = 2.0f * std::numbers::pi_v<float> / x;
            if (wavelen > lowWavelen) {
                x /= rope.factor;
            } else if (!(wavelen < highWavelen)) { // medium: between the two, smoothed
                const float smooth =
                    (old / wavelen - rope.lowFreqFactor) / (rope.highFreqFactor - rope.lowFreqFactor);
                x = (1 - smooth) * x / rope.factor + smooth * x;
            }
        }
    }
    for (size_t i = 0; i < rope.freqFactors.size() && i < f.size(); ++i)
        f[i] /= rope.freqFactors[i];
    return f;
}

} // namespace attnlens
