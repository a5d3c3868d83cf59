#include "core/text/text_tokenizers.h"

#include "core/io/json_file.h"
#include "core/text/tokenizer_util.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace attnlens {

namespace {

using unicode::decodeUtf8;
using unicode::encodeUtf8;
using namespace tokenizer_util;

bool isBertPunctuation(char32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
        return true;
    return unicode::isPunctuationCategory(c);
}

std::u32string_view stripPythonSpace(std::u32string_view s, bool left, bool right) {
    while (left && !s.empty() && unicode::isPythonSpace(s.front()))
        s.remove_prefix(1);
    while (right && !s.empty() && unicode::isPythonSpace(s.back()))
        s.remove_suffix(1);
    return s;
}

// `text` cut at every occurrence of one of `specials` (the longest where several start at one place); the
// special tokens come back as their own chunks, flagged.
std::vector<std::pair<std::u32string, bool>> splitOnSpecials(const std::u32string& text,
                                                             const std::vector<std::u32string>& specials) {
    std::vector<std::pair<std::u32string, bool>> out;
    size_t start = 0;
    for (size_t i = 0; i < text.size();) {
        const std::u32string* hit = nullptr;
        for (const auto& s : specials)
            if (!s.empty() && text.compare(i, s.size(), s) == 0 && (!hit || s.size() > hit->size())) hit = &s;
        if (!hit) {
            ++i;
            continue;
        }
        if (i > start) out.emplace_back(text.substr(start, i - start), false);
        out.emplace_back(*hit, true);
        i += hit->size();
        start = i;
    }
    if (start < text.size()) out.emplace_back(text.substr(start), false);
    return out;
}

} // namespace

// --- WordPiece
// -----------------------------------------------------------------------------------------------

std::shared_ptr<const WordPieceTokenizer> WordPieceTokenizer::load(const std::filesystem::path& dir) {
    auto tok = std::make_shared<WordPieceTokenizer>();
    const auto vocabPath = dir / "vocab.txt";
    const auto jsonPath = dir / "tokenizer.json";
    std::string where;
    if (fileExists(vocabPath)) {
        where = quoted(vocabPath);
        std::istringstream lines(readText(vocabPath));
        std::string line;
        for (int index = 0; std::getline(lines, line); ++index) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();        // a Windows copy; rstrip("\n") keeps "\r" but
            tok->m_vocab[line] = index; // no vocabulary is meant with it
        }
    } else if (fileExists(jsonPath)) {
        where = quoted(jsonPath);
        const Json j = readJsonFile(jsonPath);
        const Json* model = member(j, "model");
        const Json* vocab = model ? member(*model, "vocab") : nullptr;
        if (!vocab || !vocab->is_object()) throw Error(where + ": no WordPiece vocabulary (model.vocab)");
        tok->m_vocab = readVocabObject(*vocab, where);
        if (const Json* n = member(j, "normalizer")) {
            if (const Json* lower = member(*n, "lowercase"); lower && lower->is_boolean())
                tok->m_lower = lower->get<bool>();
            if (const Json* strip = member(*n, "strip_accents"); strip && strip->is_boolean())
                tok->m_stripAccents = strip->get<bool>();
            if (const Json* cjk = member(*n, "handle_chinese_chars"); cjk && cjk->is_boolean())
                tok->m_chinese = cjk->get<bool>();
        }
    } else {
        throw Error("'" + dir.string() + "': vocab.txt is missing (and there is no tokenizer.json)");
    }
    if (const auto configPath = dir / "tokenizer_config.json"; fileExists(configPath)) {
        const JsonConfig config(configPath);
        tok->m_lower = config.value<bool>("do_lower_case", tok->m_lower);
        if (config.has("strip_accents")) tok->m_stripAccents = config.get<bool>("strip_accents");
        tok->m_chinese = config.value<bool>("tokenize_chinese_chars", tok->m_chinese);
    }
    indexVocabulary(tok->m_vocab, tok->m_tokens, where);
    auto find = [&tok](const char* t) {
        const auto it = tok->m_vocab.find(t);
        return it == tok->m_vocab.end() ? -1 : it->second;
    };
    tok->m_unk = find("[UNK]");
    tok->m_cls = find("[CLS]");
    tok->m_sep = find("[SEP]");
    tok->m_mask = find("[MASK]");
    for (const char* name : {"[UNK]", "[CLS]", "[SEP]"})
        if (find(name) < 0) throw Error(where + ": the vocabulary has no " + name + " token");
    for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        tok->m_specials.emplace_back(name);
    return tok;
}

const std::string& WordPieceTokenizer::token(int id) const {
    static const std::string none;
    return id >= 0 && id < static_cast<int>(m_tokens.size()) ? m_tokens[static_cast<size_t>(id)] : none;
}

std::optional<int> WordPieceTokenizer::id(const std::string& token) const {
    const auto it = m_vocab.find(token);
    if (it == m_vocab.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> WordPieceTokenizer::basicTokens(std::u32string_view text) const {
    const std::u32string nfc = basicClean(text, m_chinese);
    std::vector<std::string> out;
    const bool strip = m_lower ? m_stripAccents.value_or(true) : m_stripAccents.value_or(false);
    for (std::u32string word : splitPythonSpace(nfc)) {
        if (strip) {
            std::u32string kept;
            for (char32_t c : unicode::normalizeNfd(word))
                if (!unicode::isNonSpacingMark(c)) kept.push_back(c);
            word = std::move(kept);
        }
        std::u32string current;
        for (char32_t c : word) {
            if (isBertPunctuation(c)) {
                if (!current.empty()) out.push_back(encodeUtf8(current)), current.clear();
                out.push_back(encodeUtf8(std::u32string(1, c)));
            } else {
                current.push_back(c);
            }
        }
        if (!current.empty()) out.push_back(encodeUtf8(current));
    }
    return out;
}

void WordPieceTokenizer::wordPieces(const std::u32string& word, std::vector<std::string>& out) const {
    if (word.size() > 100) {
        out.push_back(m_tokens[static_cast<size_t>(m_unk)]);
        return;
    }
    std::vector<std::string> pieces;
    for (size_t start = 0; start < word.size();) {
        size_t end = word.size();
        std::string found;
        while (start < end) {
            std::string piece = encodeUtf8(std::u32string_view(word).substr(start, end - start));
            if (start > 0) piece = "##" + piece;
            if (m_vocab.count(piece)) {
                found = std::move(piece);
                break;
            }
            --end;
        }
        if (found.empty()) {
            out.push_back(m_tokens[static_cast<size_t>(m_unk)]);
            return;
        }
        pieces.push_back(std::move(found));
        start = end;
    }
    out.insert(out.end(), pieces.begin(), pieces.end());
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
    std::vector<std::u32string> specials;
    for (const auto& s : m_specials)
        specials.push_back(decodeUtf8(s));
    const auto chunks = splitOnSpecials(decodeUtf8(text), specials);
    std::vector<std::string> out;
    for (size_t i = 0; i < chunks.size(); ++i) {
        const auto& [chunk, special] = chunks[i];
        if (special) {
            out.push_back(encodeUtf8(chunk));
            continue;
        }
        // Text beside a special token loses its white space there; the rest is lower-cased one character at a
        // time (as PreTrainedTokenizer.tokenize does before the basic tokenizer).
        std::u32string part(stripPythonSpace(chunk, i > 0 && chunks[i - 1].second,
                                             i + 1 < chunks.size() && chunks[i + 1].second));
        if (m_lower) {
            std::u32string lower;
            for (char32_t c : part)
                lower += unicode::toLower(c);
            part = std::move(lower);
        }
        for (const std::string& word : basicTokens(part))
            wordPieces(decodeUtf8(word), out);
    }
    return out;
}

TextEncoding WordPieceTokenizer::encode(std::string_view text) const {
    TextEncoding e;
    e.tokens.push_back(m_tokens[static_cast<size_t>(m_cls)]);
    for (auto& t : tokenize(text))
        e.tokens.push_back(std::move(t));
    e.tokens.push_back(m_tokens[static_cast<size_t>(m_sep)]);
    for (const auto& t : e.tokens) {
        const auto it = m_vocab.find(t);
        e.ids.push_back(it == m_vocab.end() ? m_unk : it->second);
    }
    return e;
}

// --- byte-level BPE
// ------------------------------------------------------------------------------------------

std::vector<std::u32string> gpt2Pretokenize(std::u32string_view t) {
    using namespace unicode;
    std::vector<std::u32string> out;
    const size_t n = t.size();
    auto other = [](char32_t c) { return !isWhiteSpace(c) && !isLetter(c) && !isNumber(c); };
    for (size_t i = 0; i < n;) {
        size_t end = i;
        if (t[i] == U'\'') { // 's|'t|'re|'ve|'m|'ll|'d
            for (std::u32string_view c : {U"'s", U"'t", U"'re", U"'ve", U"'m", U"'ll", U"'d"})
                if (t.substr(i, c.size()) == c) {
                    end = i + c.size();
                    break;
                }
        }
        const size_t j = t[i] == U' ' ? i + 1 : i; // the optional leading space of the next three
        if (end == i && j < n && isLetter(t[j])) {
            end = j;
            while (end < n && isLetter(t[end]))
                ++end;
        }
        if (end == i && j < n && isNumber(t[j])) {
            end = j;
            while (end < n && isNumber(t[end]))
                ++end;
        }
        if (end == i && j < n && other(t[j])) {
            end = j;
            while (end < n && other(t[end]))
                ++end;
        }
        if (end == i) { // white space: all of it at the end of the text, else all but the last character
            size_t k = i;
            while (k < n && isWhiteSpace(t[k]))
                ++k;
            end = (k < n && k - i > 1) ? k - 1 : k;
        }
        if (end == i) end = i + 1; // not reached: every character is white space, a letter, a number or other
        out.emplace_back(t.substr(i, end - i));
        i = end;
    }
    return out;
}

namespace {

// What a GPT-2-style folder's tokenizer files say: vocabulary, merges in rank order (an empty pair keeps the
// rank of a line that is no merge) and added tokens.
struct ByteBpeFiles {
    std::string where; // the file read last, for messages
    std::unordered_map<std::string, int> vocab;
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<std::string> added;
};

void readBpeVocab(const Json& vocab, ByteBpeFiles& f) {
    f.vocab = readVocabObject(vocab, f.where);
}

// vocab.json, merges.txt and added_tokens.json, as GPT2Tokenizer reads them.
void readBpeVocabAndMerges(const std::filesystem::path& dir, ByteBpeFiles& f) {
    f.where = quoted(dir / "vocab.json");
    readBpeVocab(readJsonFile(dir / "vocab.json"), f);
    f.where = quoted(dir / "merges.txt");
    // Split at "\n", drop the first line (the version) and the last (empty) one.
    std::vector<std::string> lines;
    const std::string text = readText(dir / "merges.txt");
    size_t start = 0;
    for (size_t p; (p = text.find('\n', start)) != std::string::npos; start = p + 1)
        lines.push_back(text.substr(start, p - start));
    lines.push_back(text.substr(start));
    for (size_t i = 1; i + 1 < lines.size(); ++i) {
        std::istringstream parts(lines[i]);
        std::string a, b, extra;
        if (parts >> a >> b && !(parts >> extra))
            f.merges.emplace_back(a, b);
        else
            f.merges.emplace_back(); // never matches, keeps the ranks of the lines after it
    }
    if (const auto added = dir / "added_tokens.json"; fileExists(added)) {
        const Json j = readJsonFile(added);
        if (j.is_object())
            for (auto it = j.begin(); it != j.end(); ++it)
                f.added.push_back(it.key());
    }
}

// tokenizer.json's BPE model (merges as "a b" or [a, b]) and its added tokens.
void readBpeTokenizerJson(const std::filesystem::path& dir, ByteBpeFiles& f) {
    f.where = quoted(dir / "tokenizer.json");
    const Json j = readJsonFile(dir / "tokenizer.json");
    const Json* model = member(j, "model");
    if (!model || !member(*model, "vocab") || !member(*model, "merges"))
        throw Error(f.where + ": no BPE model (model.vocab and model.merges)");
    readBpeVocab(*member(*model, "vocab"), f);
    const Json& list = *member(*model, "merges");
    if (!list.is_array()) throw Error(f.where + ": model.merges must be an array");
    for (const Json& m : list) {
        if (m.is_string()) {
            std::istringstream parts(m.get<std::string>());
            std::string a, b;
            parts >> a >> b;
            f.merges.emplace_back(a, b);
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            f.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
        } else {
            throw Error(f.where + ": a merge must be \"a b\" or [a, b]");
        }
    }
    if (const Json* added = member(j, "added_tokens"); added && added->is_array())
        for (const Json& a : *added)
            if (const Json* content = member(a, "content"); content && content->is_string())
                f.added.push_back(content->get<std::string>());
}

} // namespace

std::shared_ptr<const ByteBpeTokenizer> ByteBpeTokenizer::load(const std::filesystem::path& dir) {
    ByteBpeFiles files;
    if (fileExists(dir / "vocab.json") && fileExists(dir / "merges.txt"))
        readBpeVocabAndMerges(dir, files);
    else if (fileExists(dir / "tokenizer.json"))
        readBpeTokenizerJson(dir, files);
    else
        throw Error("'" + dir.string() +
                    "': vocab.json and merges.txt are missing (and there is no tokenizer.json)");
    auto tok = std::make_shared<ByteBpeTokenizer>();
    tok->m_vocab = std::move(files.vocab);
    tok->m_added = std::move(files.added);
    indexVocabulary(tok->m_vocab, tok->m_tokens, files.where);
    const auto& merges = files.merges;
    for (size_t r = 0; r < merges.size(); ++r)
        if (!merges[r].first.empty())
            tok->m_merges.add(merges[r].first, merges[r].second, static_cast<int>(r));
    if (tok->m_vocab.count("<|endoftext|>") &&
        std::find(tok->m_added.begin(), tok->m_added.end(), "<|endoftext|>") == tok->m_added.end())
        tok->m_added.emplace_back("<|endoftext|>");
    std::sort(tok->m_added.begin(), tok->m_added.end(),
              [](const auto& a, const auto& b) { return a.size() > b.size(); });
    byteStandIns(tok->m_byteToUnicode, tok->m_unicodeToByte);
    return tok;
}

std::string sentencePieceText(const std::string& piece) {
    unsigned int byte = 0;
    if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>' &&
        std::sscanf(piece.c_str() + 3, "%2X", &byte) == 1)
        return std::string(1, static_cast<char>(byte));
    std::string out;
    for (size_t i = 0; i < piece.size();) {
        if (piece.compare(i, 3, "\xE2\x96\x81") == 0) {
            out += ' ';
            i += 3;
        } else {
            out += piece[i++];
        }
    }
    return out;
}

TextEncoding TextTokenizer::framed(const std::vector<int>& prefix, const std::vector<int>& ids,
                                   const std::vector<int>& suffix) const {
    TextEncoding e;
    e.ids = prefix;
    e.ids.insert(e.ids.end(), ids.begin(), ids.end());
    e.ids.insert(e.ids.end(), suffix.begin(), suffix.end());
    for (int id : e.ids)
        e.tokens.push_back(token(id));
    return e;
}

TextEncoding TextTokenizer::encodePlain(std::string_view text) const {
    TextEncoding e = encode(text);
    size_t begin = 0, end = e.ids.size();
    while (begin < end && framesText(e.ids[begin]))
        ++begin;
    while (end > begin && framesText(e.ids[end - 1]))
        --end;
    return {{e.tokens.begin() + std::ptrdiff_t(begin), e.tokens.begin() + std::ptrdiff_t(end)},
            {e.ids.begin() + std::ptrdiff_t(begin), e.ids.begin() + std::ptrdiff_t(end)}};
}

const std::string& ByteBpeTokenizer::token(int id) const {
    static const std::string none;
    return id >= 0 && id < static_cast<int>(m_tokens.size()) ? m_tokens[static_cast<size_t>(id)] : none;
}

std::optional<int> ByteBpeTokenizer::id(const std::string& token) const {
    const auto it = m_vocab.find(token);
    if (it == m_vocab.end()) return std::nullopt;
    return it->second;
}

int ByteBpeTokenizer::endOfTextId() const {
    return id("<|endoftext|>").value_or(-1);
}

std::vector<std::string> ByteBpeTokenizer::bpe(const std::string& word) const {
    std::vector<std::string> symbols;
    for (char32_t c : decodeUtf8(word))
        symbols.push_back(encodeUtf8(std::u32string(1, c)));
    return m_merges.apply(symbols);
}

std::vector<std::string> ByteBpeTokenizer::tokenize(std::string_view text) const {
    std::vector<std::u32string> added;
    for (const auto& a : m_added)
        added.push_back(decodeUtf8(a));
    std::vector<std::string> out;
    for (const auto& [chunk, special] : splitOnSpecials(decodeUtf8(text), added)) {
        if (special) {
            out.push_back(encodeUtf8(chunk));
            continue;
        }
        for (const std::u32string& piece : gpt2Pretokenize(chunk)) {
            std::string mapped;
            for (unsigned char b : encodeUtf8(piece))
                mapped += m_byteToUnicode[b];
            for (auto& t : bpe(mapped))
                out.push_back(std::move(t));
        }
    }
    return out;
}

TextEncoding ByteBpeTokenizer::encode(std::string_view text) const {
    TextEncoding e;
    e.tokens = tokenize(text);
    for (const auto& t : e.tokens) {
        const auto it = m_vocab.find(t);
        if (it != m_vocab.end()) {
            e.ids.push_back(it->second);
        } else if (const int unknown = endOfTextId(); unknown >= 0) { // GPT2Tokenizer's unk_token
            e.ids.push_back(unknown);
        } else {
            throw Error("the vocabulary has no token '" + t + "' (and no <|endoftext|> to stand for it)");
        }
    }
    return e;
}

std::string ByteBpeTokenizer::tokenText(int id) const {
    const std::string& t = token(id);
    if (std::find(m_added.begin(), m_added.end(), t) != m_added.end()) return t;
    std::string bytes;
    for (char32_t c : decodeUtf8(t)) {
        const auto it = m_unicodeToByte.find(c);
        if (it != m_unicodeToByte.end()) bytes.push_back(static_cast<char>(it->second));
    }
    return bytes;
}

std::string ByteBpeTokenizer::decode(std::span<const int> ids) const {
    std::string bytes;
    for (int id : ids)
        bytes += tokenText(id);
    return encodeUtf8(decodeUtf8(bytes)); // bytes cut inside a character become U+FFFD, as errors="replace"
}

} // namespace attnlens
