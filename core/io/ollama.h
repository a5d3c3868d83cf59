#pragma once
// Ollama's model store, read in place: $OLLAMA_MODELS, else ~/.ollama/models, holds manifests/<registry>/
// <namespace>/<model>/<tag> (JSON: "layers", each with a mediaType and a "sha256:<hex>" digest) and
// blobs/sha256-<hex>. A model's "application/vnd.ollama.image.model" layer is a GGUF file (core/io/gguf.h);
// nothing is copied or converted.
//
//   auto models = listOllamaModels(ollamaModelsDir());          // "qwen2.5:0.5b", "user/model:tag", …
//   std::filesystem::path gguf = resolveModelReference("ollama:qwen2.5:0.5b");
//
// Names as Ollama writes them: "qwen2.5" is registry.ollama.ai/library/qwen2.5 with tag "latest"; "user/name"
// another namespace; "hf.co/org/repo:Q4_K_M" another registry.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct OllamaModel {
    std::string name;               // "qwen2.5:0.5b", "user/name:tag", "hf.co/org/repo:Q4_K_M"
    std::filesystem::path manifest; // its manifest file
    std::filesystem::path model;    // the GGUF blob its model layer names (empty: the manifest has none)
    uint64_t bytes = 0;             // the model layer's size as the manifest says it
    bool present = false;           // the blob is there
};

// $OLLAMA_MODELS, else $HOME/.ollama/models (it may not exist). Never throws.
std::filesystem::path ollamaModelsDir();
// Every model in the store, by name; manifests that cannot be read are left out. Never throws.
std::vector<OllamaModel> listOllamaModels(const std::filesystem::path& modelsDir);
// One model by name (tag "latest" when none is given). Throws attnlens::Error saying what is missing — the
// manifest (naming the store's models), its model layer, the blob — or what is wrong with the manifest.
OllamaModel findOllamaModel(const std::filesystem::path& modelsDir, std::string_view name);
// A --model argument: "ollama:NAME[:TAG]" → that model's GGUF blob in ollamaModelsDir(); anything else as it
// is. Throws as findOllamaModel.
std::filesystem::path resolveModelReference(const std::string& argument);

} // namespace attnlens
