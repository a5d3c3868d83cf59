#pragma once
// TransformerBlock: the one self-attention layer the text families share (issue 37, in the spirit of
// CTranslate2's TransformerLayer): a norm before (pre) or after (post) each sub-layer, LayerNorm or RMSNorm,
// a plain MLP fc2(act(fc1 x)) or a gated one down(act(gate x) ⊙ up x) (SwiGLU), bidirectional or causal
// attention with grouped key/value heads and an optional rotary embedding.
//   pre:   x = x + Attn(N1(x));      x = x + Mlp(N2(x))        (GPT-2; Llama, Mistral, Qwen, Gemma)
//   post:  x = N1(x + Attn(x));      x = N2(x + Mlp(x))        (BERT)
// Families bind their weights into one and run it; BertModel and Gpt2Model do (core/models/text_models).
//
//   BlockRun run;  run.cache = &layerCache;  run.probs = &probs;  run.offHeads = off;
//   block.forward(x, run);         // x [n, D] in place; n new tokens at positions cache.length …

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
};

struct Mlp {
    enum class Kind { Plain, Gated };
    Kind kind = Kind::Plain;
    LinearWeights in;  // fc1 / gate_proj [F, D]
    LinearWeights up;  // up_proj [F, D] (gated only)
    LinearWeights out; // fc2 / down_proj [D, F]
    Activation activation = Activation::Gelu;
    RowMatrix forward(const RowMatrix& x) const; // [n, D] -> [n, D]
    void pack();
};

// One forward's controls of a block (the model's RunControls for this layer).
struct BlockRun {
    KvCache* cache = nullptr;      // keys/values of the tokens before, appended to; nullptr: this call's only
    Tensor* probs = nullptr;       // [heads, n, m] capture (MultiHeadAttention's rules) or nullptr
    std::span<const int> offHeads; // heads switched off (probabilities × 0)
    AttentionInputs* probe = nullptr; // what the attention received (analysis/neuron_view)
    const RowMatrix* mask =
        nullptr; // causal blocks: causalMask(n, past) made once for every layer, or nullptr
};

struct TransformerBlock {
    enum class Placement { Pre, Post };
    Placement placement = Placement::Pre;
    Norm attentionNorm, mlpNorm;
    MultiHeadAttention attention;
    std::optional<RotaryEmbedding> rotary;
    Mlp mlp;
    bool causal = false;

    // x [n, D] in place: n tokens at positions (cache ? cache->length : 0) onwards.
    void forward(RowMatrix& x, const BlockRun& run) const;
};

// Every block in order over x, as a model's forward runs them:
//   caches       one per block (decoders; appended to), or empty (each block attends over x itself)
//   attentions   [L, H, n, m] filled layer by layer, or empty (nothing captured)
//   off          per block, its heads switched off (shorter: none for the rest)
//   probe        filled with block probeLayer's attention inputs when set
//   callbacks    polled for cancel before each block (attnlens::Cancelled); may be nullptr
void runBlocks(std::span<const TransformerBlock> blocks, RowMatrix& x, std::span<KvCache> caches,
               Tensor& attentions, const std::vector<std::vector<int>>& off, AttentionInputs* probe,
               int probeLayer, const Callbacks* callbacks);

} // namespace attnlens
