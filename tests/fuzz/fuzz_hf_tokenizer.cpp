// libFuzzer target: the files of a modern LLM folder that are not weights, as a user's folder brings them.
// The first input byte chooses: 0 — tokenizer.json (HfTokenizer) then a fixed text through it; 1 —
// tokenizer_config.json beside the GPT-2 fixture's tokenizer.json; 2 — model.safetensors.index.json beside
// one real shard (TensorFile::openSharded); 3 — config.json of a Llama-style model (readLlamaConfig, with a
// generation_config.json of the same bytes); 4 — the rest as text (any bytes) through the GPT-2 fixture's
// tokenizer.json and the Llama fixture's (PCRE2 split regex); 5 — tokenizer.model (SentencePieceTokenizer);
// 6 — tokenizer_config.json beside a tiny tokenizer.model (tests/data/text/llama-spm: 400 BPE pieces with
// byte fallback, trained by spm_train on the README); 7 — tokenizer_config.json beside SigLIP's spiece.model
// (tests/data/siglip/siglip, SiglipTokenizer); 8 — the rest as text through SigLIP's tokenizer, unpadded and
// padded to 64. Any input must end in tokens or attnlens::Error.
#include "core/io/tensor_file.h"
#include "core/models/llama_model.h"
#include "core/text/hf_tokenizer.h"
#include "core/text/sentencepiece_tokenizer.h"
#include "core/text/siglip_tokenizer.h"
#include "core/util/error.h"
#include "fuzz_file.h"

#include <filesystem>
#include <string>

namespace {

const char* const kText = "Café naïve — 中国人 don't  stop!! 😀 <|endoftext|> x\n\t 123456 ";

void exercise(const attnlens::TextTokenizer& tok, const std::string& text) {
    const auto e = tok.encode(text);
    if (const auto* hf = dynamic_cast<const attnlens::HfTokenizer*>(&tok)) (void)hf->decode(e.ids);
    for (int id : {-1, 0, tok.vocabSize() - 1, tok.vocabSize() + 5})
        (void)tok.tokenText(id);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::filesystem::path fixtures(ATTNLENS_FUZZ_TEXT_DIR);
    const int which = data[0] % 9;
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        const fuzz::TempDir dir("hf-tokenizer");
        if (which == 7 || which == 8) {
            const std::filesystem::path siglip = fixtures / ".." / "siglip" / "siglip";
            dir.copy(siglip / "spiece.model", "spiece.model");
            if (which == 7) dir.write("tokenizer_config.json", data + 1, size - 1);
            const auto tok = attnlens::SiglipTokenizer::load(dir.path());
            const std::string& text = which == 7 ? std::string(kText) : rest;
            exercise(*tok, text);
            (void)tok->encodePadded(text, 64);
        } else if (which == 4) {
            static const auto splitting = attnlens::HfTokenizer::load(fixtures / ".." / "llm" / "llama-gqa");
            exercise(*attnlens::HfTokenizer::load(fixtures / "gpt2-bare"), rest);
            exercise(*splitting, rest); // Llama 3's split regex over any bytes
        } else if (which == 5 || which == 6) {
            if (which == 5) {
                dir.write("tokenizer.model", data + 1, size - 1);
            } else {
                dir.copy(fixtures / "llama-spm" / "tokenizer.model", "tokenizer.model");
                dir.write("tokenizer_config.json", data + 1, size - 1);
            }
            exercise(*attnlens::SentencePieceTokenizer::load(dir.path()), kText);
        } else if (which == 0) {
            dir.write("tokenizer.json", data + 1, size - 1);
            exercise(*attnlens::HfTokenizer::load(dir.path()), kText);
        } else if (which == 1) {
            dir.copy(fixtures / "gpt2-bare" / "tokenizer.json", "tokenizer.json");
            dir.write("tokenizer_config.json", data + 1, size - 1);
            exercise(*attnlens::HfTokenizer::load(dir.path()), kText);
        } else if (which == 2) {
            dir.copy(fixtures / "gpt2-bare" / "model.safetensors", "model-00001-of-00001.safetensors");
            dir.write("model.safetensors.index.json", data + 1, size - 1);
            const auto file = attnlens::TensorFile::open(dir.path() / "model.safetensors.index.json");
            for (const auto& t : file.tensors())
                (void)file.load(t);
        } else {
            dir.write("config.json", data + 1, size - 1);
            dir.write("generation_config.json", data + 1, size - 1);
            (void)attnlens::readLlamaConfig(dir.path());
        }
    } catch (const attnlens::Error&) {
    }
    return 0;
}
