#pragma once
// What each head does, as numbers: the statistics of the Heads lens (issue 21, M10), for one attention tensor
// [L, H, Q, K] (rows are probabilities) and averaged over a batch of inputs.
//
//   entropy    mean over query rows of  −Σ_k a log a / log(n_k),  n_k = the row's unmasked keys (a > 0); 0
//   when
//              n_k = 1. 0: the row looks at one key; 1: spread evenly over all it may see.
//   distance   mean over query rows of  Σ_k a · ‖pos(q) − pos(k)‖  with the weights renormalised over the
//   keys
//              that have a position (text: token index; images: patch centres in pixels, CLS has none).
//   sink       mean over query rows of  Σ_{k ∈ sink keys} a  (</s>, the start token, CLS, …).
//   delimiter  mean over query rows of  Σ_{k ∈ delimiter keys} a  (punctuation and line-break tokens, the
//              axis's `delimiters`; 0 when it has none; NaN where no token is special, as sink).
//   local      mean over query rows of  Σ_{|q − k| ≤ localWindow} a  — the share within the window of
//              positions around the query (self-attention over an index axis only: NaN for images and
//              cross-attention).
//   diagonal   mean over query rows of  a(q, q)              — self-attention only (NaN otherwise).
//   previous   mean over query rows q ≥ 1 of  a(q, q − 1)    — self-attention only (NaN otherwise).
//   alignment  share of the query rows with a known alignment whose argmax key is one of the aligned keys
//              (cross-attention with a word alignment; NaN when there is none).
//
//   HeadStats s = captureHeadStats(translationCapture(trace, "<pad>"), AttentionKind::Cross);  // any family
//   s.get(HeadStatistic::Entropy)(layer, head);
//   HeadStatsBatch batch; batch.add(s); ... batch.mean();     // per statistic, weighted by the rows used
//
// Thread-safety: pure functions; HeadStatsBatch is a plain value.

#include "core/contract/attention_capture.h"
#include "core/tensor/tensor.h"

#include <array>
#include <optional>
#include <string_view>
#include <vector>

namespace attnlens {

enum class HeadStatistic { Entropy, Distance, Sink, Delimiter, Local, Diagonal, Previous, Alignment };
inline constexpr std::array<HeadStatistic, 8> kAllHeadStatistics = {
    HeadStatistic::Entropy, HeadStatistic::Distance, HeadStatistic::Sink,     HeadStatistic::Delimiter,
    HeadStatistic::Local,   HeadStatistic::Diagonal, HeadStatistic::Previous, HeadStatistic::Alignment};
// "entropy", "distance", "sink", "delimiter", "local", "diagonal", "previous", "alignment" (the CLI's and the
// JSON's names).
std::string_view headStatisticId(HeadStatistic statistic);
std::optional<HeadStatistic> parseHeadStatistic(std::string_view name);

struct HeadStatsOptions {
    // One point per query row / key column for the distance; a NaN x marks "no position" (CLS). Empty: the
    // index (queries and keys on one axis, as in self-attention).
    std::vector<std::array<float, 2>> queryPositions, keyPositions;
    std::vector<int> sinkKeys;      // key columns counted as sinks; empty: column 0
    std::vector<int> delimiterKeys; // key columns that are punctuation or line breaks
    bool hasSinks = true;           // false: no token is special (U-Net pixels); sink and delimiter are NaN
    int localWindow = 4;            // local: keys at most this many positions from the query
    bool selfAttention = true;      // query i and key i are the same token (diagonal / previous exist)
    std::vector<int> queryRows;     // the rows to average (e.g. without padding); empty: all
    // Cross-attention: per query row, the key columns aligned with it (an empty entry: unknown, skipped).
    std::vector<std::vector<int>> alignment;
};

struct HeadStats {
    // [layers, heads] each; NaN where a statistic does not apply.
    RowMatrix entropy, distance, sink, delimiter, local, diagonal, previous, alignment;
    int rows = 0;        // query rows averaged (per input)
    int alignedRows = 0; // rows with a known alignment
    int layers() const { return static_cast<int>(entropy.rows()); }
    int heads() const { return static_cast<int>(entropy.cols()); }
    const RowMatrix& get(HeadStatistic statistic) const;
    RowMatrix& get(HeadStatistic statistic);
};

// attentions [L, H, Q, K]. Throws attnlens::Error on a tensor that is not 4-d, positions or alignment whose
// sizes do not match Q / K, or indices out of range.
HeadStats computeHeadStats(const Tensor& attentions, const HeadStatsOptions& options = {});

// The statistics of one kind of a capture (core/contract/attention_capture.h), any family: per block, with
// the distances, sinks and self-attention its axes say; layers × the most heads of a block (NaN where a layer
// has fewer). `alignment` (cross-attention): per query position, the aligned key positions. Throws
// attnlens::Error when the capture has no block of that kind.
// Blocks made on demand are measured one head at a time (one [n, m] map in memory), reporting progress and
// polling cancel through `callbacks` (may be nullptr).
HeadStats captureHeadStats(const AttentionCapture& capture, AttentionKind kind,
                           const std::vector<std::vector<int>>& alignment = {},
                           const Callbacks* callbacks = nullptr);

// The mean of several inputs' statistics (same layers × heads): each cell weighted by the rows it was
// averaged over (alignment: by the aligned rows); NaN cells of one input do not count.
class HeadStatsBatch {
public:
    void add(const HeadStats& stats); // throws attnlens::Error when the shape differs from the first
    int inputs() const { return m_inputs; }
    HeadStats mean() const;

private:
    int m_inputs = 0;
    std::array<RowMatrix, kAllHeadStatistics.size()> m_sum, m_weight;
    int m_rows = 0, m_alignedRows = 0;
};

} // namespace attnlens
