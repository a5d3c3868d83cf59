#pragma once
// The model contract's vocabulary, below every model family (issue 37): what kind an attention block is,
// which heads are switched off, and the controls every forward pass takes.
//
//   RunControls run;                       // capture every head, nothing off
//   run.offHeads = {{0, 1}, {1, 3}};       // transformers' head_mask = 0 for these (layer, head), from 0
//   run.probe = &inputs; run.probeLayer = 1;   // what layer 1's attention received (analysis/neuron_view)
//   TextForward f = folder.forward(ids, true, run);
//
// Head numbering: (layer, head) from 0 in the model's execution order of its attention layers of one kind.

#include "core/contract/attention_store.h"
#include "core/contract/residual_trace.h"
#include "core/layers/multi_head_attention.h"
#include "core/util/callbacks.h"

#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlens {

// The three kinds of attention block: bidirectional self-attention (BERT, ViT, a translator's encoder, U-Net
// spatial attention), causal self-attention (GPT-2, a translator's decoder), and cross-attention (queries
// from one sequence, keys from another).
enum class AttentionKind { EncoderSelf, DecoderSelf, Cross };
// "encoder", "decoder", "cross" (the CLI's and the JSON's names).
std::optional<AttentionKind> parseAttentionKind(std::string_view name);
std::string_view attentionKindId(AttentionKind kind);

// Heads switched off, as (layer, head) pairs numbered from 0.
using HeadList = std::vector<std::pair<int, int>>;

// `heads` grouped per layer (sorted, duplicates dropped) for a model of headsPerLayer.size() layers.
// Throws attnlens::Error naming the first pair outside the model: "ablated head 2:0 is outside the 2 layers ×
// 4 heads (numbered from 0)"; with another `layerNoun` or heads that differ per layer, "… outside the 5
// attention layers (numbered from 0); layer 1 has 2 head(s)".
std::vector<std::vector<int>> headsOffByLayer(const HeadList& heads, std::span<const int> headsPerLayer,
                                              std::string_view layerNoun = "layers");

// What every forward pass of the contract takes.
struct RunControls {
    bool captureAttention = true; // false: no attention tensor is kept (generation, importance passes)
    // Captured attention above this many bytes (capturedAttentionBytes) is kept on demand instead
    // (AttentionStore; families that support it: the text models).
    int64_t captureBudget = kDefaultCaptureBudget;
    HeadList offHeads; // transformers' head_mask = 0: the head's probabilities (and output) are 0
    AttentionInputs* probe = nullptr; // when set, layer probeLayer's attention inputs are copied here
    int probeLayer = -1;
    const Callbacks* callbacks = nullptr; // cancel between layers (attnlens::Cancelled); may be nullptr
    // When set, the residual stream's rows trace->rows are kept layer by layer
    // (core/contract/residual_trace.h; families built on TransformerBlock).
    ResidualTrace* trace = nullptr;
    // Decoder steps of one token (a KV-cache what-if, core/analysis/kv_rerun.h): the cache entries it attends
    // (keptKeys[j] = 0: entry j evicted, in every layer); nullptr: all. Families built on TransformerBlock.
    const std::vector<char>* keptKeys = nullptr;
};

} // namespace attnlens
