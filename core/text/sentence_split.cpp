#include "core/text/sentence_split.h"

#include "core/text/marian_tokenizer.h"
#include "core/util/error.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>

namespace attnlens {

namespace {

bool isSpace(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The last word of a piece (after its last space), e.g. "ca." of "Das kostet ca."
std::string_view lastWord(std::string_view piece) {
    const size_t space = piece.find_last_of(" \t\n\r");
    return space == std::string_view::npos ? piece : piece.substr(space + 1);
}

// A piece that ends in a full stop which does not end a sentence in German.
bool endsInsideSentence(std::string_view piece) {
    if (piece.size() < 2 || piece.back() != '.') return false;
    const std::string_view word = lastWord(piece);
    const std::string_view stem = word.substr(0, word.size() - 1);
    if (stem.empty()) return false;
    // "3." (an ordinal: am 3. Oktober), "S." (an initial)
    if (std::all_of(stem.begin(), stem.end(), [](unsigned char c) { return std::isdigit(c); })) return true;
    if (stem.size() == 1 && std::isalpha(static_cast<unsigned char>(stem[0]))) return true;
    static constexpr std::array<std::string_view, 36> kAbbreviations = {
        "z.B", "z. B", "u.a", "d.h", "usw",  "bzw",  "ca",   "Nr",  "Dr",  "Prof", "Hr",   "Fr",
        "St",  "Str",  "vgl", "ggf", "evtl", "inkl", "bspw", "etc", "Jh",  "Mio",  "Mrd",  "Tel",
        "z.T", "o.ä",  "u.ä", "sog", "zzgl", "max",  "min",  "Abs", "Art", "Bd",   "Hrsg", "Mo"};
    return std::find(kAbbreviations.begin(), kAbbreviations.end(), stem) != kAbbreviations.end();
}

} // namespace

std::vector<SentenceSpan> splitSentences(std::string_view text, const std::string& language) {
    if (!isValidUtf8(text)) throw Error("the text is not valid UTF-8");
    UErrorCode status = U_ZERO_ERROR;
    // ICU's own abbreviation list ("@ss=standard") is not used: for German it holds "Uhr." and so keeps
    // "Wir kommen um 8 Uhr. Er wartet." together; the list below is ours.
    const icu::Locale locale(language.c_str());
    std::unique_ptr<icu::BreakIterator> it(icu::BreakIterator::createSentenceInstance(locale, status));
    if (U_FAILURE(status) || !it)
        throw Error(std::string("ICU has no sentence rules: ") + u_errorName(status));
    const icu::UnicodeString u =
        icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), int32_t(text.size())));
    it->setText(u);
    // ICU's boundaries (UTF-16 offsets) → byte offsets: the UTF-8 length of each piece in turn.
    std::vector<std::pair<size_t, size_t>> pieces;
    size_t byte = 0;
    for (int32_t start = it->first(), end = it->next(); end != icu::BreakIterator::DONE;
         start = end, end = it->next()) {
        std::string utf8;
        u.tempSubStringBetween(start, end).toUTF8String(utf8);
        pieces.emplace_back(byte, byte + utf8.size());
        byte += utf8.size();
    }
    std::vector<SentenceSpan> spans;
    for (size_t i = 0; i < pieces.size(); ++i) {
        size_t b = pieces[i].first, e = pieces[i].second;
        // Glue the next piece on while this one ends in an abbreviation, an ordinal or an initial.
        while (i + 1 < pieces.size()) {
            size_t last = e;
            while (last > b && isSpace(static_cast<unsigned char>(text[last - 1])))
                --last;
            if (!endsInsideSentence(text.substr(b, last - b))) break;
            e = pieces[++i].second;
        }
        while (b < e && isSpace(static_cast<unsigned char>(text[b])))
            ++b;
        while (e > b && isSpace(static_cast<unsigned char>(text[e - 1])))
            --e;
        if (e > b) spans.push_back({b, e});
    }
    return spans;
}

std::vector<std::string> sentencesOf(std::string_view text, const std::string& language) {
    std::vector<std::string> out;
    for (const SentenceSpan& s : splitSentences(text, language))
        out.emplace_back(text.substr(s.begin, s.end - s.begin));
    return out;
}

} // namespace attnlens
