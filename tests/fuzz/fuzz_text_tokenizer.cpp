// libFuzzer target: a BERT or GPT-2 folder's tokenizer files as the text tokenizers read them, and any text
// they tokenize. The first input byte chooses: 0 — vocab.txt (WordPiece); 1 — vocab.json and 2 — merges.txt
// beside the GPT-2 fixture's other file; 3 — tokenizer.json (BPE); 4 — tokenizer.json (WordPiece); 5 — the
// rest of the input as text (any bytes, invalid UTF-8 included) for the fixtures' two tokenizers. Any input
// must end in tokens (that decode) or attnlens::Error.
#include "core/text/text_tokenizers.h"
#include "core/util/error.h"
#include "fuzz_file.h"

#include <filesystem>
#include <string>

namespace {

const char* const kText = "Café naïve — 中国人 don't  stop!! [MASK] 😀 <|endoftext|> x";

void exercise(const attnlens::WordPieceTokenizer& tok, const std::string& text) {
    (void)tok.encode(text);
}

void exercise(const attnlens::ByteBpeTokenizer& tok, const std::string& text) {
    const auto e = tok.encode(text);
    (void)tok.decode(e.ids);
    std::vector<int> ids{-1, 0, tok.vocabSize(), tok.vocabSize() + 5};
    (void)tok.decode(ids);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::filesystem::path fixtures(ATTNLENS_FUZZ_TEXT_DIR);
    const int which = data[0] % 6;
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        if (which == 5) { // the fixtures' tokenizers, loaded once (a load costs more than the text)
            static const auto wordPiece = attnlens::WordPieceTokenizer::load(fixtures / "bert-mlm");
            static const auto byteBpe = attnlens::ByteBpeTokenizer::load(fixtures / "gpt2");
            exercise(*wordPiece, rest);
            exercise(*byteBpe, rest);
            return 0;
        }
        const fuzz::TempDir dir("text-tokenizer");
        if (which == 0) {
            dir.write("vocab.txt", data + 1, size - 1);
            exercise(*attnlens::WordPieceTokenizer::load(dir.path()), kText);
        } else if (which == 1 || which == 2) {
            dir.write(which == 1 ? "vocab.json" : "merges.txt", data + 1, size - 1);
            dir.copy(fixtures / "gpt2" / (which == 1 ? "merges.txt" : "vocab.json"),
                     which == 1 ? "merges.txt" : "vocab.json");
            exercise(*attnlens::ByteBpeTokenizer::load(dir.path()), kText);
        } else {
            dir.write("tokenizer.json", data + 1, size - 1);
            if (which == 3)
                exercise(*attnlens::ByteBpeTokenizer::load(dir.path()), kText);
            else
                exercise(*attnlens::WordPieceTokenizer::load(dir.path()), kText);
        }
    } catch (const attnlens::Error&) {
    }
    return 0;
}
