#pragma once
// Sentences of a paragraph, for models trained on single sentences (the built-in translator collapses on a
// 100-word paragraph given as one input): ICU's sentence break rules for the language, then German
// conventions on top — no break after an ordinal ("am 3. Oktober"), a single letter ("Johann S. Bach") or a
// common abbreviation (z. B., d. h., ca., Dr., Nr., usw.).
//
//   for (const SentenceSpan& s : splitSentences("Wie geht es dir? Mir geht es gut."))
//       translate(text.substr(s.begin, s.end - s.begin));   // "Wie geht es dir?", "Mir geht es gut."
//
// Throws attnlens::Error for text that is not UTF-8.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct SentenceSpan {
    size_t begin = 0; // byte offsets into the UTF-8 text; surrounding white space excluded
    size_t end = 0;
};

std::vector<SentenceSpan> splitSentences(std::string_view text, const std::string& language = "de");
// The sentences themselves.
std::vector<std::string> sentencesOf(std::string_view text, const std::string& language = "de");

} // namespace attnlens
