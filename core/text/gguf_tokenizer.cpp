#include "core/text/gguf_tokenizer.h"

#include "core/text/sentencepiece_tokenizer.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <cstring>
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

// SentencePiece's ModelProto in protobuf's wire format (sentencepiece_model.proto's field numbers).
class ProtoWriter {
public:
    void varint(int field, uint64_t v) { key(field, 0), raw(v); }
    void fixed32(int field, float v) {
        key(field, 5);
        uint32_t bits = 0;
        std::memcpy(&bits, &v, 4);
        for (int i = 0; i < 4; ++i)
            m_bytes += char((bits >> (8 * i)) & 0xFF);
    }
    void bytes(int field, const std::string& v) { key(field, 2), raw(v.size()), m_bytes += v; }
    const std::string& str() const { return m_bytes; }

private:
    void key(int field, int wire) { raw(uint64_t(field) << 3 | uint64_t(wire)); }
    void raw(uint64_t v) {
        for (; v >= 0x80; v >>= 7)
            m_bytes += char((v & 0x7F) | 0x80);
        m_bytes += char(v);
    }
    std::string m_bytes;
};

const std::vector<double>& numbers(const GgufFile& f, const std::string& key, size_t count) {
    const GgufValue* v = f.value(key);
    if (!v || v->type != GgufValueType::Array || v->numbers.size() != count)
        throw Error("'" + f.path().string() + "': " + key + " is missing or has not one number per token");
    return v->numbers;
}

int64_t tokenId(const GgufFile& f, const char* key, size_t tokens) {
    const int64_t id = f.integer(key).value_or(-1);
    return id >= 0 && id < int64_t(tokens) ? id : -1;
}

// A SentencePiece vocabulary (tokenizer.ggml.model "llama", written by llama.cpp's converter from the
// model's tokenizer.model): pieces, scores and types (1 normal, 2 unknown, 3 control, 4 user-defined, 5
// unused, 6 byte — SentencePiece's own numbering) back into the ModelProto they came from: a BPE model
// with byte fallback where byte pieces exist, the identity normalizer, whitespace escaped as "▁", the dummy
// prefix as add_space_prefix says (default true). Control, unknown and user-defined pieces are found in
// the raw text first, as the Hugging Face tokenizer converted from that file finds its added tokens.
std::shared_ptr<const TextTokenizer> sentencePieceVocabulary(const GgufFile& f, const std::string& where) {
    const std::vector<std::string>& tokens = strings(f, "tokenizer.ggml.tokens");
    const std::vector<double>& scores = numbers(f, "tokenizer.ggml.scores", tokens.size());
    const std::vector<double>& types = numbers(f, "tokenizer.ggml.token_type", tokens.size());
    ProtoWriter model, trainer, normalizer;
    SentencePieceSettings s;
    s.added.emplace();
    int64_t unk = tokenId(f, "tokenizer.ggml.unknown_token_id", tokens.size());
    bool bytePieces = false;
    for (size_t id = 0; id < tokens.size(); ++id) {
        const int type = int(types[id]) >= 1 && int(types[id]) <= 6 ? int(types[id]) : 1;
        ProtoWriter piece;
        piece.bytes(1, tokens[id]);
        piece.fixed32(2, float(scores[id]));
        piece.varint(3, uint64_t(type));
        model.bytes(1, piece.str());
        if (type == 2 && unk < 0) unk = int64_t(id);
        bytePieces |= type == 6;
        if (type == 2 || type == 3 || type == 4) s.added->push_back({tokens[id], int(id), type != 4});
    }
    if (unk < 0) throw Error(where + ": the SentencePiece vocabulary has no unknown piece");
    trainer.varint(3, 2); // BPE
    trainer.varint(4, tokens.size());
    trainer.varint(35, bytePieces);
    trainer.varint(26, 1); // allow_whitespace_only_pieces
    trainer.varint(40, uint64_t(unk));
    for (const auto& [field, key] :
         {std::pair{41, "tokenizer.ggml.bos_token_id"}, std::pair{42, "tokenizer.ggml.eos_token_id"},
          std::pair{43, "tokenizer.ggml.padding_token_id"}})
        trainer.varint(field, uint64_t(tokenId(f, key, tokens.size()))); // -1 (none): two's complement
    model.bytes(2, trainer.str());
    normalizer.bytes(1, "identity");
    normalizer.varint(3, f.boolean("tokenizer.ggml.add_space_prefix").value_or(true));
    normalizer.varint(4, 0); // remove_extra_whitespaces
    normalizer.varint(5, 1); // escape_whitespaces
    model.bytes(3, normalizer.str());
    s.addBos = f.boolean("tokenizer.ggml.add_bos_token").value_or(true);
    s.addEos = f.boolean("tokenizer.ggml.add_eos_token").value_or(false);
    if (const int64_t bos = tokenId(f, "tokenizer.ggml.bos_token_id", tokens.size()); bos >= 0)
        s.bos = tokens[size_t(bos)];
    if (const int64_t eos = tokenId(f, "tokenizer.ggml.eos_token_id", tokens.size()); eos >= 0)
        s.eos = tokens[size_t(eos)];
    return SentencePieceTokenizer::fromModel(model.str(), s, where + " (its tokenizer.ggml.* metadata)");
}

} // namespace

std::shared_ptr<const TextTokenizer> ggufTokenizer(const GgufFile& f) {
    const std::string where = "'" + f.path().string() + "'";
    const std::string model = f.string("tokenizer.ggml.model").value_or("");
    if (model == "llama") return sentencePieceVocabulary(f, where);
    if (model != "gpt2")
        throw Error(where + ": tokenizer.ggml.model '" + model +
                    "' is not read by this version (byte-level BPE 'gpt2' and SentencePiece 'llama' are)");
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
