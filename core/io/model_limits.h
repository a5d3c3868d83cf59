#pragma once
// Bounds on what a model's config may claim, checked before anything is sized by it: a corrupt or hostile
// config.json or GGUF header is refused with a message instead of asking for gigabytes (a fuzzed GGUF's
// block_count of 721 million sized per-layer tables of 2.9 GB).

namespace attnlens {

// Transformer blocks of one stack: more than any released model has (the largest have ~128).
inline constexpr int kMaxModelLayers = 1024;

} // namespace attnlens
