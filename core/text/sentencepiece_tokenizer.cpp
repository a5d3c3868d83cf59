#include "core/text/sentencepiece_tokenizer.h"

#include "core/io/json_file.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"

#include <sentencepiece_processor.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace attnlens {

namespace {

constexpr std::uintmax_t kMaxModelBytes = 256u << 20;

} // namespace

std::string readSentencePieceModel(const std::filesystem::path& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw Error(quoted(path) + ": cannot be read");
    if (size > kMaxModelBytes) throw Error(quoted(path) + ": too large for a SentencePiece model");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in) throw Error(quoted(path) + ": cannot be read");
    return bytes.str();
}

// The same model with normalizer_spec.add_dummy_prefix = false: a ModelProto may carry its field 3
// (normalizer_spec) again, and protobuf merges the later occurrence into the first, so appending
// {field 3: {field 3 (add_dummy_prefix): false}} switches the prefix off and keeps every other setting.
std::string sentencePieceWithoutDummyPrefix(std::string serialized) {
    serialized += std::string("\x1A\x02\x18\x00", 4);
    return serialized;
}

namespace {

void loadProcessor(sentencepiece::SentencePieceProcessor& sp, const std::string& bytes,
                   const std::string& where) {
    const auto status = sp.LoadFromSerializedProto(bytes);
    if (!status.ok()) throw Error(where + ": not a SentencePiece model (" + status.ToString() + ")");
}

} // namespace

// tokenizer_config.json's special-token fields are a string or {"content": …}.
std::string specialTokenContent(const Json& config, const char* key) {
    if (!config.contains(key)) return "";
    const Json& v = config[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string())
        return v["content"].get<std::string>();
    return "";
}

namespace {

bool flag(const Json& object, const char* key, bool fallback, const std::string& where) {
    if (!object.is_object() || !object.contains(key) || object[key].is_null()) return fallback;
    if (!object[key].is_boolean()) throw Error(where + ": '" + key + "' is not true or false");
    return object[key].get<bool>();
}

} // namespace

std::optional<std::vector<AddedToken>> addedTokensDecoder(const Json& config, const std::string& where) {
    if (!config.contains("added_tokens_decoder") || !config["added_tokens_decoder"].is_object()) return {};
    std::vector<AddedToken> added;
    for (const auto& [key, a] : config["added_tokens_decoder"].items()) {
        int id = -1;
        if (std::sscanf(key.c_str(), "%d", &id) != 1 || id < 0 || !a.is_object() || !a.contains("content") ||
            !a["content"].is_string())
            throw Error(where + ": added token '" + key + "' has no id or no content");
        added.push_back({a["content"].get<std::string>(), id, flag(a, "special", false, where),
                         flag(a, "lstrip", false, where), flag(a, "rstrip", false, where),
                         flag(a, "single_word", false, where)});
    }
    return added;
}

SentencePieceTokenizer::SentencePieceTokenizer()
    : m_sp(std::make_unique<sentencepiece::SentencePieceProcessor>()),
      m_spNoPrefix(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

bool SentencePieceTokenizer::present(const std::filesystem::path& dir) {
    std::error_code ec;
    return std::filesystem::exists(dir / "tokenizer.model", ec);
}

std::shared_ptr<const SentencePieceTokenizer> SentencePieceTokenizer::load(const std::filesystem::path& dir) {
    const auto path = dir / "tokenizer.model";
    if (!present(dir)) throw Error(quoted(dir) + ": tokenizer.model is missing");
    const std::string bytes = readSentencePieceModel(path);

    Json config = Json::object();
    std::error_code ec;
    const auto configPath = dir / "tokenizer_config.json";
    const std::string where = quoted(configPath);
    if (std::filesystem::exists(configPath, ec)) config = readJsonFile(configPath);
    if (!config.is_object()) throw Error(where + ": not a JSON object");
    SentencePieceSettings s;
    s.legacy = flag(config, "legacy", true, where);
    s.addBos = flag(config, "add_bos_token", true, where);
    s.addEos = flag(config, "add_eos_token", false, where);
    s.bos = specialTokenContent(config, "bos_token");
    s.eos = specialTokenContent(config, "eos_token");
    s.added = addedTokensDecoder(config, where);
    return fromModel(bytes, s, quoted(path));
}

std::shared_ptr<const SentencePieceTokenizer>
SentencePieceTokenizer::fromModel(const std::string& bytes, const SentencePieceSettings& s,
                                  const std::string& where) {
    std::shared_ptr<SentencePieceTokenizer> tok(new SentencePieceTokenizer());
    loadProcessor(*tok->m_sp, bytes, where);
    loadProcessor(*tok->m_spNoPrefix, sentencePieceWithoutDummyPrefix(bytes), where);
    const int n = tok->m_sp->GetPieceSize();
    if (n <= 0) throw Error(where + ": the model has no pieces");
    tok->m_special.assign(size_t(n), false);
    for (int id = 0; id < n; ++id)
        tok->m_tokens.push_back(tok->m_sp->IdToPiece(id));
    tok->m_legacy = s.legacy, tok->m_addBos = s.addBos, tok->m_addEos = s.addEos;

    std::vector<AddedToken> added;
    if (s.added) {
        added = *s.added;
        for (const AddedToken& a : added)
            if (a.id < 0 || a.id >= n)
                throw Error(where + ": added token '" + std::to_string(a.id) + "' (" + a.content +
                            ") has no id in the model's " + std::to_string(n) + " pieces");
    } else {
        for (int id = 0; id < n; ++id)
            if (tok->m_sp->IsControl(id) || tok->m_sp->IsUnknown(id))
                added.push_back({tok->m_tokens[size_t(id)], id, true});
    }
    for (const AddedToken& a : added)
        tok->m_special[size_t(a.id)] = a.special;
    tok->m_added = AddedTokens(std::move(added));

    auto idOf = [&](const std::string& content, int fallback) {
        const int id = content.empty() ? -1 : tok->m_sp->PieceToId(content);
        return id >= 0 && id < n && tok->m_tokens[size_t(id)] == content ? id : fallback;
    };
    tok->m_bos = idOf(s.bos, tok->m_sp->bos_id());
    tok->m_eos = idOf(s.eos, tok->m_sp->eos_id());
    return tok;
}

void SentencePieceTokenizer::encodeStretch(std::string_view text, bool opensText,
                                           std::vector<int>& ids) const {
    const auto& sp = m_legacy || opensText ? *m_sp : *m_spNoPrefix;
    std::vector<int> out;
    const auto status = sp.Encode(std::string(text), &out);
    if (!status.ok()) throw Error("tokenizer.model: cannot encode the text (" + status.ToString() + ")");
    ids.insert(ids.end(), out.begin(), out.end());
}

TextEncoding SentencePieceTokenizer::encodePlain(std::string_view text) const {
    if (!unicode::isValidUtf8(text)) throw Error("the text is not valid UTF-8");
    std::vector<int> ids;
    m_added.split(
        text,
        [&](size_t begin, size_t end) { encodeStretch(text.substr(begin, end - begin), begin == 0, ids); },
        [&](const AddedToken& t) { ids.push_back(t.id); });
    return framed({}, ids);
}

TextEncoding SentencePieceTokenizer::encode(std::string_view text) const {
    std::vector<int> prefix, suffix;
    if (m_addBos && m_bos >= 0) prefix.push_back(m_bos);
    if (m_addEos && m_eos >= 0) suffix.push_back(m_eos);
    return framed(prefix, encodePlain(text).ids, suffix);
}

const std::string& SentencePieceTokenizer::token(int id) const {
    static const std::string none;
    return id >= 0 && id < vocabSize() ? m_tokens[size_t(id)] : none;
}

bool SentencePieceTokenizer::framesText(int id) const {
    return (m_addBos && id == m_bos) || (m_addEos && id == m_eos);
}

std::string SentencePieceTokenizer::tokenText(int id) const {
    const std::string& t = token(id);
    if (id >= 0 && id < vocabSize() && m_special[size_t(id)]) return t;
    return sentencePieceText(t);
}

} // namespace attnlens
