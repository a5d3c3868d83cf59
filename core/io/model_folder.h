#pragma once
// Model folders use the Hugging Face layout; `model_type` in config.json selects the architecture.
// Built-in models are stored the same way, so one loader serves both.

#include <filesystem>
#include <string>
#include <vector>

namespace attnlens {

// Diffusion: a diffusers UNet2DModel or pipeline folder (core/diffusion/diffusion_model.h describes it).
// Text: model_type "bert" or "gpt2" (core/models/text_folder.h).
enum class ModelKind { Marian, Vit, Diffusion, Text, Unknown };

struct ModelFolderInfo {
    std::filesystem::path dir;
    std::string modelType; // config.json "model_type"
    ModelKind kind = ModelKind::Unknown;
    std::filesystem::path weights; // model.safetensors, or pytorch_model.bin when that is all the folder has
};

// The checkpoint of a folder as transformers / diffusers choose it: `<stem>.safetensors` when it exists, else
// `<stem>.bin` (a torch.save state dict). Throws attnlens::Error naming both when neither exists.
std::filesystem::path findWeightsFile(const std::filesystem::path& dir, const std::string& stem);

// Checks that dir is a folder with config.json and a checkpoint (model.safetensors or pytorch_model.bin) and
// reads model_type.
// Throws attnlens::Error naming what is missing.
ModelFolderInfo inspectModelFolder(const std::filesystem::path& dir);

// Where built-in models live: the source tree (build tree runs), then the install data dir, then
// ATTNLENS_MODELS_DIR from the environment (checked first). Returns the first existing
// `<root>/resources/models/<name>` or `<datadir>/models/<name>`; throws if none exists.
std::filesystem::path builtinModelDir(const std::string& name);
// The folder holding resources (samples, models), same search order.
std::filesystem::path resourcesDir();

} // namespace attnlens
