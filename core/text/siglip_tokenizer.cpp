#include "core/text/siglip_tokenizer.h"

#include "core/io/json_file.h"
#include "core/text/sentencepiece_tokenizer.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"

#include <sentencepiece_processor.h>

#include <algorithm>

namespace attnlens {

namespace {

const std::string kUnderline = "\xE2\x96\x81"; // ▁

// Python's string.punctuation.
bool isAsciiPunctuation(char32_t c) {
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E);
}

// SiglipTokenizer.canonicalize_text: punctuation removed, re.sub(r"\s+", " "), strip().
std::string canonicalize(std::string_view text) {
    std::u32string out;
    bool space = false;
    for (char32_t c : unicode::decodeUtf8(text)) {
        if (isAsciiPunctuation(c)) continue;
        if (unicode::isPythonSpace(c)) {
            space = true;
            continue;
        }
        if (space && !out.empty()) out.push_back(U' ');
        space = false;
        out.push_back(c);
    }
    return unicode::encodeUtf8(out);
}

int configInt(const Json& config, const char* key, int fallback, const std::string& where) {
    if (!config.contains(key) || config[key].is_null()) return fallback;
    if (!config[key].is_number_integer()) throw Error(where + ": '" + key + "' is not an integer");
    const auto v = config[key].get<int64_t>();
    return v > 0 && v < (1 << 20) ? static_cast<int>(v) : fallback; // "1e30"-style "no limit" values
}

} // namespace

SiglipTokenizer::SiglipTokenizer() : m_sp(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}

SiglipTokenizer::~SiglipTokenizer() = default;

bool SiglipTokenizer::present(const std::filesystem::path& dir) {
    std::error_code ec;
    return std::filesystem::exists(dir / "spiece.model", ec);
}

std::shared_ptr<const SiglipTokenizer> SiglipTokenizer::load(const std::filesystem::path& dir) {
    const auto path = dir / "spiece.model";
    if (!present(dir)) throw Error(quoted(dir) + ": spiece.model is missing (SigLIP's tokenizer)");
    std::shared_ptr<SiglipTokenizer> tok(new SiglipTokenizer());
    const auto status =
        tok->m_sp->LoadFromSerializedProto(sentencePieceWithoutDummyPrefix(readSentencePieceModel(path)));
    if (!status.ok()) throw Error(quoted(path) + ": not a SentencePiece model (" + status.ToString() + ")");
    const int n = tok->m_sp->GetPieceSize();
    if (n <= 0) throw Error(quoted(path) + ": the model has no pieces");
    for (int id = 0; id < n; ++id)
        tok->m_tokens.push_back(tok->m_sp->IdToPiece(id));

    Json config = Json::object();
    std::error_code ec;
    const auto configPath = dir / "tokenizer_config.json";
    const std::string where = quoted(configPath);
    if (std::filesystem::exists(configPath, ec)) config = readJsonFile(configPath);
    if (!config.is_object()) throw Error(where + ": not a JSON object");
    if (config.contains("do_lower_case") && config["do_lower_case"].is_boolean())
        tok->m_lower = config["do_lower_case"].get<bool>();
    tok->m_maxLength = configInt(config, "model_max_length", 64, where);
    auto idOf = [&](const char* key, const std::string& fallback) {
        std::string content = specialTokenContent(config, key);
        if (content.empty()) content = fallback;
        const int id = tok->m_sp->PieceToId(content);
        if (id < 0 || id >= n || tok->m_tokens[size_t(id)] != content)
            throw Error(where + ": " + key + " '" + content + "' is not a piece of spiece.model");
        return std::pair{id, content};
    };
    std::string eos, unk, pad;
    std::tie(tok->m_eos, eos) = idOf("eos_token", "</s>");
    std::tie(tok->m_unk, unk) = idOf("unk_token", "<unk>");
    std::tie(tok->m_pad, pad) = idOf("pad_token", "</s>");
    tok->m_unkText = unk;

    // SiglipTokenizer's own special tokens strip the white space around them (AddedToken lstrip / rstrip).
    std::vector<AddedToken> added = addedTokensDecoder(config, where).value_or(std::vector<AddedToken>{});
    for (const auto& token : {std::pair{tok->m_eos, eos}, {tok->m_unk, unk}, {tok->m_pad, pad}}) {
        const int id = token.first; // (clang 14 cannot capture a structured binding)
        if (std::none_of(added.begin(), added.end(), [id](const AddedToken& a) { return a.id == id; }))
            added.push_back({token.second, id, true, true, true, false});
    }
    tok->m_special.assign(size_t(n), false);
    for (const AddedToken& a : added) {
        if (a.id < 0 || a.id >= n)
            throw Error(where + ": added token '" + a.content + "' has no id among spiece.model's " +
                        std::to_string(n) + " pieces");
        tok->m_special[size_t(a.id)] = a.special;
        if (a.special) tok->m_specialTexts.push_back(a.content);
    }
    tok->m_added = AddedTokens(std::move(added));
    std::vector<std::string> unkPieces;
    if (const auto s = tok->m_sp->Encode(tok->m_unkText, &unkPieces); !s.ok())
        throw Error(quoted(path) + ": cannot encode '" + tok->m_unkText + "' (" + s.ToString() + ")");
    tok->m_unkPieces = unkPieces.size();
    return tok;
}

std::vector<int> SiglipTokenizer::pieces(std::string_view raw) const {
    if (!unicode::isValidUtf8(raw)) throw Error("the text is not valid UTF-8");
    // 1. "▁" + text.replace("▁", " "), lower-cased around the special tokens
    std::string text = kUnderline;
    for (size_t i = 0; i < raw.size();) {
        const auto special = std::find_if(m_specialTexts.begin(), m_specialTexts.end(),
                                          [&](const std::string& s) { return raw.substr(i).starts_with(s); });
        if (special != m_specialTexts.end()) {
            text += *special;
            i += special->size();
        } else if (raw.substr(i).starts_with(kUnderline)) {
            text += ' ';
            i += kUnderline.size();
        } else {
            size_t end = i + 1;
            while (end < raw.size() && (static_cast<unsigned char>(raw[end]) & 0xC0) == 0x80)
                ++end;
            const std::u32string c = unicode::decodeUtf8(raw.substr(i, end - i));
            text += unicode::encodeUtf8(m_lower && !c.empty() ? unicode::toLower(c[0]) : c);
            i = end;
        }
    }
    // 2.-3. special tokens split off; the stretches canonicalised and encoded behind "<unk>"
    std::vector<std::string> tokens;
    std::vector<int> ids;
    m_added.split(
        text,
        [&](size_t begin, size_t end) {
            std::vector<std::string> out;
            const auto status = m_sp->Encode(m_unkText + canonicalize(text.substr(begin, end - begin)), &out);
            if (!status.ok()) throw Error("spiece.model: cannot encode the text (" + status.ToString() + ")");
            const size_t skip = out.size() >= m_unkPieces ? m_unkPieces : 0;
            for (size_t k = skip; k < out.size(); ++k) {
                tokens.push_back(out[k]);
                ids.push_back(m_sp->PieceToId(out[k]));
            }
        },
        [&](const AddedToken& t) {
            tokens.push_back(t.content);
            ids.push_back(t.id);
        });
    // 4. a lone "▁" in front of a special token goes
    if (tokens.size() > 1 && tokens[0] == kUnderline &&
        std::find(m_specialTexts.begin(), m_specialTexts.end(), tokens[1]) != m_specialTexts.end())
        ids.erase(ids.begin());
    return ids;
}

TextEncoding SiglipTokenizer::encode(std::string_view text) const {
    std::vector<int> ids = pieces(text);
    if (ids.empty() || ids.back() != m_eos) ids.push_back(m_eos);
    return framed({}, ids);
}

TextEncoding SiglipTokenizer::encodePadded(std::string_view text, int length) const {
    if (length < 1) throw Error("a padded length must be at least 1");
    std::vector<int> ids = pieces(text);
    if (static_cast<int>(ids.size()) + 1 > length) ids.resize(size_t(length - 1));
    if (ids.empty() || ids.back() != m_eos) ids.push_back(m_eos);
    ids.resize(size_t(length), m_pad);
    return framed({}, ids);
}

const std::string& SiglipTokenizer::token(int id) const {
    static const std::string none;
    return id >= 0 && id < vocabSize() ? m_tokens[size_t(id)] : none;
}

std::string SiglipTokenizer::tokenText(int id) const {
    const std::string& t = token(id);
    if (id >= 0 && id < vocabSize() && m_special[size_t(id)]) return t;
    return sentencePieceText(t);
}

} // namespace attnlens
