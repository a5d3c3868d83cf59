#pragma once
// Which kind of model a folder holds, from the registry (core/io/model_folder.h: one row per family) and the
// diffusers layout (core/diffusion/diffusion_model.h), checked in this one place: the GUI's open / drop, the
// GUI harness and the CLI's inspect and bench ask it.
//
//   ModelKind k = detectModelKind(dir);   // Diffusion, or the family of config.json's model_type

#include "core/io/model_folder.h"

#include <filesystem>

namespace attnlens {

// A diffusers pipeline with a text encoder (model_index.json naming one: Stable Diffusion's layout) is
// TextToImage, another diffusers folder (model_index.json, unet/, or a diffusers config) is Diffusion;
// otherwise the kind of the family reading its model_type (Unknown when none does). Throws attnlens::Error as
// inspectModelFolder does (no folder, no config.json, no checkpoint).
ModelKind detectModelKind(const std::filesystem::path& dir);

} // namespace attnlens
