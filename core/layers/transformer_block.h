#pragma once
// TransformerBlock: the one transformer layer every family shares (issue 37, in the spirit of CTranslate2's
// TransformerLayer): a norm before (pre) or after (post) each sub-layer, LayerNorm or RMSNorm, a plain MLP
// fc2(act(fc1 x)) or a gated one down(act(gate x) ⊙ up x) (SwiGLU), bidirectional or causal attention with
// grouped key/value heads and an optional rotary embedding, and an optional cross-attention sub-layer
// (encoder–decoder models) between the self-attention and the MLP.
//   pre:   x = x + Attn(N1(x));      [x = x + Cross(Nc(x), enc);]     x = x + Mlp(N2(x))   (GPT-2; Llama, …)
//   post:  x = N1(x + Attn(x));      [x = Nc(x + Cross(x, enc));]     x = N2(x + Mlp(x))   (BERT; Marian)
// A pre block may also normalise each sub-layer's output before the residual sum (Gemma's "sandwich":
// x = x + O1(Attn(N1(x))), x = x + O2(Mlp(N2(x)))), normalise each head's query and key before the rotary
// embedding (Qwen3, Gemma 3: q_norm / k_norm over head_dim) and attend within a sliding window (a query at
// position p sees keys p − window < j ≤ p; Mistral, Gemma 3's local layers).
// Families bind their weights into blocks and run them: BERT, GPT-2 (core/models/text_models), ViT and
// Marian's encoder and decoder.
//
//   BlockRun run;  run.cache = &layerCache;  run.probs = &probs;  run.offHeads = off;
//   block.forward(x, run);         // x [n, D] in place; n new tokens at positions cache.length …

#include "core/contract/residual_trace.h"
#include "core/layers/multi_head_attention.h"
#include "core/layers/rotary.h"
#include "core/ops/nn.h"
#include "core/util/callbacks.h"

#include <optional>
#include <span>
#include <vector>

namespace attnlens {

// y = (x − mean) / √(var + eps) · w + b (LayerNorm), or x / √(mean(x²) + eps) · w (RMSNorm; `unitOffset`:
// · (1 + w), as Gemma stores it).
struct Norm {
    enum class Kind { LayerNorm, RmsNorm };
    Kind kind = Kind::LayerNorm;
    Tensor weight, bias; // [D]; bias empty for RMSNorm
    float eps = 1e-5f;
    bool unitOffset = false;
    void apply(RowMatrix& x) const; // [n, D] in place
    // x [n, heads · d] in place, each head's d values normalised on their own (q_norm / k_norm).
    void applyPerHead(RowMatrix& x, int heads) const;
    // direction · apply(y) as direction' · y + c, the scale (1/σ, 1/rms) frozen at the row y0 (direct logit
    // attribution): returns direction' (LayerNorm: centred) and adds c = direction · bias to `constant`.
    std::vector<float> frozenTranspose(std::span<const float> direction, std::span<const float> y0,
                                       float& constant) const;
};

struct Mlp {
    enum class Kind { Plain, Gated };
    Kind kind = Kind::Plain;
    LinearWeights in;  // fc1 / gate_proj [F, D]
    LinearWeights up;  // up_proj [F, D] (gated only)
    LinearWeights out; // fc2 / down_proj [D, F]
    Activation activation = Activation::Gelu;
    // [n, D] -> [n, D]; a long input in blocks of kRowsPerPiece rows (a 4 096-token prompt's MLP is most of a
    // layer's work: between blocks `cancel`, when given, is polled, and the hidden activations stay small).
    static constexpr int64_t kRowsPerPiece = 512;
    RowMatrix forward(const RowMatrix& x, const Callbacks* cancel = nullptr) const;
    void pack();
};

// One forward's controls of a block (the model's RunControls for this layer).
struct BlockRun {
    KvCache* cache = nullptr; // keys/values of the tokens before, appended to; nullptr: this call's only
    Tensor* probs = nullptr;  // [heads, n, m] capture (MultiHeadAttention's rules) or nullptr
    std::span<const int> offHeads = {}; // heads switched off (probabilities × 0)
    AttentionInputs* probe = nullptr;   // what the attention received (analysis/neuron_view)
    LayerRecall* recall = nullptr;      // filled with what recomputing this layer's maps needs (on demand)
    // Bidirectional blocks: an additive padding mask [n, keys], or nullptr. Causal blocks take none: the keys
    // a query cannot see (causalMask's rule) are skipped (MultiHeadAttention::attendHeadsCausal).
    const RowMatrix* mask = nullptr;
    // Cross-attention (blocks that have it): the other sequence's keys and values [S, D_kv] as this block's
    // cross-attention projected them (MultiHeadAttention::projectKeyValue, once per input), an additive mask
    // [n, S] or nullptr, the capture [heads, n, S] or nullptr, the heads switched off.
    const RowMatrix* crossKeys = nullptr;
    const RowMatrix* crossValues = nullptr;
    const RowMatrix* crossMask = nullptr;
    Tensor* crossProbs = nullptr;
    std::span<const int> crossOffHeads = {};
    // The residual stream's rows (core/contract/residual_trace.h) kept here, or nullptr.
    LayerTrace* trace = nullptr;
    const std::vector<int>* traceRows = nullptr; // which rows (nullptr or empty: all)
    bool traceValues = false;                    // the trace keeps the layer's valueNorms too
    // Causal blocks, one new token (a KV-cache what-if, core/analysis/kv_rerun.h): keptKeys[j] = 0 evicts
    // cache entry j (j < the cache's length) — the token attends the others at their own positions, its own
    // key always (capture: evicted keys 0). nullptr: every key.
    const std::vector<char>* keptKeys = nullptr;
    // Polled for cancel between the sublayers, before each attention head and each block of MLP rows
    // (attnlens::Cancelled); may be nullptr.
    const Callbacks* callbacks = nullptr;
};

struct CrossAttention {
    MultiHeadAttention attention;
    Norm norm;
};

struct TransformerBlock {
    enum class Placement { Pre, Post };
    Placement placement = Placement::Pre;
    Norm attentionNorm, mlpNorm;
    MultiHeadAttention attention;
    std::optional<RotaryEmbedding> rotary;
    std::optional<Norm> queryNorm, keyNorm;                 // per head, [head_dim] weights
    std::optional<Norm> attentionOutputNorm, mlpOutputNorm; // pre blocks only (sandwich)
    Mlp mlp;
    bool causal = false;
    int window = 0; // causal blocks: a sliding window of this many keys; 0: every key before
    std::optional<CrossAttention> cross;

    // x [n, D] in place: n tokens at positions (cache ? cache->length : 0) onwards.
    void forward(RowMatrix& x, const BlockRun& run) const;
    // forward()'s self-attention sub-layer alone (with a cross-attention, its output is what the
    // cross-attention's queries are projected from).
    void selfAttentionSublayer(RowMatrix& x, const BlockRun& run) const;
    // One new token for each of B hypotheses at the same position (beam search): x [B, D], row b belongs to
    // caches[b]. Projections, output projections and the MLP run once on all B rows (the weights are read
    // once instead of B times); attention runs per hypothesis on its own cache. selfProbs[b]: nullptr or
    // [heads, 1, cache.length + 1]; crossProbs[b] (blocks with cross-attention): nullptr or [heads, 1, S].
    // Blocks with a rotary embedding are refused (attnlens::Error): their hypotheses would need one rotation
    // per row.
    void forwardBatch(RowMatrix& x, const std::vector<KvCache*>& caches,
                      const std::vector<Tensor*>& selfProbs, const std::vector<Tensor*>& crossProbs,
                      const BlockRun& shared) const;

private:
    void crossSublayer(RowMatrix& x, const BlockRun& run) const;
    void mlpSublayer(RowMatrix& x, const BlockRun& run) const;
    // The self-attention of one new token over the cache's kept keys (BlockRun::keptKeys).
    RowMatrix attendKept(const RowMatrix& q, const Eigen::Ref<const RowMatrix>& keys,
                         const Eigen::Ref<const RowMatrix>& values, int64_t past, const BlockRun& run) const;
};

// Every block in order over x, as a model's forward runs them:
//   caches       one per block (decoders; appended to), or empty (each block attends over x itself)
//   attentions   [L, H, n, m] filled layer by layer, or empty (nothing captured)
//   off          per block, its heads switched off (shorter: none for the rest)
//   probe        filled with block probeLayer's attention inputs when set
//   callbacks    polled for cancel before each block and inside it (BlockRun::callbacks); may be nullptr
//   recall       when set (and attentions empty): resized to one LayerRecall per block and filled — the
//                attention on demand (core/contract/attention_store.h)
//   trace        when set: one LayerTrace per block and the final stream, its rows only
//   keptKeys     when set: BlockRun::keptKeys for every block
struct BlocksRun {
    AttentionInputs* probe = nullptr;
    int probeLayer = -1;
    const Callbacks* callbacks = nullptr;
    std::vector<LayerRecall>* recall = nullptr;
    ResidualTrace* trace = nullptr;
    const std::vector<char>* keptKeys = nullptr;
};
void runBlocks(std::span<const TransformerBlock> blocks, RowMatrix& x, std::span<KvCache> caches,
               Tensor& attentions, const std::vector<std::vector<int>>& off, const BlocksRun& controls);

} // namespace attnlens
