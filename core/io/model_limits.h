#pragma once
// Bounds on what a model's config may claim, checked before anything is sized by it: a corrupt or hostile
// config.json or GGUF header is refused with a message instead of asking for gigabytes (a fuzzed GGUF's
// block_count of 721 million sized per-layer tables of 2.9 GB).

namespace attnlens {

// Transformer blocks of one stack: more than any released model has (the largest have ~128).
inline constexpr int kMaxModelLayers = 1024;

// A width a config sizes tables by (hidden, feed-forward, head and vocabulary sizes; head counts): 2^20, far
// above any released model's (hidden 16 384, feed-forward 53 248, vocabulary 262 144, head 256). A Llama
// config.json claiming head_dim 2·10⁹ took 7.9 GB and 25 s before its weights' shapes refused it.
inline constexpr int kMaxModelWidth = 1 << 20;

} // namespace attnlens
