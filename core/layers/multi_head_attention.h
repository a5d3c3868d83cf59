#pragma once
// MultiHeadAttention (layers/ level: owns its weights): BART/Marian-style attention with the query
// pre-scaled by head_dim^-0.5 (bias included) before Q·Kᵀ, an optional additive float mask, a
// key/value cache, and opt-in capture of the post-softmax probabilities of every head.
//
// Shapes: x [n, D] queries, keys/values [m, D] (already projected), heads concatenated in head order.
// Captured probabilities are a Tensor [heads, n, m] (`probs` arguments): nullptr = not captured; an
// empty tensor is allocated by the layer; a non-empty one — typically a view into a larger capture such
// as attentions.sub({layer}) of [L, H, n, m] — must already have exactly that shape (attnlens::Error
// otherwise) and is written in place. Each row sums to 1; masked keys get exactly 0 (the mask value is
// float32's lowest, as in HF).

#include "core/layers/rotary.h"
#include "core/ops/nn.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace attnlens {

struct LayerNormWeights {
    Tensor weight; // [D]
    Tensor bias;   // [D]
};

// Keys and values of one attention layer for the tokens seen so far; rows [0, length) are valid.
// Copyable; beam search moves a cache to the first beam that continues it and copyFrom()s the used rows
// for the others. Capacity grows geometrically.
struct KvCache {
    RowMatrix keys;   // [capacity, D]
    RowMatrix values; // [capacity, D]
    int64_t length = 0;

    void append(const RowMatrix& k, const RowMatrix& v); // k, v [n, D]
    // Copies rows [0, other.length) only, into the existing buffers when they hold them.
    void copyFrom(const KvCache& other);
    void truncate(int64_t newLength) { length = std::min(length, newLength); }
    void clear() { length = 0; }
};

// Where head_dim^-0.5 is applied: to the projected query, bias included (BART / Marian:
// q_proj(x) · scale), or to the scores (ViT, diffusers: (q·kᵀ) · scale). Equal in exact
// arithmetic; the choice keeps float rounding identical to the reference implementation.
enum class QueryScale { Query, Scores };

class MultiHeadAttention {
public:
    // The additive value HF uses for masked positions (torch.finfo(float32).min).
    static constexpr float kMaskValue = -3.4028234663852886e38f;

    MultiHeadAttention() = default;
    // q/k/v weights [inner, in], out [in_out, inner]; inner = heads · head_dim may differ from the
    // input width (diffusers' spatial attention when the channels are not a multiple of head_dim).
    // scaleFactor: what the scores are multiplied by (default head_dim^-0.5; GPT-2 configs may ask for 1 or
    // head_dim^-0.5 / (layer + 1)).
    // kvHeads (grouped-query attention, Llama / Mistral / Qwen's num_key_value_heads): k and v have kvHeads
    // heads of head_dim, each shared by heads / kvHeads query heads in order (query head h reads kv head
    // h / (heads / kvHeads), as transformers' repeat_kv); 0: as many as the queries.
    MultiHeadAttention(LinearWeights q, LinearWeights k, LinearWeights v, LinearWeights out, int heads,
                       QueryScale scale = QueryScale::Query, std::optional<float> scaleFactor = std::nullopt,
                       int kvHeads = 0);

    // Packs the four projections once for many-token inputs (LinearWeights::pack; doubles their memory).
    void packWeights();

    int heads() const { return m_heads; }
    int kvHeads() const { return m_kvHeads; }
    int64_t dim() const { return m_dim; }
    int64_t headDim() const { return m_dim / m_heads; }
    // What the scores q·k are multiplied by (head_dim^-0.5 unless the config asks otherwise), wherever
    // applied.
    float scaleFactor() const { return m_scale; }
    // out_proj's weight [D, heads · head_dim] and bias (the lenses split it per head).
    const LinearWeights& outWeights() const { return m_out; }
    // ‖v_{j,kv(h)} · W_O,hᵀ‖ for every key j of `values` [m, kvHeads · head_dim] (as attended over) and query
    // head h: [heads, m] — the length of what key j sends through head h (analysis/value_weighting.h). Made
    // as vᵀ G_h v with G_h = W_O,hᵀ W_O,h, so no [m, D] product per head. The G_h are made on the first call
    // (thread-safe) and kept: later calls cost m · heads · head_dim² (a decoder step's one new key: nothing).
    RowMatrix valueNorms(const Eigen::Ref<const RowMatrix>& values) const;

    // q = (x·Wqᵀ + bq) · head_dim^-0.5      x [n, D] -> q [n, D]
    void projectQuery(const Eigen::Ref<const RowMatrix>& x, RowMatrix& q) const;
    // q = x·Wqᵀ + bq without head_dim^-0.5, wherever the layer applies it (the neuron view shows the raw
    // vectors).
    void projectQueryUnscaled(const Eigen::Ref<const RowMatrix>& x, RowMatrix& q) const;
    // k = x·Wkᵀ + bk, v = x·Wvᵀ + bv        x [m, D] -> k, v [m, kvHeads · head_dim]
    void projectKeyValue(const Eigen::Ref<const RowMatrix>& x, RowMatrix& k, RowMatrix& v) const;

    // Attention of projected queries over projected keys/values, then out_proj.
    //   q [n, D], keys/values [m, D], mask: additive [n, m] or nullptr, probs: [heads, n, m] (see above).
    // Returns [n, D].
    // offHeads: heads switched off (ablation, transformers' head_mask = 0): their probabilities are 0 (so is
    // their captured attention) and so is their context; empty = all on.
    RowMatrix attend(const RowMatrix& q, const Eigen::Ref<const RowMatrix>& keys,
                     const Eigen::Ref<const RowMatrix>& values, const RowMatrix* mask, Tensor* probs,
                     std::span<const int> offHeads = {}) const;

    // attend() without out_proj: the concatenated per-head contexts [n, D]. Lets callers batch
    // out_proj over several hypotheses (outProject on the stacked rows).
    RowMatrix attendHeads(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& keys,
                          const Eigen::Ref<const RowMatrix>& values, const RowMatrix* mask, Tensor* probs,
                          std::span<const int> offHeads = {}, const Callbacks* cancel = nullptr) const;
    RowMatrix outProject(const RowMatrix& context) const; // [n, D] -> [n, D]
    // attendHeads() under causalMask(n, past, window)'s rule without the mask: keys a query cannot see are
    // never scored (the scores and the context are made in blocks of rows, each over the keys its last row
    // sees: about half the work of a long prompt). Its probabilities are headProbabilitiesCausal()'s.
    // Both poll `cancel` (when given) before each head: a 4 096-token prompt's head is tens of milliseconds.
    RowMatrix attendHeadsCausal(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& keys,
                                const Eigen::Ref<const RowMatrix>& values, int64_t past, int window,
                                Tensor* probs, std::span<const int> offHeads = {},
                                const Callbacks* cancel = nullptr) const;

    // One head's probabilities [n, m] into `out` (row stride m), by the same kernels in the same order as
    // attendHeads() — so a map recomputed later from kept queries and keys equals the captured one bit for
    // bit. q [n, D] and keys [m, kvHeads · head_dim] as attendHeads() receives them; mask: additive [n, m] or
    // nullptr.
    void headProbabilities(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& keys,
                           int head, const RowMatrix* mask, float* out) const;
    // The same under causalMask(n, past, window)'s rule without building the mask, as attendHeadsCausal()
    // makes them: only the keys a query sees are scored and softmaxed; the others are exactly 0 (as a masked
    // score + kMaskValue is after the softmax).
    void headProbabilitiesCausal(const Eigen::Ref<const RowMatrix>& q,
                                 const Eigen::Ref<const RowMatrix>& keys, int head, int64_t past, int window,
                                 float* out) const;

    // Convenience: full attention of x over kv (self-attention when kv is x) without a cache.
    RowMatrix forward(const RowMatrix& x, const RowMatrix& kv, const RowMatrix* mask, Tensor* probs,
                      std::span<const int> offHeads = {}) const;

private:
    // Rows [row, row + rows) of head h's scores over keys [0, cols) into out (row stride ld), before any
    // mask.
    void scoreBlock(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& keys, int head,
                    int64_t row, int64_t rows, int64_t cols, float* out, int64_t ld) const;
    // The contexts of every head [n, D] from `probabilities(h, out)`; causal: the rows' visible key range.
    struct CausalRule {
        int64_t past = 0;
        int window = 0;
    };
    RowMatrix attendEach(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& keys,
                         const Eigen::Ref<const RowMatrix>& values, const RowMatrix* mask,
                         const CausalRule* causal, Tensor* capture, std::span<const int> offHeads,
                         const Callbacks* cancel) const;
    // Head h's scores [n, m] (row stride m) before any mask.
    void headScores(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& keys, int head,
                    float* out) const;
    // The capture's memory for [heads, n, m] (see the header comment), or nullptr.
    float* captureTarget(Tensor* probs, int64_t n, int64_t m) const;

    // G_h per head, made once by valueNorms() (copies of this layer share them, as they share the weights).
    struct ValueGram {
        std::once_flag made;
        std::vector<Eigen::MatrixXd> heads; // [head_dim, head_dim] each
    };
    const std::vector<Eigen::MatrixXd>& valueGram() const;

    LinearWeights m_q, m_k, m_v, m_out;
    std::shared_ptr<ValueGram> m_gram = std::make_shared<ValueGram>();
    int m_heads = 1, m_kvHeads = 1;
    int64_t m_dim = 0; // inner width: heads · head_dim
    float m_scale = 1.0f;
    QueryScale m_scaleAt = QueryScale::Query;
};

// Grouped-query attention: the key/value head that query head `head` reads (h / (heads / kvHeads), as
// transformers' repeat_kv), or -1 when every head has its own (kvHeads ≤ 0 or = heads, or not a divisor).
int keyValueHeadOf(int head, int heads, int kvHeads);

struct Norm; // core/layers/transformer_block.h

// What one attention layer received, for inspecting single scores (analysis/neuron_view): the rows its
// queries and keys are projected from, and the layer itself (which must outlive this; models are immutable).
struct AttentionInputs {
    const MultiHeadAttention* attention = nullptr;
    RowMatrix queryInput; // [n, in]
    RowMatrix keyInput;   // [m, in]
    bool causal = false;  // key j > query i is masked (decoder self-attention)
    // Rotary position embedding applied to the projected queries and keys (Llama-style models; nullptr:
    // none), at the positions of their first rows.
    const RotaryEmbedding* rotary = nullptr;
    int64_t queryPosition = 0, keyPosition = 0;
    // Per-head RMSNorm of the projected queries and keys before the rotation (Qwen3, Gemma 3), or nullptr.
    const Norm* queryNorm = nullptr;
    const Norm* keyNorm = nullptr;
    int window = 0; // a sliding window (see causalMask), 0: none
};

// What recomputing one self-attention layer's maps needs (core/contract/attention_store.h's on-demand mode):
// the queries and keys exactly as the layer attended with them (projected, per-head normed, rotated, scaled
// where it scales queries) and the mask's rule. headInto() then equals the captured map bit for bit.
struct LayerRecall {
    const MultiHeadAttention* attention = nullptr; // the model's (immutable; must outlive this)
    RowMatrix queries;                             // [n, D]
    RowMatrix keys;                                // [m, kvHeads · head_dim]: the cache's rows too
    bool causal = false;                           // causalMask(n, past, window)'s rule
    int64_t past = 0;
    int window = 0;
    RowMatrix mask;            // bidirectional layers: the additive [n, m] mask they had, empty: none
    std::vector<int> offHeads; // heads switched off: their maps are 0
    // Head `head`'s probabilities [n, m] into out (contiguous).
    void headInto(int head, float* out) const;
    int64_t bytes() const { return (queries.size() + keys.size() + mask.size()) * int64_t(sizeof(float)); }
};

// Causal additive mask for n queries at absolute positions [offset, offset + n) over offset + n keys:
// key j > query position p is kMaskValue, else 0; with a sliding window w > 0 also j ≤ p − w (a query sees
// its w latest keys, itself included, as transformers' sliding_window).   -> [n, offset + n]
RowMatrix causalMask(int64_t n, int64_t offset, int window = 0);

} // namespace attnlens
