#pragma once
// Inside one attention score (issue 21, M18, "the neuron view"): for one head, one query token and one key
// token, the query and key vectors of that head, their element-wise products, the sum q·k, the scale
// 1/√d_k, the mask, and the softmax weight that results — the formula of the playground on a real model's
// numbers. Works on what any attention layer received (AttentionInputs), so every model kind gets it.
//
//   AttentionInputs in = vit.attentionInputs(pixels, layer);   // or MarianModel / UNet2DModel's
//   NeuronTerms t = neuronTerms(in, head, query, key);
//   t.product[i] == t.q[i] * t.k[i];  t.dot == Σ product;  t.weight == softmax(t.rowScores)[key]
//
// q is shown unscaled (x·Wqᵀ + bq) whichever side the model applies the scale on; the weight equals the
// captured attention of the plain forward pass up to float rounding (tested to 1e-5).

#include "core/layers/multi_head_attention.h"

#include <vector>

namespace attnlens {

struct NeuronTerms {
    int head = 0, query = 0, key = 0;
    int headDim = 0;
    std::vector<float> q, k, product; // [headDim]: the head's slice of the query and key vectors, q_i·k_i
    double dot = 0.0;                 // Σ q_i·k_i
    double scale = 1.0;               // 1/√d_k
    double scaled = 0.0;              // dot · scale
    bool masked = false;              // the key is masked for this query (weight 0)
    std::vector<double> rowScores;    // the query's scaled scores over every key (masked: -inf)
    double rowMax = 0.0;              // max of rowScores (softmax is computed relative to it)
    double partition = 0.0;           // Σ_j exp(rowScores_j − rowMax)
    double weight = 0.0;              // exp(scaled − rowMax) / partition

    // Dimensions ordered by |product| (largest first): which coordinates make the score.
    std::vector<int> dimensionsByContribution() const;
    // Share of |q·k| that the top `n` products (by |product|, signs kept) explain: Σ top n products / dot.
    double topShare(int n) const;
};

// A layer's queries (unscaled) and keys projected once, so that many scores can be taken apart cheaply (each
// neuronTerms on it costs O(keys · head_dim); projecting costs O((queries + keys) · in · inner), which a page
// does on its worker).
struct ProjectedAttention {
    RowMatrix queries;          // [n, inner] = x·Wqᵀ + bq
    RowMatrix keys;             // [m, inner] = x·Wkᵀ + bk
    int heads = 1, kvHeads = 1; // query head h reads key head h / (heads / kvHeads)
    double scale = 0.0;         // the layer's score scale (0: head_dim^-0.5)
    bool causal = false;
    int window = 0; // causal with a sliding window: keys j ≤ query − window hidden too
    int64_t headDim() const { return heads > 0 ? queries.cols() / heads : 0; }
};
ProjectedAttention projectAttention(const AttentionInputs& inputs);

// Throws attnlens::Error for a head, query or key outside the layer's (numbered from 0).
NeuronTerms neuronTerms(const ProjectedAttention& projected, int head, int query, int key);
NeuronTerms neuronTerms(const AttentionInputs& inputs, int head, int query, int key); // projects first

} // namespace attnlens
