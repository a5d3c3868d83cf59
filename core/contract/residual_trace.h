#pragma once
// The residual stream of one forward pass, layer by layer, for the lenses that look past the attention
// weights (issue 42: the logit lens, direct logit attribution). A pass fills it when RunControls::trace is
// set; only the rows asked for are kept, so tracing one position of a long prompt costs a few rows per layer.
//
//   ResidualTrace trace;  trace.rows = {n - 1};         // the last token only
//   RunControls run;  run.trace = &trace;  run.captureAttention = false;
//   model.forward(ids, true, run);
//   trace.layers[l].input            // [1, D] the stream entering layer l (layer 0: the embeddings)
//   trace.final                      // [1, D] after the last layer, before the final norm
//
// Pre-norm blocks (GPT-2, Llama, …) add their sub-layers' outputs to the stream, so
//   final = layers[0].input + Σ_l (attention + cross + mlp)        (exactly, up to float rounding)
// and attention = context · W_Oᵀ + b_O splits over the heads' slices of the context. A sub-layer with an
// output norm (Gemma's sandwich) adds O(attention) / O(mlp): its rows here are before that norm. Post-norm
// blocks (BERT, Marian) normalise after each sum: only `input` and `context` are kept for them (attention,
// cross and mlp stay empty).

#include "core/tensor/tensor.h"

#include <vector>

namespace attnlens {

struct LayerTrace {
    RowMatrix input;     // [r, D] the stream entering the block
    RowMatrix context;   // [r, heads · head_dim] the self-attention's heads' contexts, before o_proj
    RowMatrix attention; // [r, D] the self-attention sub-layer's output (pre blocks; before an output norm)
    RowMatrix cross;     // [r, D] the cross-attention sub-layer's output (pre blocks with one)
    RowMatrix mlp;       // [r, D] the MLP sub-layer's output (pre blocks; before an output norm)
    // With ResidualTrace::values: [heads, m] the length of what each key sends through each head,
    // ‖v_j · W_O,hᵀ‖ (MultiHeadAttention::valueNorms; value-weighted attention), over every key attended.
    RowMatrix valueNorms;
    RowMatrix crossValueNorms; // [heads, S] the same for the cross-attention's keys (blocks with one)
};

struct ResidualTrace {
    std::vector<int> rows;          // the pass's rows (its new tokens, from 0) to keep; empty: every row
    bool values = false;            // also each layer's valueNorms
    std::vector<LayerTrace> layers; // one per block, filled by the pass
    RowMatrix final;                // [r, D] the stream after the last block (before any final norm)
};

// The kept rows of m (all of them when rows is empty).
RowMatrix traceRows(const RowMatrix& m, const std::vector<int>& rows);

} // namespace attnlens
