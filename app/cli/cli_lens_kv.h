#pragma once
// `attnlens-cli lens --kv-policy …`: a KV-cache what-if on a decoder's greedy continuation
// (core/analysis/kv_rerun.h), printed per step and written as JSON.

#include "cli_common.h"
#include "core/models/text_folder.h"

namespace cli {

// The prompt's ids already encoded; returns the exit status.
int runKvWhatIf(const Args& args, const attnlens::TextFolder& folder, const attnlens::TextEncoding& prompt);

} // namespace cli
