#pragma once
// Options shared by the subcommands that draw an attention map over an image (vision, diffuse):
// --head H|mean|max|min, --colormap NAME, --opacity A. Bad values are cli::UsageError.

#include "cli_common.h"
#include "core/analysis/attention_maps.h"
#include "core/export/overlay.h"

#include <string>

namespace cli {

// "mean" / "max" / "min" or a head index in [0, heads).
attnlens::HeadSelection parseHead(const std::string& text, int heads);
// --colormap NAME, or `fallback` without it.
attnlens::ColorMap parseColorMapOption(const Args& args, attnlens::ColorMap fallback);
// --colormap and --opacity (the defaults of OverlayOptions otherwise).
attnlens::OverlayOptions parseOverlayOptions(const Args& args);

} // namespace cli
