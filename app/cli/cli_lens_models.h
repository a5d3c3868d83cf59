#pragma once
// `attnlens-cli lens --logit-lens --model DIR` where DIR is a translator (Marian: the decoder over its greedy
// translation) or a ViT classifier (the CLS token through the classifier), core/analysis/model_lenses.h.

#include "cli_common.h"
#include "core/io/model_folder.h"

#include <filesystem>

namespace cli {

// The positional argument is the source sentence (Marian) or the image's path (ViT); returns the exit status.
int runModelLens(const Args& args, const std::filesystem::path& dir, attnlens::ModelKind kind);

} // namespace cli
