#pragma once
// A text-to-image run as JSON — what `attnlens-cli t2i --json` writes and the Text-to-image page exports:
// scheduler, steps, guidance, timesteps, ids, tokens, prompt_tokens, truncated, final_latents [C][h][w],
// image [H][W][C] (0..1), per_step [{timestep, cross_attention: [{name, spatial, heads, cond, uncond}]}].

#include "core/diffusion/t2i_pipeline.h"

#include <string>

namespace attnlens {

// Throws attnlens::Error naming the path when it cannot be written.
void writeT2iRunJson(const std::string& path, const T2iResult& result, const T2iRequest& request);

} // namespace attnlens
