#pragma once
// `attnlens-cli lens --logit-lens --model DIR` where DIR is a translator (Marian: the decoder over its greedy
// translation) or a ViT classifier (the CLS token through the classifier), core/analysis/model_lenses.h.

#include "cli_common.h"
#include "core/analysis/logit_lens.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"

#include <filesystem>
#include <functional>
#include <string>

namespace cli {

// The positional argument is the source sentence (Marian) or the image's path (ViT); returns the exit status.
// One lens as the JSON of `lens` (every model: "position", "target", "target_token", "layers": [{"top":
// [{"id", "token", "prob"}], "target_rank", "target_prob", "target_logit"}]); name: an id's text.
attnlens::Json lensJson(const attnlens::LogitLens& lens, const std::function<std::string(int)>& name);

int runModelLens(const Args& args, const std::filesystem::path& dir, attnlens::ModelKind kind);

} // namespace cli
