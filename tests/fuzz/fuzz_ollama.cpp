// libFuzzer target: an Ollama manifest as a user's model store holds it
// (manifests/registry.ollama.ai/library/ m/latest) — found by name, listed with the store, its model layer's
// digest turned into a blob path. Any input must end in a model or attnlens::Error (the listing never
// throws).
#include "core/io/ollama.h"
#include "core/util/error.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::filesystem::path store =
        std::filesystem::temp_directory_path() / ("attnlens-fuzz-ollama-" + std::to_string(::getpid()));
    const std::filesystem::path manifest =
        store / "manifests" / "registry.ollama.ai" / "library" / "m" / "latest";
    std::filesystem::create_directories(manifest.parent_path());
    if (std::FILE* f = std::fopen(manifest.c_str(), "wb")) {
        if (size > 0) std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
    try {
        (void)attnlens::findOllamaModel(store, "m");
    } catch (const attnlens::Error&) {
    }
    (void)attnlens::listOllamaModels(store);
    return 0;
}
