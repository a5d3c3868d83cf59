#include "core/text/added_tokens.h"

#include "core/text/unicode_text.h"

#include <algorithm>

namespace attnlens {

namespace {

// Where the code point that ends at byte `at` begins (text is valid UTF-8; at > 0).
size_t previousStart(std::string_view text, size_t at) {
    size_t begin = at - 1;
    while (begin > 0 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80)
        --begin;
    return begin;
}

// The code point that ends at / starts at byte `at`; 0 at the ends.
char32_t codePointBefore(std::string_view text, size_t at) {
    if (at == 0) return 0;
    const size_t begin = previousStart(text, at);
    const std::u32string c = unicode::decodeUtf8(text.substr(begin, at - begin));
    return c.empty() ? 0 : c[0];
}

size_t codePointLength(std::string_view text, size_t at) {
    const auto lead = static_cast<unsigned char>(text[at]);
    const size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    return std::min(n, text.size() - at);
}

char32_t codePointAt(std::string_view text, size_t at) {
    if (at >= text.size()) return 0;
    const std::u32string c = unicode::decodeUtf8(text.substr(at, codePointLength(text, at)));
    return c.empty() ? 0 : c[0];
}

// A word character as the regex \w the library uses to bound single_word tokens.
bool isWordChar(char32_t c) {
    return c == U'_' || unicode::isLetter(c) || unicode::isNumber(c) || unicode::isNonSpacingMark(c);
}

} // namespace

AddedTokens::AddedTokens(std::vector<AddedToken> tokens) : m_byFirstByte(256) {
    for (AddedToken& t : tokens)
        if (!t.content.empty()) m_tokens.push_back(std::move(t));
    for (size_t i = 0; i < m_tokens.size(); ++i)
        m_byFirstByte[static_cast<unsigned char>(m_tokens[i].content[0])].push_back(static_cast<int>(i));
    for (auto& list : m_byFirstByte)
        std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
            return m_tokens[size_t(a)].content.size() > m_tokens[size_t(b)].content.size();
        });
}

const AddedToken* AddedTokens::longestAt(std::string_view text, size_t at) const {
    for (int i : m_byFirstByte[static_cast<unsigned char>(text[at])]) {
        const AddedToken& t = m_tokens[size_t(i)];
        if (text.compare(at, t.content.size(), t.content) != 0) continue;
        if (t.singleWord &&
            (isWordChar(codePointBefore(text, at)) || isWordChar(codePointAt(text, at + t.content.size()))))
            continue;
        return &t;
    }
    return nullptr;
}

void AddedTokens::split(std::string_view text, const std::function<void(size_t, size_t)>& plain,
                        const std::function<void(const AddedToken&)>& token) const {
    size_t start = 0;
    for (size_t i = 0; i < text.size() && !m_tokens.empty();) {
        const AddedToken* hit = longestAt(text, i);
        if (!hit) {
            i += codePointLength(text, i);
            continue;
        }
        size_t end = i;
        if (hit->lstrip)
            while (end > start && unicode::isWhiteSpace(codePointBefore(text, end)))
                end = previousStart(text, end);
        if (end > start) plain(start, end);
        token(*hit);
        i += hit->content.size();
        if (hit->rstrip)
            while (i < text.size() && unicode::isWhiteSpace(codePointAt(text, i)))
                i += codePointLength(text, i);
        start = i;
    }
    if (start < text.size()) plain(start, text.size());
}

} // namespace attnlens
