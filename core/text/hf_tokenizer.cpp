#include "core/text/hf_tokenizer.h"

#include "core/io/json_file.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <queue>

#include <pcre2.h>

#include <algorithm>
#include <climits>
#include <utility>

namespace attnlens {

// A compiled PCRE2 pattern with Unicode properties (UTF-8, UCP), as Oniguruma reads tokenizer.json's.
class HfRegex {
public:
    explicit HfRegex(const std::string& pattern) {
        int error = 0;
        PCRE2_SIZE offset = 0;
        // \C (one code unit in UTF mode) could split a character for the next step: never allowed
        m_code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                               PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C, &error, &offset, nullptr);
        if (!m_code) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(error, message, sizeof message);
            throw Error("the split pattern does not compile at " + std::to_string(offset) + ": " +
                        reinterpret_cast<const char*>(message));
        }
    }
    ~HfRegex() { pcre2_code_free(m_code); }
    HfRegex(const HfRegex&) = delete;
    HfRegex& operator=(const HfRegex&) = delete;

    // The [begin, end) byte ranges of every match in `text`, left to right.
    std::vector<std::pair<size_t, size_t>> matches(const std::string& text) const {
        std::vector<std::pair<size_t, size_t>> out;
        pcre2_match_data* data = pcre2_match_data_create_from_pattern(m_code, nullptr);
        if (!data) throw std::bad_alloc();
        size_t at = 0;
        while (at <= text.size()) {
            // the text is valid UTF-8 (encodePlain checks it) and the pieces are cut at characters
            const int rc = pcre2_match(m_code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), at,
                                       PCRE2_NO_UTF_CHECK, data, nullptr);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {
                pcre2_match_data_free(data);
                throw Error("tokenizer: the split pattern failed on the text (PCRE2 error " +
                            std::to_string(rc) + ")");
            }
            const PCRE2_SIZE* v = pcre2_get_ovector_pointer(data);
            if (v[1] == v[0]) { // an empty match: step over one character
                at = v[0] + 1;
                while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80)
                    ++at;
                continue;
            }
            out.emplace_back(v[0], v[1]);
            at = v[1];
        }
        pcre2_match_data_free(data);
        return out;
    }

private:
    pcre2_code* m_code = nullptr;
};

std::shared_ptr<const HfRegex> makeHfRegex(const std::string& pattern) {
    return std::make_shared<const HfRegex>(pattern);
}

namespace {

using unicode::decodeUtf8;
using unicode::encodeUtf8;

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
    if (from.empty()) return s;
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

// GPT-2's byte stand-ins: printable Latin-1 bytes are themselves, the others 256, 257, … in byte order.
const std::array<std::string, 256>& byteStandIns() {
    static const std::array<std::string, 256> table = [] {
        std::array<std::string, 256> t;
        int extra = 0;
        for (int b = 0; b < 256; ++b) {
            const bool keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            t[size_t(b)] = encodeUtf8(std::u32string(1, keep ? char32_t(b) : char32_t(256 + extra++)));
        }
        return t;
    }();
    return table;
}

std::string fromStandIns(const std::string& token) {
    static const std::unordered_map<char32_t, char> back = [] {
        std::unordered_map<char32_t, char> m;
        for (int b = 0; b < 256; ++b)
            m[decodeUtf8(byteStandIns()[size_t(b)])[0]] = static_cast<char>(b);
        return m;
    }();
    std::string out;
    for (char32_t c : decodeUtf8(token)) {
        const auto it = back.find(c);
        if (it != back.end())
            out += it->second;
        else
            unicode::appendUtf8(out, c);
    }
    return out;
}

// Cuts `text` at the ranges `hits` according to a Split's behaviour.
std::vector<std::string> splitBy(const std::string& text, const std::vector<std::pair<size_t, size_t>>& hits,
                                 HfTokenizer::PreTokenizer::Behavior behavior, bool invert) {
    using B = HfTokenizer::PreTokenizer::Behavior;
    // (text, isMatch) in order
    std::vector<std::pair<std::string, bool>> parts;
    size_t at = 0;
    for (const auto& [b, e] : hits) {
        if (b > at) parts.emplace_back(text.substr(at, b - at), invert);
        parts.emplace_back(text.substr(b, e - b), !invert);
        at = e;
    }
    if (at < text.size()) parts.emplace_back(text.substr(at), invert);
    std::vector<std::string> out;
    bool glueNext = false, previousMatch = false;
    for (auto& [s, match] : parts) {
        const bool wasMatch = std::exchange(previousMatch, match);
        if (!match || behavior == B::Isolated) {
            if (glueNext && !out.empty())
                out.back() += s;
            else
                out.push_back(s);
            glueNext = false;
        } else if (behavior == B::MergedWithPrevious) { // as the Rust library: onto a piece that was no match
            if (out.empty() || glueNext || wasMatch)
                out.push_back(s);
            else
                out.back() += s;
            glueNext = false;
        } else if (behavior == B::MergedWithNext) {
            out.push_back(s);
            glueNext = true;
        } // Removed: dropped
    }
    return out;
}

} // namespace

std::string HfTokenizer::normalize(std::string text) const {
    for (const Normalizer& n : m_normalizers) {
        switch (n.kind) {
        case Normalizer::Kind::Nfc:
            text = encodeUtf8(unicode::normalizeNfc(decodeUtf8(text)));
            break;
        case Normalizer::Kind::Nfd:
            text = encodeUtf8(unicode::normalizeNfd(decodeUtf8(text)));
            break;
        case Normalizer::Kind::Nfkc:
            text = encodeUtf8(unicode::normalizeNfkc(decodeUtf8(text)));
            break;
        case Normalizer::Kind::Lowercase: {
            std::u32string lower;
            for (char32_t c : decodeUtf8(text))
                lower += unicode::toLower(c);
            text = encodeUtf8(lower);
            break;
        }
        case Normalizer::Kind::Replace:
            text = replaceAll(std::move(text), n.from, n.to);
            if (text.size() > (size_t(1) << 26))
                throw Error("tokenizer: the normalizers grow the text past 64 MB");
            break;
        case Normalizer::Kind::Prepend:
            if (!text.empty()) text = n.to + text;
            break;
        }
    }
    return text;
}

std::vector<std::string> HfTokenizer::preTokenize(std::string text, bool atStart) const {
    std::vector<std::string> pieces{std::move(text)};
    for (const PreTokenizer& p : m_preTokenizers) {
        std::vector<std::string> next;
        for (size_t i = 0; i < pieces.size(); ++i) {
            std::string& s = pieces[i];
            std::vector<std::string> parts;
            if (p.kind == PreTokenizer::Kind::Split) {
                std::vector<std::pair<size_t, size_t>> hits;
                if (p.regex) {
                    hits = p.regex->matches(s);
                } else if (!p.literal.empty()) {
                    for (size_t at = s.find(p.literal); at != std::string::npos;
                         at = s.find(p.literal, at + p.literal.size()))
                        hits.emplace_back(at, at + p.literal.size());
                }
                parts = splitBy(s, hits, p.behavior, p.invert);
            } else if (p.kind == PreTokenizer::Kind::ByteLevel) {
                if (p.addPrefixSpace && !s.empty() && s[0] != ' ')
                    s = " " + s; // every split, as the Rust library
                parts = p.regex ? splitBy(s, p.regex->matches(s), PreTokenizer::Behavior::Isolated, false)
                                : std::vector<std::string>{s};
                for (std::string& part : parts) {
                    std::string mapped;
                    for (unsigned char b : part)
                        mapped += byteStandIns()[b];
                    part = std::move(mapped);
                }
            } else { // Metaspace
                s = replaceAll(std::move(s), " ", p.replacement);
                const bool prepend =
                    p.prependScheme == "always" || (p.prependScheme == "first" && atStart && i == 0);
                if (prepend && s.compare(0, p.replacement.size(), p.replacement) != 0) s = p.replacement + s;
                if (p.split) {
                    std::vector<std::pair<size_t, size_t>> hits;
                    for (size_t at = s.find(p.replacement); at != std::string::npos;
                         at = s.find(p.replacement, at + p.replacement.size()))
                        hits.emplace_back(at, at + p.replacement.size());
                    parts = splitBy(s, hits, PreTokenizer::Behavior::MergedWithNext, false);
                } else {
                    parts = {s};
                }
            }
            for (std::string& part : parts)
                if (!part.empty()) next.push_back(std::move(part));
        }
        pieces = std::move(next);
    }
    return pieces;
}

void HfTokenizer::bpe(const std::string& piece, std::vector<int>& out) const {
    if (m_ignoreMerges) {
        if (const auto it = m_vocab.find(piece); it != m_vocab.end()) return out.push_back(it->second);
    }
    std::vector<int> symbols;
    std::string one;
    for (char32_t c : decodeUtf8(piece)) {
        one.clear();
        unicode::appendUtf8(one, c);
        if (const auto it = m_vocab.find(one); it != m_vocab.end()) {
            symbols.push_back(it->second);
            continue;
        }
        bool bytes = m_byteFallback;
        for (unsigned char b : one)
            bytes = bytes && m_byteIds[b] >= 0;
        if (bytes) {
            for (unsigned char b : one)
                symbols.push_back(m_byteIds[b]);
        } else if (m_unk >= 0) {
            if (!(m_fuseUnk && !symbols.empty() && symbols.back() == m_unk)) symbols.push_back(m_unk);
        } // else: no unknown token — the character is dropped, as the Rust library does
    }
    // Merge by rank (ties: leftmost first) over a linked list, with a heap of candidate pairs.
    const auto n = static_cast<int>(symbols.size());
    std::vector<int> prev(static_cast<size_t>(n)), next(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        prev[size_t(i)] = i - 1, next[size_t(i)] = i + 1 < n ? i + 1 : -1;
    using Candidate = std::tuple<int, int, int, int>; // rank, left position, left id, right id
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int left) {
        if (left < 0 || next[size_t(left)] < 0) return;
        const int right = next[size_t(left)];
        const uint64_t key =
            (uint64_t(uint32_t(symbols[size_t(left)])) << 32) | uint32_t(symbols[size_t(right)]);
        if (const auto it = m_merges.find(key); it != m_merges.end())
            heap.emplace(it->second.first, left, symbols[size_t(left)], symbols[size_t(right)]);
    };
    for (int i = 0; i + 1 < n; ++i)
        consider(i);
    while (!heap.empty()) {
        const auto [rank, left, a, b] = heap.top();
        heap.pop();
        const int right = next[size_t(left)];
        if (symbols[size_t(left)] != a || right < 0 || symbols[size_t(right)] != b) continue; // stale
        symbols[size_t(left)] = m_merges.at((uint64_t(uint32_t(a)) << 32) | uint32_t(b)).second;
        symbols[size_t(right)] = -1;
        next[size_t(left)] = next[size_t(right)];
        if (next[size_t(left)] >= 0) prev[size_t(next[size_t(left)])] = left;
        consider(prev[size_t(left)]);
        consider(left);
    }
    for (int i = n > 0 ? 0 : -1; i >= 0; i = next[size_t(i)])
        out.push_back(symbols[size_t(i)]);
}

TextEncoding HfTokenizer::encodePlain(std::string_view text) const {
    const std::string s(text);
    if (!unicode::isValidUtf8(s)) throw Error("the text is not valid UTF-8");
    std::vector<int> ids;
    auto plain = [&](size_t begin, size_t end) {
        if (end <= begin) return;
        for (const std::string& piece : preTokenize(normalize(s.substr(begin, end - begin)), begin == 0))
            bpe(piece, ids);
    };
    m_added.split(s, plain, [&](const AddedToken& t) { ids.push_back(t.id); });
    return framed({}, ids);
}

TextEncoding HfTokenizer::encode(std::string_view text) const {
    return framed(m_prefix, encodePlain(text).ids, m_suffix);
}

const std::string& HfTokenizer::token(int id) const {
    static const std::string none;
    return id >= 0 && id < static_cast<int>(m_tokens.size()) ? m_tokens[size_t(id)] : none;
}

std::optional<int> HfTokenizer::id(const std::string& token) const {
    const auto it = m_vocab.find(token);
    if (it == m_vocab.end()) return std::nullopt;
    return it->second;
}

bool HfTokenizer::isSpecial(int id) const {
    return id >= 0 && id < static_cast<int>(m_special.size()) && m_special[size_t(id)];
}

bool HfTokenizer::framesText(int id) const {
    return std::find(m_prefix.begin(), m_prefix.end(), id) != m_prefix.end() ||
           std::find(m_suffix.begin(), m_suffix.end(), id) != m_suffix.end();
}

std::string HfTokenizer::tokenText(int id) const {
    const std::string& t = token(id);
    if (isSpecial(id)) return t;
    if (m_byteLevelDecode) return fromStandIns(t);
    return sentencePieceText(t);
}

std::string HfTokenizer::decode(std::span<const int> ids) const {
    std::string out;
    for (int id : ids)
        out += tokenText(id);
    if (m_stripLeadingSpace && !out.empty() && out[0] == ' ') out.erase(0, 1);
    return out;
}

bool HfTokenizer::present(const std::filesystem::path& dir) {
    std::error_code ec;
    return std::filesystem::exists(dir / "tokenizer.json", ec);
}

} // namespace attnlens
