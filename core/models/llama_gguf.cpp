#include "core/models/llama_gguf.h"

#include "core/models/gguf_names.h"
#include "core/util/error.h"

#include <cmath>
#include <map>

namespace attnlens {

namespace {

std::string where(const GgufFile& f) {
    return "'" + f.path().string() + "'";
}

// The rope of every layer: rope.freq_base and rope.scaling.{type, factor}.
RopeSpec ropeOf(const GgufFile& f, const std::string& a) {
    RopeSpec rope;
    rope.theta = static_cast<float>(f.number(a + ".rope.freq_base").value_or(10000.0));
    if (!(rope.theta > 0)) throw Error(where(f) + ": " + a + ".rope.freq_base must be positive");
    // older files say rope.scale_linear only; the factor is transformers' (positions ÷ factor)
    const std::string type =
        f.string(a + ".rope.scaling.type").value_or(f.value(a + ".rope.scale_linear") ? "linear" : "none");
    if (type == "linear") {
        const double factor =
            f.number(a + ".rope.scaling.factor").value_or(f.number(a + ".rope.scale_linear").value_or(1.0));
        if (!(factor > 0)) throw Error(where(f) + ": " + a + ".rope.scaling.factor must be positive");
        rope.type = "linear";
        rope.factor = static_cast<float>(factor);
    } else if (type != "none") {
        throw Error(where(f) + ": rope scaling '" + type + "' (" + a +
                    ".rope.scaling.type) is not supported in GGUF files yet (none and linear are)");
    }
    return rope;
}

// rope_freqs.weight [head_dim / 2]: llama.cpp's form of llama3 scaling, each inverse frequency divided by
// its factor (the converter computes them from rope_scaling as transformers' llama3 rope does).
std::vector<float> freqFactorsOf(const GgufFile& f, int headDim) {
    const GgufTensor* t = f.find("rope_freqs.weight");
    if (!t) return {};
    if (t->shape.size() != 1 || t->shape[0] != headDim / 2)
        throw Error(where(f) + ": rope_freqs.weight should hold head_dim / 2 = " +
                    std::to_string(headDim / 2) + " factors");
    const Tensor factors = f.load(*t);
    std::vector<float> out(factors.data(), factors.data() + factors.numel());
    for (float x : out)
        if (!(x > 0) || !std::isfinite(x))
            throw Error(where(f) + ": rope_freqs.weight holds a factor that is not a positive number");
    return out;
}

// Gemma 3 as llama.cpp runs it (the converter wrote its norms as 1 + w; what the metadata cannot say is
// llama.cpp's fixed choice): every 6th layer full (attention.sliding_window_pattern where a file has it),
// the sliding layers' rope base rope.freq_base_swa (default 10 000, unscaled), query scale head_dim^-0.5
// (27B, 62 layers: (hidden / heads)^-0.5), GeGLU with tanh GELU, √hidden embedding scale, q/k norms.
void gemmaConfig(const GgufFile& f, const std::string& a, LlamaConfig& c) {
    c.modelType = "gemma3_text";
    c.gemma = true;
    c.normPlusOne = false;
    c.activation = Activation::GeluTanh;
    if (f.number(a + ".attn_logit_softcapping").value_or(0.0) > 0)
        throw Error(where(f) + ": attention logit softcapping (Gemma 2) is not supported");
    c.finalSoftcap = static_cast<float>(f.number(a + ".final_logit_softcapping").value_or(0.0));
    c.queryScale = 1.0f / std::sqrt(static_cast<float>(c.layers == 62 ? c.hiddenSize / c.heads : c.headDim));
    c.localRope = RopeSpec{};
    c.localRope.theta = static_cast<float>(f.number(a + ".rope.freq_base_swa").value_or(10000.0));
    const int window = f.positive(a + ".attention.sliding_window", 4096);
    const GgufValue* pattern = f.value(a + ".attention.sliding_window_pattern");
    if (pattern && pattern->type == GgufValueType::Array && pattern->numbers.size() != size_t(c.layers))
        throw Error(where(f) + ": " + a + ".attention.sliding_window_pattern has " +
                    std::to_string(pattern->numbers.size()) + " entries for " + std::to_string(c.layers) +
                    " layers");
    const int period = pattern && pattern->type != GgufValueType::Array
                           ? f.positive(a + ".attention.sliding_window_pattern")
                           : 6;
    for (int l = 0; l < c.layers; ++l) {
        const bool sliding = pattern && pattern->type == GgufValueType::Array
                                 ? pattern->numbers[size_t(l)] != 0
                                 : (l + 1) % period != 0;
        c.sliding[size_t(l)] = sliding;
        c.windows[size_t(l)] = sliding ? window : 0;
    }
}

int eosOf(const GgufFile& f, const std::string& key) {
    const auto id = f.integer(key);
    return id && *id >= 0 && *id < (int64_t{1} << 31) ? static_cast<int>(*id) : -1;
}

// general.architecture → the transformers model_type it is run as.
const std::map<std::string, std::string>& llamaArchitectures() {
    static const std::map<std::string, std::string> kTypes = {
        {"llama", "llama"}, {"qwen2", "qwen2"}, {"qwen3", "qwen3"}, {"gemma3", "gemma3_text"}};
    return kTypes;
}

} // namespace

bool isLlamaGgufArchitecture(const std::string& architecture) {
    return llamaArchitectures().count(architecture) != 0;
}

LlamaConfig llamaConfigFromGguf(const GgufFile& f) {
    const std::string a = f.string("general.architecture").value_or("");
    const auto& kTypes = llamaArchitectures();
    const auto type = kTypes.find(a);
    if (type == kTypes.end())
        throw Error(where(f) + ": architecture '" + a +
                    "' (general.architecture) is not one this version opens "
                    "from GGUF (llama — also Mistral and SmolLM —, qwen2, qwen3, gemma3)");
    LlamaConfig c;
    c.modelType = type->second;
    c.hiddenSize = f.positive(a + ".embedding_length");
    c.layers = f.layerCount(a + ".block_count");
    c.heads = f.positive(a + ".attention.head_count");
    c.kvHeads = f.positive(a + ".attention.head_count_kv", c.heads);
    c.intermediateSize = f.positive(a + ".feed_forward_length");
    c.maxPositions = f.positive(a + ".context_length");
    if (!f.value(a + ".attention.key_length") && c.hiddenSize % c.heads != 0)
        throw Error(where(f) + ": embedding_length " + std::to_string(c.hiddenSize) +
                    " is not divisible by " + std::to_string(c.heads) +
                    " heads (and there is no attention.key_length)");
    c.headDim = f.positive(a + ".attention.key_length", c.hiddenSize / c.heads);
    if (f.positive(a + ".attention.value_length", c.headDim) != c.headDim ||
        f.positive(a + ".rope.dimension_count", c.headDim) != c.headDim)
        throw Error(where(f) +
                    ": value_length or rope.dimension_count other than key_length is not supported");
    if (c.heads % c.kvHeads != 0)
        throw Error(where(f) + ": " + std::to_string(c.heads) + " attention heads cannot share " +
                    std::to_string(c.kvHeads) + " key/value heads");
    const GgufTensor* embed = f.find("token_embd.weight");
    if (!embed || embed->shape.size() != 2) throw Error(where(f) + ": token_embd.weight is missing");
    c.vocabSize = f.positive(a + ".vocab_size", static_cast<int>(embed->shape[0]));
    checkLlamaWidths(c, where(f));
    c.rmsNormEps = static_cast<float>(f.number(a + ".attention.layer_norm_rms_epsilon").value_or(1e-6));
    c.activation = Activation::Silu;
    c.attentionBias = f.find("blk.0.attn_q.bias") != nullptr;
    c.outputBias = f.find("blk.0.attn_output.bias") != nullptr;
    c.mlpBias = f.find("blk.0.ffn_gate.bias") != nullptr;
    c.qkNorm = f.find("blk.0.attn_q_norm.weight") != nullptr;
    c.tied = f.find("output.weight") == nullptr;
    c.queryScale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    c.rope = c.localRope = ropeOf(f, a);
    c.rope.freqFactors = freqFactorsOf(f, c.headDim);
    c.windows.assign(static_cast<size_t>(c.layers), 0);
    c.sliding.assign(static_cast<size_t>(c.layers), 0);
    if (a == "gemma3") gemmaConfig(f, a, c);
    c.ropeInterleaved = a == "llama"; // its q/k rows were reordered for llama.cpp's rope on adjacent pairs
    if (const int eos = eosOf(f, "tokenizer.ggml.eos_token_id"); eos >= 0) c.eosIds = {eos};
    if (const int eot = eosOf(f, "tokenizer.ggml.eot_token_id");
        eot >= 0 && (c.eosIds.empty() || eot != c.eosIds[0]))
        c.eosIds.push_back(eot);
    c.bosId = eosOf(f, "tokenizer.ggml.bos_token_id");
    return c;
}

std::string transformersTensorName(const std::string& name) {
    return transformersTensorName(name, "llama");
}

std::function<std::string(const std::string&)> transformersTensorNames(const std::string& architecture) {
    return [architecture](const std::string& name) { return transformersTensorName(name, architecture); };
}

std::string transformersTensorName(const std::string& name, const std::string& architecture) {
    static const std::map<std::string, std::string> kTop = {
        {"token_embd.weight", "model.embed_tokens.weight"},
        {"output_norm.weight", "model.norm.weight"},
        {"output.weight", "lm_head.weight"}};
    if (const auto it = kTop.find(name); it != kTop.end()) return it->second;
    static const std::map<std::string, std::string> kBlock = {
        {"attn_norm", "input_layernorm"},    {"ffn_norm", "post_attention_layernorm"},
        {"attn_q", "self_attn.q_proj"},      {"attn_k", "self_attn.k_proj"},
        {"attn_v", "self_attn.v_proj"},      {"attn_output", "self_attn.o_proj"},
        {"attn_q_norm", "self_attn.q_norm"}, {"attn_k_norm", "self_attn.k_norm"},
        {"ffn_gate", "mlp.gate_proj"},       {"ffn_up", "mlp.up_proj"},
        {"ffn_down", "mlp.down_proj"}};
    // Gemma's four norms per layer: ffn_norm is the one before the MLP
    static const std::map<std::string, std::string> kGemma = {
        {"post_attention_norm", "post_attention_layernorm"},
        {"ffn_norm", "pre_feedforward_layernorm"},
        {"post_ffw_norm", "post_feedforward_layernorm"}};
    const auto n = splitGgufBlockName(name);
    if (!n) return {};
    const auto gemma = architecture == "gemma3" ? kGemma.find(n->part) : kGemma.end();
    const auto it = gemma != kGemma.end() ? gemma : kBlock.find(n->part);
    if (it == kBlock.end()) return {};
    return "model.layers." + n->layer + "." + it->second + "." + n->kind;
}

} // namespace attnlens
