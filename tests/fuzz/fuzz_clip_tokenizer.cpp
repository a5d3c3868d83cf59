// libFuzzer target: a Stable Diffusion pipeline's tokenizer/ folder as ClipTokenizer reads it (issue 41), and
// any text it tokenizes. The first input byte chooses which file the rest of the input replaces beside the
// tiny pipeline's other tokenizer files: 0 — vocab.json, 1 — merges.txt, 2 — tokenizer_config.json, 3 —
// special_tokens_map.json, 4 — added_tokens.json; 5 — the rest as text (any bytes, invalid UTF-8 included)
// for the fixture's tokenizer, plain and padded to 77. Any input must end in ids or attnlens::Error.
#include "core/text/clip_tokenizer.h"
#include "core/util/error.h"
#include "fuzz_file.h"

#include <filesystem>
#include <string>

namespace {

const char* const kText = "A Sneaker ABOVE a bag — café 東京 it's 123 !! <|endoftext|> 😀";

void exercise(const attnlens::ClipTokenizer& tok, const std::string& text) {
    const auto e = tok.encode(text);
    for (int id : e.ids)
        (void)tok.tokenText(id);
    (void)tok.encodePadded(text, 77);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::filesystem::path fixture(ATTNLENS_FUZZ_CLIP_DIR);
    const int which = data[0] % 6;
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        if (which == 5) { // the fixture's tokenizer, loaded once (a load costs more than the text)
            static const auto tokenizer = attnlens::ClipTokenizer::load(fixture);
            exercise(*tokenizer, rest);
            return 0;
        }
        const char* const files[] = {"vocab.json", "merges.txt", "tokenizer_config.json",
                                     "special_tokens_map.json", "added_tokens.json"};
        const fuzz::TempDir dir("clip-tokenizer");
        for (int i = 0; i < 4; ++i)
            if (i != which) dir.copy(fixture / files[i], files[i]);
        dir.write(files[which], data + 1, size - 1);
        exercise(*attnlens::ClipTokenizer::load(dir.path()), kText);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
