#pragma once
// The Unicode facts the text tokenizers need, from ICU (Debian's libicu): UTF-8 decoding and encoding,
// general categories, full lower-case mapping, NFC / NFD, and the two notions of white space that
// transformers' Python tokenizers use (str.isspace and the `regex` module's \s). Invalid UTF-8 is decoded as
// U+FFFD per bad byte, as Python's "replace" error handler does.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::unicode {

std::u32string decodeUtf8(std::string_view text);
std::string encodeUtf8(std::u32string_view text);
void appendUtf8(std::string& out, char32_t c);

bool isValidUtf8(std::string_view text); // well-formed: no overlongs, surrogates or values past U+10FFFF
bool isLetter(char32_t c);               // general category L*
bool isNumber(char32_t c);               // N*
bool isPunctuationCategory(char32_t c);  // P*
bool isNonSpacingMark(char32_t c);       // Mn
bool isControlOrFormat(char32_t c);      // Cc or Cf
bool isSpaceSeparator(char32_t c);       // Zs
bool isWhiteSpace(char32_t c);           // the White_Space property (the `regex` module's \s)
bool isPythonSpace(char32_t c);          // str.isspace(): White_Space and U+001C…U+001F

// str.lower() of one code point (full mapping: "İ" → "i̇").
std::u32string toLower(char32_t c);
std::u32string normalizeNfc(std::u32string_view text);
std::u32string normalizeNfd(std::u32string_view text);
std::u32string normalizeNfkc(std::u32string_view text);

} // namespace attnlens::unicode
