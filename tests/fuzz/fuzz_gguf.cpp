// libFuzzer target: a user's GGUF file (llama.cpp, LM Studio, an Ollama blob) — header, metadata of every
// type, tensor table, offsets — opened as the app opens it, every typed metadata read tried, its tokenizer
// built from tokenizer.ggml.* (and a text encoded), the Llama family's and GPT-2's configs read from it
// (rope_freqs decoded, Gemma's sliding pattern), and every tensor of up to 4M elements decoded from its
// blocks. Any input must end in an opened file or attnlens::Error.
#include "core/io/gguf.h"
#include "core/models/gpt2_gguf.h"
#include "core/models/llama_gguf.h"
#include "core/text/gguf_tokenizer.h"
#include "core/util/error.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::TempFile file(data, size, "model.gguf");
    try {
        const auto f = attnlens::GgufFile::open(file.path());
        for (const auto& [key, value] : f.metadata()) {
            (void)value.describe();
            try {
                (void)f.number(key);
            } catch (const attnlens::Error&) {
            }
        }
        try {
            (void)attnlens::ggufTokenizer(f)->encode("Hello, wörld 123!");
        } catch (const attnlens::Error&) {
        }
        try {
            (void)attnlens::llamaConfigFromGguf(f);
        } catch (const attnlens::Error&) {
        }
        try {
            (void)attnlens::gpt2ConfigFromGguf(f);
        } catch (const attnlens::Error&) {
        }
        for (const auto& t : f.tensors())
            if (attnlens::shapeNumel(t.shape) <= (int64_t{1} << 22)) (void)f.load(t);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
