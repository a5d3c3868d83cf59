#pragma once
// Maps derived from captured attention, shared by the vision and text workspaces.
// Input convention (see tensor.h): attentions [layer, head, query, key], rows are probabilities.
//
//   fuseHeads          [H, Q, K] → [Q, K]          mean / max / min over heads
//   attentionRollout   [L, H, T, T] → [T, T]       Abnar & Zuidema (2020), formula below
//   queryMap           [Q, K] + query set → [K]    what the chosen tokens attend to
//   keyMap             [Q, K] + key set → [Q]      who attends to the chosen tokens
//   tokensToGrid       [T] → [rows, cols]          drop CLS, lay patches out row-major
//
// Thread-safety: pure functions.

#include "core/contract/attention_store.h"
#include "core/tensor/tensor.h"

#include <functional>
#include <optional>
#include <span>
#include <string_view>

namespace attnlens {

enum class HeadFusion { Mean, Max, Min };
std::optional<HeadFusion> parseHeadFusion(std::string_view name); // "mean", "max", "min"
std::string_view headFusionName(HeadFusion fusion);

// One layer's attention [H, Q, K] fused over heads → [Q, K].
RowMatrix fuseHeads(const Tensor& layerAttention, HeadFusion fusion);
// The same over `heads` maps made one at a time by headMap(h) (attention on demand), in the same order.
RowMatrix fuseHeads(int heads, HeadFusion fusion, const std::function<RowMatrix(int head)>& headMap);

// Which heads a map is drawn from: one head (head >= 0) or all heads fused.
struct HeadSelection {
    int head = -1; // -1: fuse all heads
    HeadFusion fusion = HeadFusion::Mean;
    bool operator==(const HeadSelection&) const = default;
};
// The one rule every view applies to what it is asked to show (numbered from 0): a layer is clamped into the
// model's `layers` (0 when there are none); a head outside 0..heads − 1 means all heads, fused (−1).
int clampLayer(int layer, int layers);
int clampHead(int head, int heads);

// What a page shows of a model's attention — one layer and a head selection — held by every page's document.
// The setters apply the rule above and return whether the selection changed (the document then says so).
struct AttentionSelection {
    int layer = 0;
    HeadSelection heads;
    bool setLayer(int value, int layers);
    bool setHead(int value, int headCount);
    bool setFusion(HeadFusion value);
    bool operator==(const AttentionSelection&) const = default;
};

// The one grammar of a head selection, for the CLI and the GUI: "mean" / "max" / "min", or a head index
// from 0 below `heads` (heads < 0: any non-negative index). Throws attnlens::Error naming the text.
HeadSelection parseHeadSelection(std::string_view text, int heads = -1);

// attentions [L, H, Q, K] → the [Q, K] matrix of `layer` for the selection. Throws on bad indices.
RowMatrix layerAttention(const Tensor& attentions, int layer, const HeadSelection& heads);
// The same from a store (captured or on demand: a fusion makes its heads one at a time, in fuseHeads' order,
// so the result equals it bit for bit).
RowMatrix layerAttention(const AttentionStore& store, int layer, const HeadSelection& heads);

struct RolloutOptions {
    HeadFusion fusion = HeadFusion::Mean;
    // Fraction of the smallest fused weights set to 0 in every layer before the identity is added
    // (Chefer/Gildenblat-style noise removal). Weights to the CLS key (column 0) are never dropped.
    float discardRatio = 0.0f;
    int firstLayer = 0;
    int lastLayer = -1; // inclusive; -1 = the last layer
};
// Attention rollout:   Â_l = rownorm(fuse(A_l) (with discards) + I),   R = Â_last · … · Â_first.
// R[i, j] is how much token i at the output draws on input token j; rows sum to 1.
// attentions [L, H, T, T] → [T, T]. Throws on an empty tensor, non-square maps or a bad layer range.
RowMatrix attentionRollout(const Tensor& attentions, const RolloutOptions& options = {});

enum class TokenReduce { Sum, Mean };
// attention [Q, K]; the rows of `queries` summed or averaged → [K]. Throws on an empty set or an index
// out of range.
Eigen::VectorXf queryMap(const Eigen::Ref<const RowMatrix>& attention, std::span<const int> queries,
                         TokenReduce reduce = TokenReduce::Mean);
// attention [Q, K]; the columns of `keys` summed or averaged → [Q] (who attends to these keys).
Eigen::VectorXf keyMap(const Eigen::Ref<const RowMatrix>& attention, std::span<const int> keys,
                       TokenReduce reduce = TokenReduce::Mean);

// perToken [T] → [rows, cols] from tokens firstToken … firstToken + rows·cols − 1 (skips CLS by default).
RowMatrix tokensToGrid(const Eigen::Ref<const Eigen::VectorXf>& perToken, int rows, int cols,
                       int firstToken = 1);

} // namespace attnlens
