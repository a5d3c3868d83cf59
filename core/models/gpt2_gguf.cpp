#include "core/models/gpt2_gguf.h"

#include "core/models/gguf_names.h"
#include "core/util/error.h"

#include <map>

namespace attnlens {

Gpt2Config gpt2ConfigFromGguf(const GgufFile& f) {
    const std::string where = "'" + f.path().string() + "'";
    if (f.string("general.architecture").value_or("") != "gpt2")
        throw Error(where + ": not a GPT-2 file (general.architecture)");
    Gpt2Config c;
    c.embd = f.positive("gpt2.embedding_length");
    c.layers = f.layerCount("gpt2.block_count");
    c.heads = f.positive("gpt2.attention.head_count");
    c.inner = f.positive("gpt2.feed_forward_length", 4 * c.embd);
    c.positions = f.positive("gpt2.context_length");
    if (c.embd % c.heads != 0)
        throw Error(where + ": embedding_length " + std::to_string(c.embd) + " is not divisible by " +
                    std::to_string(c.heads) + " heads");
    const GgufTensor* embed = f.find("token_embd.weight");
    if (!embed || embed->shape.size() != 2) throw Error(where + ": token_embd.weight is missing");
    c.vocabSize = f.positive("gpt2.vocab_size", static_cast<int>(embed->shape[0]));
    c.layerNormEps = static_cast<float>(f.number("gpt2.attention.layer_norm_epsilon").value_or(1e-5));
    c.activation = Activation::GeluTanh; // gelu_new, as llama.cpp runs GPT-2
    const int64_t eos = f.integer("tokenizer.ggml.eos_token_id").value_or(-1);
    c.eosTokenId = eos >= 0 && eos < c.vocabSize ? static_cast<int>(eos) : -1;
    return c;
}

std::string gpt2TensorName(const std::string& name) {
    static const std::map<std::string, std::string> kTop = {{"token_embd.weight", "wte.weight"},
                                                            {"position_embd.weight", "wpe.weight"},
                                                            {"output_norm.weight", "ln_f.weight"},
                                                            {"output_norm.bias", "ln_f.bias"}};
    if (const auto it = kTop.find(name); it != kTop.end()) return it->second;
    static const std::map<std::string, std::string> kBlock = {
        {"attn_norm", "ln_1"}, {"attn_qkv", "attn.c_attn"}, {"attn_output", "attn.c_proj"},
        {"ffn_norm", "ln_2"},  {"ffn_up", "mlp.c_fc"},      {"ffn_down", "mlp.c_proj"}};
    const auto n = splitGgufBlockName(name);
    if (!n) return {};
    const auto it = kBlock.find(n->part);
    if (it == kBlock.end()) return {};
    return "h." + n->layer + "." + it->second + "." + n->kind;
}

std::shared_ptr<const Gpt2Model> loadGpt2Gguf(const GgufFile& f, const Callbacks& callbacks) {
    return Gpt2Model::build(gpt2ConfigFromGguf(f), f.toTensorFile(gpt2TensorName), "", false, f.path(),
                            callbacks);
}

} // namespace attnlens
