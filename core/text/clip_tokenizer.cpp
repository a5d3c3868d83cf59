#include "core/text/clip_tokenizer.h"

#include "core/io/json_file.h"
#include "core/text/tokenizer_util.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"

#include <algorithm>
#include <sstream>

namespace attnlens {

namespace {

using namespace tokenizer_util;
using unicode::decodeUtf8;
using unicode::encodeUtf8;

constexpr size_t kClipMerges = 49152 - 256 - 2; // CLIPTokenizer reads lines [1, 48 895) of merges.txt
constexpr std::string_view kStart = "<|startoftext|>", kEnd = "<|endoftext|>";

// tokenizer_config.json's (else special_tokens_map.json's) `key`: a string or an AddedToken's content.
std::string specialToken(const Json& config, const Json& map, const char* key, std::string fallback) {
    for (const Json* j : {&config, &map}) {
        const Json* v = member(*j, key);
        if (v && v->is_string()) return v->get<std::string>();
        if (const Json* content = v ? member(*v, "content") : nullptr; content && content->is_string())
            return content->get<std::string>();
    }
    return fallback;
}

Json readIfPresent(const std::filesystem::path& path) {
    return fileExists(path) ? readJsonFile(path) : Json::object();
}

// merges.txt as CLIPTokenizer reads it: stripped, split at "\n", lines [1, 48 895); a line that is not two
// symbols never matches but keeps its rank.
void readClipMerges(const std::filesystem::path& path, BpeMerges& merges) {
    std::string text = readText(path);
    const auto first = text.find_first_not_of(" \t\n\r\f\v");
    const auto last = text.find_last_not_of(" \t\n\r\f\v");
    text = first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
    std::istringstream lines(text);
    std::string line;
    for (size_t index = 0; std::getline(lines, line) && index <= kClipMerges; ++index) {
        if (index == 0) continue;
        std::istringstream parts(line);
        std::string a, b, extra;
        if (parts >> a >> b && !(parts >> extra)) merges.add(a, b, static_cast<int>(index));
    }
}

// Python's str.lower() of a word: each code point's full mapping, capital sigma final (ς) after a letter and
// not before one.
std::u32string pythonLower(std::u32string_view word) {
    std::u32string out;
    for (size_t i = 0; i < word.size(); ++i) {
        if (word[i] == U'\u03A3') {
            const bool after = i > 0 && unicode::isLetter(word[i - 1]);
            const bool before = i + 1 < word.size() && unicode::isLetter(word[i + 1]);
            out.push_back(after && !before ? U'\u03C2' : U'\u03C3');
            continue;
        }
        out += unicode::toLower(word[i]);
    }
    return out;
}

bool startsWith(std::u32string_view text, size_t at, std::string_view ascii) {
    if (text.size() - at < ascii.size()) return false;
    for (size_t k = 0; k < ascii.size(); ++k)
        if (text[at + k] != static_cast<char32_t>(ascii[k])) return false;
    return true;
}

} // namespace

std::vector<std::u32string> clipPretokenize(std::u32string_view t) {
    std::vector<std::u32string> out;
    const auto other = [](char32_t c) {
        return !unicode::isWhiteSpace(c) && !unicode::isLetter(c) && !unicode::isNumber(c);
    };
    for (size_t i = 0; i < t.size();) {
        size_t end = i;
        if (startsWith(t, i, kStart)) {
            end = i + kStart.size();
        } else if (startsWith(t, i, kEnd)) {
            end = i + kEnd.size();
        } else if (t[i] == U'\'' && i + 1 < t.size() &&
                   (t[i + 1] == U's' || t[i + 1] == U't' || t[i + 1] == U'm' || t[i + 1] == U'd')) {
            end = i + 2;
        } else if (startsWith(t, i, "'re") || startsWith(t, i, "'ve") || startsWith(t, i, "'ll")) {
            end = i + 3;
        } else if (unicode::isLetter(t[i])) {
            while (end < t.size() && unicode::isLetter(t[end]))
                ++end;
        } else if (unicode::isNumber(t[i])) {
            end = i + 1;
        } else if (other(t[i])) {
            while (end < t.size() && other(t[end]))
                ++end;
        } else { // white space between pieces
            ++i;
            continue;
        }
        out.emplace_back(t.substr(i, end - i));
        i = end;
    }
    return out;
}

bool ClipTokenizer::present(const std::filesystem::path& dir) {
    if (!fileExists(dir / "vocab.json") || !fileExists(dir / "merges.txt")) return false;
    try {
        const Json config = readIfPresent(dir / "tokenizer_config.json");
        if (const Json* c = member(config, "tokenizer_class"); c && c->is_string())
            return c->get<std::string>().rfind("CLIPTokenizer", 0) == 0;
        const Json model = readIfPresent(dir / "config.json");
        const Json* type = member(model, "model_type");
        return type && type->is_string() && type->get<std::string>() == "clip_text_model";
    } catch (const Error&) {
        return false;
    }
}

std::shared_ptr<const ClipTokenizer> ClipTokenizer::load(const std::filesystem::path& dir) {
    for (const char* name : {"vocab.json", "merges.txt"})
        if (!fileExists(dir / name))
            throw Error(quoted(dir) + ": " + name + " is missing (a CLIP tokenizer)");
    auto tok = std::make_shared<ClipTokenizer>();
    const std::string where = quoted(dir / "vocab.json");
    tok->m_vocab = readVocabObject(readJsonFile(dir / "vocab.json"), where);
    readClipMerges(dir / "merges.txt", tok->m_merges);
    const Json config = readIfPresent(dir / "tokenizer_config.json");
    const Json map = readIfPresent(dir / "special_tokens_map.json");
    std::vector<AddedToken> specials;
    if (const Json added = readIfPresent(dir / "added_tokens.json"); added.is_object())
        for (auto it = added.begin(); it != added.end(); ++it)
            if (it.value().is_number_integer() && it.value().get<long long>() >= 0 &&
                it.value().get<long long>() < (1 << 30)) {
                tok->m_vocab.emplace(it.key(), it.value().get<int>());
                specials.push_back({it.key(), it.value().get<int>(), true});
            }
    indexVocabulary(tok->m_vocab, tok->m_tokens, where);
    auto require = [&](const char* key, const char* fallback) {
        const std::string content = specialToken(config, map, key, fallback);
        const auto it = tok->m_vocab.find(content);
        if (it == tok->m_vocab.end())
            throw Error(quoted(dir) + ": the " + key + " '" + content + "' is not in the vocabulary");
        specials.push_back({content, it->second, true});
        return it->second;
    };
    tok->m_bos = require("bos_token", "<|startoftext|>");
    tok->m_eos = require("eos_token", "<|endoftext|>");
    tok->m_unk = require("unk_token", "<|endoftext|>");
    tok->m_pad = require("pad_token", "<|endoftext|>");
    tok->m_specials = AddedTokens(std::move(specials));
    byteStandIns(tok->m_byteToUnicode, tok->m_unicodeToByte);
    return tok;
}

const std::string& ClipTokenizer::token(int id) const {
    static const std::string none;
    return id >= 0 && id < static_cast<int>(m_tokens.size()) ? m_tokens[static_cast<size_t>(id)] : none;
}

std::vector<std::string> ClipTokenizer::bpe(const std::string& piece) const {
    if (piece == kStart || piece == kEnd) return {piece};
    std::vector<std::string> symbols;
    for (char32_t c : decodeUtf8(piece))
        symbols.push_back(encodeUtf8(std::u32string(1, c)));
    symbols.back() += "</w>";
    return m_merges.apply(symbols);
}

std::vector<std::string> ClipTokenizer::tokenize(std::string_view text) const {
    const std::string valid =
        encodeUtf8(decodeUtf8(text)); // invalid bytes as U+FFFD, which the clean-up drops
    std::vector<std::string> out;
    auto plain = [&](size_t begin, size_t end) {
        std::u32string joined;
        for (const std::u32string& word : splitPythonSpace(
                 basicClean(decodeUtf8(std::string_view(valid).substr(begin, end - begin)), true)))
            joined += (joined.empty() ? U"" : U" ") + pythonLower(word);
        for (const std::u32string& piece : clipPretokenize(joined)) {
            std::string mapped;
            for (unsigned char b : encodeUtf8(piece))
                mapped += m_byteToUnicode[b];
            for (std::string& t : bpe(mapped))
                out.push_back(std::move(t));
        }
    };
    m_specials.split(valid, plain, [&](const AddedToken& t) { out.push_back(t.content); });
    return out;
}

std::vector<int> ClipTokenizer::pieceIds(std::string_view text) const {
    std::vector<int> ids;
    for (const std::string& t : tokenize(text)) {
        const auto it = m_vocab.find(t);
        ids.push_back(it == m_vocab.end() ? m_unk : it->second);
    }
    return ids;
}

TextEncoding ClipTokenizer::encode(std::string_view text) const {
    return framed({m_bos}, pieceIds(text), {m_eos});
}

TextEncoding ClipTokenizer::encodePadded(std::string_view text, int length) const {
    if (length < 2)
        throw Error("a CLIP text needs room for BOS and EOS (length " + std::to_string(length) + ")");
    std::vector<int> ids = pieceIds(text);
    ids.resize(std::min(ids.size(), static_cast<size_t>(length - 2)));
    ids.push_back(m_eos);
    ids.resize(static_cast<size_t>(length - 1), m_pad);
    return framed({m_bos}, ids);
}

std::string ClipTokenizer::tokenText(int id) const {
    std::string t = token(id);
    if (id == m_bos || id == m_eos || id == m_pad || id == m_unk) return t;
    std::string suffix;
    if (t.size() >= 4 && t.compare(t.size() - 4, 4, "</w>") == 0) t.resize(t.size() - 4), suffix = " ";
    std::string bytes;
    for (char32_t c : decodeUtf8(t)) {
        const auto it = m_unicodeToByte.find(c);
        if (it != m_unicodeToByte.end()) bytes.push_back(static_cast<char>(it->second));
    }
    return encodeUtf8(decodeUtf8(bytes)) + suffix;
}

} // namespace attnlens
