// libFuzzer target: a Marian folder's tokenizer files as MarianTokenizer::load reads them, then a sentence
// encoded and ids decoded. The first input byte chooses the file under test, the others are the tiny test
// model's: 0 — vocab.json; 1 — source.spm; 2 — target.spm. Any input must end in a tokenizer (that encodes
// and decodes) or attnlens::Error.
#include "core/text/marian_tokenizer.h"
#include "core/util/error.h"
#include "fuzz_file.h"

#include <filesystem>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const char* const kFiles[] = {"vocab.json", "source.spm", "target.spm"};
    const int which = data[0] % 3;
    const std::filesystem::path tiny(ATTNLENS_FUZZ_MARIAN_DIR);
    const fuzz::TempDir dir("tokenizer");
    for (int i = 0; i < 3; ++i) {
        if (i == which)
            dir.write(kFiles[i], data + 1, size - 1);
        else
            dir.copy(tiny / kFiles[i], kFiles[i]);
    }
    try {
        const auto tokenizer = attnlens::MarianTokenizer::load(dir.path());
        const auto encoding = tokenizer->encode(">>en<< Die Kinder spielen im Garten, über 12 Brücken.");
        std::vector<int> ids = encoding.ids;
        for (int id = -2; id < tokenizer->idLimit() + 2 && id < 300; ++id)
            ids.push_back(id);
        (void)tokenizer->decode(ids);
        for (int id : encoding.ids)
            (void)tokenizer->idToPiece(id);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
