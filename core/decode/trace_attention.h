#pragma once
// The three attention kinds of a translation and the tokens along their axes, so that the GUI's
// matrix view and `attnlens-cli translate --heatmap` pick the same matrix with the same labels.
//
//   const Tensor& t = traceAttention(trace, AttentionKind::Cross);          // [L, H, T, S]
//   TraceAxes axes = traceAxes(trace, AttentionKind::Cross, startPiece);    // rows: T pieces, columns: S

#include "core/analysis/head_stats.h"
#include "core/contract/run_controls.h"
#include "core/decode/decode_session.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// [L, H, Q, K] as captured in the trace.
const Tensor& traceAttention(const TranslationTrace& trace, AttentionKind kind);
// The same value-weighted (core/analysis/value_weighting.h: each weight times its key's ‖v · W_O,hᵀ‖, every
// row renormalised to sum to 1), a new tensor; empty when the trace carries no norms for that kind.
Tensor traceValueWeighted(const TranslationTrace& trace, AttentionKind kind);

// Row (query) and column (key) pieces of a kind's matrices. Decoder self-attention's keys are the
// decoder inputs: `decoderStartPiece` (the start token) then every target piece but the last.
struct TraceAxes {
    std::vector<std::string> rows, columns;
};
TraceAxes traceAxes(const TranslationTrace& trace, AttentionKind kind, const std::string& decoderStartPiece);

// A word alignment in Pharaoh format ("0-0 1-2 2-1": source word i with target word j, from 0; words as
// groupPieces (analysis/word_merge.h) forms them from the trace's pieces, special pieces being words of their
// own) → for every target piece of the trace, the source pieces of the words it is aligned with (empty: none
// given). Pass it to captureHeadStats (analysis/head_stats.h) for the cross-attention's "alignment"
// statistic. Throws attnlens::Error naming a malformed pair or a word outside the sentence.
std::vector<std::vector<int>> pieceAlignment(const TranslationTrace& trace, std::string_view pharaoh);

// What one layer of a kind received over this translation (analysis/neuron_view): a teacher-forced pass over
// the decoder inputs (the start token, then every target id but the last), whose rows are the trace's rows.
AttentionInputs traceAttentionInputs(const MarianModel& model, const TranslationTrace& trace,
                                     AttentionKind kind, int layer, const MarianAblation* ablation = nullptr);

} // namespace attnlens
