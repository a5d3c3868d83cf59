#include "core/text/tokenizer_util.h"

#include "core/text/unicode_text.h"
#include "core/util/error.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <sstream>

namespace attnlens::tokenizer_util {

std::string readText(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(quoted(path) + ": cannot read");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool fileExists(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
}

const Json* member(const Json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::unordered_map<std::string, int> readVocabObject(const Json& vocab, const std::string& where) {
    if (!vocab.is_object()) throw Error(where + ": the vocabulary must be an object of token -> id");
    std::unordered_map<std::string, int> out;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        if (!it.value().is_number_integer())
            throw Error(where + ": the id of '" + it.key() + "' is not an integer");
        const auto id = it.value().get<long long>();
        if (id < 0 || id > INT_MAX) throw Error(where + ": the id of '" + it.key() + "' is out of range");
        out[it.key()] = static_cast<int>(id);
    }
    return out;
}

void indexVocabulary(const std::unordered_map<std::string, int>& vocab, std::vector<std::string>& tokens,
                     const std::string& where) {
    int maxId = -1;
    for (const auto& [t, id] : vocab) {
        if (id < 0) throw Error(where + ": token '" + t + "' has a negative id");
        maxId = std::max(maxId, id);
    }
    if (static_cast<size_t>(maxId) + 1 > vocab.size() * 4 + 1024)
        throw Error(where + ": ids reach " + std::to_string(maxId) + " for " + std::to_string(vocab.size()) +
                    " tokens");
    tokens.assign(static_cast<size_t>(maxId + 1), std::string());
    for (const auto& [t, id] : vocab)
        tokens[static_cast<size_t>(id)] = t;
}

void byteStandIns(std::string (&toUnicode)[256], std::unordered_map<char32_t, unsigned char>& toByte) {
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
        const bool keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const char32_t c = keep ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
        toUnicode[b] = unicode::encodeUtf8(std::u32string(1, c));
        toByte[c] = static_cast<unsigned char>(b);
    }
}

bool isCjk(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) ||
           (c >= 0x2B820 && c <= 0x2CEAF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::u32string basicClean(std::u32string_view text, bool chinese) {
    std::u32string clean;
    for (char32_t c : text) {
        if (c == 0 || c == 0xFFFD ||
            (c != U'\t' && c != U'\n' && c != U'\r' && unicode::isControlOrFormat(c)))
            continue;
        const bool space =
            c == U' ' || c == U'\t' || c == U'\n' || c == U'\r' || unicode::isSpaceSeparator(c);
        if (space) {
            clean.push_back(U' ');
        } else if (chinese && isCjk(c)) {
            clean.push_back(U' ');
            clean.push_back(c);
            clean.push_back(U' ');
        } else {
            clean.push_back(c);
        }
    }
    return unicode::normalizeNfc(clean);
}

std::vector<std::u32string> splitPythonSpace(std::u32string_view text) {
    std::vector<std::u32string> out;
    std::u32string current;
    for (char32_t c : text) {
        if (unicode::isPythonSpace(c)) {
            if (!current.empty()) out.push_back(std::move(current)), current.clear();
        } else {
            current.push_back(c);
        }
    }
    if (!current.empty()) out.push_back(std::move(current));
    return out;
}

} // namespace attnlens::tokenizer_util
