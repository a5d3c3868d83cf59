#pragma once
// What the tokenizers of core/text share (text_tokenizers.cpp, clip_tokenizer.cpp): reading their files and
// the clean-up of transformers' BasicTokenizer. Not for code outside core/text.

#include "core/io/json_file.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnlens::tokenizer_util {

std::string readText(const std::filesystem::path& path); // the whole file; attnlens::Error when unreadable
bool fileExists(const std::filesystem::path& p);
const Json* member(const Json& j, const char* key); // j[key] when j is an object holding a non-null key
// A vocab.json object (token -> id) as a map; attnlens::Error naming `where` for a non-integer or
// out-of-range id.
std::unordered_map<std::string, int> readVocabObject(const Json& vocab, const std::string& where);
// The id-ordered token list of a vocabulary; ids must not be negative nor far past its size.
void indexVocabulary(const std::unordered_map<std::string, int>& vocab, std::vector<std::string>& tokens,
                     const std::string& where);

// GPT-2's byte stand-ins (bytes_to_unicode): printable Latin-1 bytes are themselves, the others U+0100,
// U+0101, … in byte order; each byte's as UTF-8 and the way back.
void byteStandIns(std::string (&toUnicode)[256], std::unordered_map<char32_t, unsigned char>& toByte);

bool isCjk(char32_t c); // BERT's "Chinese character" blocks
// BasicTokenizer's clean-up before its split: U+0000, U+FFFD and control / format characters dropped (tab,
// newline and carriage return are white space), white space (those, ' ' and Zs) as ' ', CJK ideographs spaced
// when `chinese`, then NFC.
std::u32string basicClean(std::u32string_view text, bool chinese);
// Python's str.split(): runs of str.isspace() characters separate words.
std::vector<std::u32string> splitPythonSpace(std::u32string_view text);

} // namespace attnlens::tokenizer_util
