#pragma once
// Attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): how much of an output
// token's state can come from each input token, as a maximum flow through the layers.
//
// The graph: one node per token per layer boundary, 0 (the input) … L (after the last layer). Layer l joins
// boundary l + 1 to boundary l with an edge (l + 1, i) → (l, j) of capacity Â_l(i, j), where
// Â_l = rownorm(fuse(A_l) + I) — the heads fused, the residual connection added, as in rollout
// (attention_maps.h). flow(i → j) = the maximum flow from node (L, i) to node (0, j).
//
// Unlike rollout, flow does not multiply along paths: a strong path is limited by its weakest edge, and paths
// share capacity. Each value is one max-flow (Dinic's algorithm) on L·T² edges, so a query row costs T of
// them: about L·T³ operations in the worst case. attentionFlowCost() estimates it; callers fall back to
// rollout above a budget (the Vision page and the CLI say so).
//
//   std::vector<float> f = attentionFlow(attentions, /*query=*/0, /*lastLayer=*/11);   // [T]
//
// Thread-safety: pure functions; cancellable through Callbacks.

#include "core/analysis/attention_maps.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"

#include <cstdint>
#include <vector>

namespace attnlens {

struct FlowOptions {
    HeadFusion fusion = HeadFusion::Mean;
    int firstLayer = 0;
    int lastLayer = -1; // -1: the last layer
};

// attentions [L, H, T, T]; the flow from token `query` after layer lastLayer to every token before layer
// firstLayer → [T]. Every value lies in [0, 1]. Throws attnlens::Error on a bad shape or index; Cancelled
// when callbacks.cancelled() turns true between two max-flows.
std::vector<float> attentionFlow(const Tensor& attentions, int query, const FlowOptions& options = {},
                                 const Callbacks& callbacks = {});

// The work of one attentionFlow() call, layers · T³ (T² edges per layer, T max-flows), for the fall-back
// decision. Measured here on one core: 4 × 50 (the built-in ViT) 10 ms; 12 × 100, 87 ms; 12 × 197 (ViT-base),
// 0.7 s. kFlowBudget (≈ 3 s) admits ViT-base at 224 px and refuses much larger inputs.
int64_t attentionFlowCost(int layers, int tokens);
inline constexpr int64_t kFlowBudget = 400'000'000;

} // namespace attnlens
