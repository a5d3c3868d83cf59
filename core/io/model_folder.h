#pragma once
// Model folders use the Hugging Face layout; `model_type` in config.json selects the architecture.
// Built-in models are stored the same way, so one loader serves both.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// Diffusion: a diffusers UNet2DModel or pipeline folder (core/diffusion/diffusion_model.h describes it).
// Text: model_type "bert", "gpt2" or a Llama-style decoder (core/models/text_folder.h).
enum class ModelKind { Marian, Vit, Diffusion, Text, TextToImage, Unknown };

struct ModelFolderInfo {
    std::filesystem::path dir;
    std::string modelType; // config.json "model_type"
    ModelKind kind = ModelKind::Unknown;
    std::filesystem::path weights; // model.safetensors, or pytorch_model.bin when that is all the folder has
};

// --- The model registry (issue 37): one row per family — the config.json model_type(s) it reads, the kind of
// model it is (which page shows it, which CLI subcommands take it) and its name for people — and one built-in
// model per kind. inspect, the CLI's default models, the GUI's open / drop and the error messages read it, so
// a new family is one row here (with its model file, its tokenizer if new, and goldens;
// docs/adding-a-model.md). core/registry/model_registry.h tells a folder's kind, diffusers folders included.
//
//   const ModelFamily* f = familyOfModelType("gpt2");       // {"GPT-2", {"gpt2"}, ModelKind::Text}
//   builtinModelDir(std::string(builtinModelName(ModelKind::Vit)));    // resources/models/vit-fashion-mnist

struct ModelFamily {
    std::string_view name;                    // "GPT-2"
    std::vector<std::string_view> modelTypes; // the model_type values it reads ({} for diffusers folders)
    ModelKind kind;
};

// Every family this version opens, in the order the messages list them.
std::span<const ModelFamily> modelFamilies();
// nullptr when no family reads that model_type.
const ModelFamily* familyOfModelType(std::string_view modelType);

// The built-in model of a kind (a folder name under resources/models), "" for ModelKind::Unknown.
std::string_view builtinModelName(ModelKind kind);
// What a kind is for, in a few words: "translation", "vision", "diffusion", "text".
std::string_view modelKindPurpose(ModelKind kind);

// The families for messages: "Marian (translation), ViT (vision), diffusers UNet2DModel (diffusion), BERT,
// GPT-2 and Llama-style decoders (text)".
std::string supportedFamilies();

// The checkpoint of a folder as transformers / diffusers choose it: `<stem>.safetensors`, its shards'
// `<stem>.safetensors.index.json`, `<stem>.bin` (a torch.save state dict; "model" → pytorch_model.bin) or its
// `.bin.index.json`, in that order (TensorFile::open reads each). Throws attnlens::Error when none exists.
std::filesystem::path findWeightsFile(const std::filesystem::path& dir, const std::string& stem);

// Checks that dir is a folder with config.json and a checkpoint (model.safetensors or pytorch_model.bin) and
// reads model_type.
// Throws attnlens::Error naming what is missing.
// Throws attnlens::Error for a GGUF file given where a model folder is expected (saying where GGUF files
// open). Else nothing.
void refuseGgufFile(const std::filesystem::path& path);

ModelFolderInfo inspectModelFolder(const std::filesystem::path& dir);

// Where built-in models live: the source tree (build tree runs), then the install data dir, then
// ATTNLENS_MODELS_DIR from the environment (checked first). Returns the first existing
// `<root>/resources/models/<name>` or `<datadir>/models/<name>`; throws if none exists.
std::filesystem::path builtinModelDir(const std::string& name);
// The built-in model of a kind (builtinModelName), found as above.
std::filesystem::path builtinModelDir(ModelKind kind);
// The folder holding resources (samples, models), same search order.
std::filesystem::path resourcesDir();

} // namespace attnlens
