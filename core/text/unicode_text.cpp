#include "core/text/unicode_text.h"

#include "core/util/error.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <climits>

namespace attnlens::unicode {

namespace {

std::u16string toUtf16(std::u32string_view text) {
    std::u16string out;
    out.reserve(text.size());
    for (char32_t c : text) {
        if (c > 0xFFFF) {
            out.push_back(static_cast<char16_t>(U16_LEAD(c)));
            out.push_back(static_cast<char16_t>(U16_TRAIL(c)));
        } else {
            out.push_back(static_cast<char16_t>(c));
        }
    }
    return out;
}

std::u32string fromUtf16(const char16_t* s, int32_t n) {
    std::u32string out;
    out.reserve(static_cast<size_t>(n));
    for (int32_t i = 0; i < n;) {
        UChar32 c;
        U16_NEXT(s, i, n, c);
        out.push_back(static_cast<char32_t>(c));
    }
    return out;
}

std::u32string normalize(std::u32string_view text, const UNormalizer2* normalizer) {
    const std::u16string in = toUtf16(text);
    UErrorCode status = U_ZERO_ERROR;
    std::u16string out(in.size() * 3 + 8, u'\0');
    int32_t n = unorm2_normalize(normalizer, in.data(), static_cast<int32_t>(in.size()), out.data(),
                                 static_cast<int32_t>(out.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
        status = U_ZERO_ERROR;
        out.assign(static_cast<size_t>(n), u'\0');
        n = unorm2_normalize(normalizer, in.data(), static_cast<int32_t>(in.size()), out.data(), n, &status);
    }
    if (U_FAILURE(status)) throw Error(std::string("Unicode normalization failed: ") + u_errorName(status));
    return fromUtf16(out.data(), n);
}

uint32_t categoryMask(char32_t c) {
    return U_GET_GC_MASK(static_cast<UChar32>(c));
}

} // namespace

std::u32string decodeUtf8(std::string_view text) {
    std::u32string out;
    out.reserve(text.size());
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    for (size_t i = 0; i < n;) {
        const unsigned char b = s[i];
        int length = 0;
        char32_t c = 0, min = 0;
        if (b < 0x80) {
            out.push_back(b);
            ++i;
            continue;
        }
        if ((b & 0xE0) == 0xC0)
            length = 2, c = b & 0x1F, min = 0x80;
        else if ((b & 0xF0) == 0xE0)
            length = 3, c = b & 0x0F, min = 0x800;
        else if ((b & 0xF8) == 0xF0)
            length = 4, c = b & 0x07, min = 0x10000;
        bool ok = length > 0 && i + static_cast<size_t>(length) <= n;
        for (int k = 1; ok && k < length; ++k) {
            if ((s[i + static_cast<size_t>(k)] & 0xC0) != 0x80)
                ok = false;
            else
                c = (c << 6) | (s[i + static_cast<size_t>(k)] & 0x3F);
        }
        if (ok && (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))) ok = false;
        if (!ok) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        out.push_back(c);
        i += static_cast<size_t>(length);
    }
    return out;
}

void appendUtf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

std::string encodeUtf8(std::u32string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t c : text)
        appendUtf8(out, c);
    return out;
}

bool isLetter(char32_t c) {
    return (categoryMask(c) & U_GC_L_MASK) != 0;
}
bool isNumber(char32_t c) {
    return (categoryMask(c) & U_GC_N_MASK) != 0;
}
bool isPunctuationCategory(char32_t c) {
    return (categoryMask(c) & U_GC_P_MASK) != 0;
}
bool isNonSpacingMark(char32_t c) {
    return (categoryMask(c) & U_GC_MN_MASK) != 0;
}
bool isControlOrFormat(char32_t c) {
    return (categoryMask(c) & (U_GC_CC_MASK | U_GC_CF_MASK)) != 0;
}
bool isSpaceSeparator(char32_t c) {
    return (categoryMask(c) & U_GC_ZS_MASK) != 0;
}
bool isWhiteSpace(char32_t c) {
    return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0;
}
bool isPythonSpace(char32_t c) {
    return isWhiteSpace(c) || (c >= 0x1C && c <= 0x1F);
}

std::u32string toLower(char32_t c) {
    const std::u16string in = toUtf16(std::u32string_view(&c, 1));
    char16_t out[16];
    UErrorCode status = U_ZERO_ERROR;
    const int32_t n =
        u_strToLower(reinterpret_cast<UChar*>(out), 16, reinterpret_cast<const UChar*>(in.data()),
                     static_cast<int32_t>(in.size()), "", &status);
    if (U_FAILURE(status) || n > 16) return std::u32string(1, c);
    return fromUtf16(out, n);
}

std::u32string normalizeNfc(std::u32string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfc = unorm2_getNFCInstance(&status);
    if (U_FAILURE(status)) throw Error("Unicode NFC data is not available");
    return normalize(text, nfc);
}

std::u32string normalizeNfd(std::u32string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfd = unorm2_getNFDInstance(&status);
    if (U_FAILURE(status)) throw Error("Unicode NFD data is not available");
    return normalize(text, nfd);
}

bool isValidUtf8(std::string_view text) {
    if (text.size() > size_t(INT32_MAX)) return false; // ICU's indices are 32-bit; no text is that long
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    const auto n = static_cast<int32_t>(text.size());
    for (int32_t i = 0; i < n;) {
        UChar32 c = 0;
        U8_NEXT(s, i, n, c); // negative for an ill-formed sequence (overlong, surrogate, past U+10FFFF)
        if (c < 0) return false;
    }
    return true;
}

std::u32string normalizeNfkc(std::u32string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfkc = unorm2_getNFKCInstance(&status);
    if (U_FAILURE(status)) throw Error("Unicode NFKC data is not available");
    return normalize(text, nfkc);
}

} // namespace attnlens::unicode
