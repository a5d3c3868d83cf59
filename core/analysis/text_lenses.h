#pragma once
// The lenses on a text model (BERT, GPT-2; issue 37): what the Heads lens, the importance ranking, head
// ablation and the neuron view need, written against the contract's RunControls.
//
//   TextTargets t = textTargets(folder, ids, firstScored);     // which log-probabilities score the output
//   double lp = textLogProb(folder, ids, t);                    // … with every head on
//   RowMatrix drop = textHeadImportance(folder, ids, t);       // [L, H]: lp − lp with the head alone off
//   HeadStats s = captureHeadStats(textCapture(folder, ids, f.attentions), textAttentionKind(folder));
//   AttentionInputs in = textAttentionInputs(folder, ids, layer);   // analysis/neuron_view
//
// Thread-safety: pure functions on an immutable folder; textHeadImportance is cancellable between heads.

#include "core/analysis/head_stats.h"
#include "core/contract/run_controls.h"
#include "core/models/text_folder.h"

#include <string>
#include <utility>
#include <vector>

namespace attnlens {

// The output a text model is judged by, as (position, token) pairs whose log-probabilities are summed.
//   GPT-2: every token from firstScored on (≥ 1) given the tokens before it: log p(ids[t] | ids[<t]) — the
//          generated tokens, or the whole text after its first token.
//   BERT with an LM head: at each [MASK], the token the plain run predicts there; without a [MASK], every
//          token but [CLS] / [SEP] itself (how well the model reconstructs the text).
//   BERT without an LM head: none (score = the last hidden state; see textHeadImportance).
struct TextTargets {
    std::vector<std::pair<int, int>> tokens; // (position, token id)
    std::string description;                 // for the lens: "log p of the 6 generated tokens"
};
TextTargets textTargets(const TextFolder& folder, const std::vector<int>& ids, int firstScored = 1);

// Σ log p(token at position) over the targets, with run.offHeads off (run.captureAttention is ignored).
double textLogProb(const TextFolder& folder, const std::vector<int>& ids, const TextTargets& targets,
                   const RunControls& run = {});

// [layers, heads]: how much the targets' log-probability drops with each head alone off (positive: the output
// needs the head). Without targets (BertModel), ‖h_off − h‖ / ‖h‖ of the last hidden state instead. `off`:
// heads already off in the run measured (off in every pass; their own drop is 0).
RowMatrix textHeadImportance(const TextFolder& folder, const std::vector<int>& ids,
                             const TextTargets& targets, const Callbacks& callbacks = {},
                             const HeadList& off = {});

// What layer `layer` received over `ids` (the plain run), for analysis/neuron_view. Throws attnlens::Error
// outside the model's layers.
AttentionInputs textAttentionInputs(const TextFolder& folder, const std::vector<int>& ids, int layer,
                                    const HeadList& offHeads = {});

// "encoder" for BERT (bidirectional), "decoder" for GPT-2 (causal).
AttentionKind textAttentionKind(const TextFolder& folder);

} // namespace attnlens
