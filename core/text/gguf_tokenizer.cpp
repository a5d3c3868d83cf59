#include "core/text/gguf_tokenizer.h"

#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <map>

namespace attnlens {

namespace {

// llama.cpp's split expressions per pre-tokenizer name (llama-vocab.cpp), applied one after the other.
const std::map<std::string, std::vector<std::string>>& splitRegexes() {
    static const std::string llama3 =
        R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    static const std::string qwen2 =
        R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    static const std::string gpt2 =
        R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
    static const std::map<std::string, std::vector<std::string>> regexes = {
        {"llama3", {llama3}},
        {"llama-v3", {llama3}},
        {"llama-bpe", {llama3}},
        {"qwen2", {qwen2}},
        {"smollm", {R"(\p{N})", gpt2}},
        {"gpt-2", {gpt2}},
        {"default", {R"([\p{P}\$\+<=>\^~\|]+)", gpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
    };
    return regexes;
}

const std::vector<std::string>& strings(const GgufFile& f, const std::string& key) {
    const GgufValue* v = f.value(key);
    if (!v || v->type != GgufValueType::Array || v->elementType != GgufValueType::String)
        throw Error("'" + f.path().string() + "': " + key + " is missing or not a list of strings");
    return v->strings;
}

} // namespace

std::shared_ptr<const HfTokenizer> ggufTokenizer(const GgufFile& f) {
    const std::string where = "'" + f.path().string() + "'";
    const std::string model = f.string("tokenizer.ggml.model").value_or("");
    if (model != "gpt2")
        throw Error(
            where + ": tokenizer.ggml.model '" + model +
            "' is not read yet (byte-level BPE vocabularies, 'gpt2', are; SentencePiece ones, 'llama', not)");
    const std::string pre = f.string("tokenizer.ggml.pre").value_or("default");
    const auto regexes = splitRegexes().find(pre);
    if (regexes == splitRegexes().end())
        throw Error(where + ": pre-tokenizer '" + pre +
                    "' (tokenizer.ggml.pre) is not known to this version");
    const std::vector<std::string>& tokens = strings(f, "tokenizer.ggml.tokens");
    const std::vector<std::string>& merges = strings(f, "tokenizer.ggml.merges");
    const GgufValue* types = f.value("tokenizer.ggml.token_type");
    if (types && types->numbers.size() != tokens.size())
        throw Error(where + ": " + std::to_string(types ? types->numbers.size() : 0) + " token types for " +
                    std::to_string(tokens.size()) + " tokens");
    Json vocab = Json::object(), added = Json::array();
    for (size_t id = 0; id < tokens.size(); ++id) {
        const int type = types ? static_cast<int>(types->numbers[id]) : 1;
        if (type == 3 || type == 4)
            added.push_back({{"id", id}, {"content", tokens[id]}, {"special", type == 3}});
        else if (!vocab.contains(tokens[id]))
            vocab[tokens[id]] = id;
    }
    Json splits = Json::array();
    for (const std::string& r : regexes->second)
        splits.push_back(
            {{"type", "Split"}, {"pattern", {{"Regex", r}}}, {"behavior", "Isolated"}, {"invert", false}});
    splits.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}});
    Json j = {{"model",
               {{"type", "BPE"},
                {"vocab", vocab},
                {"merges", merges},
                {"ignore_merges", regexes->second.front().find(R"(\p{N}{1,3})") != std::string::npos}}},
              {"added_tokens", added},
              {"normalizer", pre == "qwen2" ? Json{{"type", "NFC"}} : Json()},
              {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", splits}}},
              {"decoder", {{"type", "ByteLevel"}}}};
    const int bos = static_cast<int>(f.integer("tokenizer.ggml.bos_token_id").value_or(-1));
    if (f.boolean("tokenizer.ggml.add_bos_token").value_or(false) && bos >= 0 && bos < int(tokens.size()))
        j["post_processor"] = {
            {"type", "TemplateProcessing"},
            {"single",
             {{{"SpecialToken", {{"id", tokens[size_t(bos)]}, {"type_id", 0}}}},
              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"special_tokens",
             {{tokens[size_t(bos)],
               {{"id", tokens[size_t(bos)]}, {"ids", {bos}}, {"tokens", {tokens[size_t(bos)]}}}}}}};
    return HfTokenizer::fromJson(j, where + " (its tokenizer.ggml.* metadata)",
                                 static_cast<int>(f.integer("tokenizer.ggml.eos_token_id").value_or(-1)));
}

} // namespace attnlens
