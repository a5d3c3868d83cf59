#pragma once
// Value-weighted attention (Kobayashi et al., 2020, "Attention is not only a weight"): a head can attend hard
// to a key whose value it barely writes. What key j actually sends query i through head h is α_ij · f_h(x_j)
// with f_h(x_j) = v_{j,h} · W_O,hᵀ (the value through the head's slice of o_proj), so the map
//     α̃_ij = α_ij ‖f_h(x_j)‖ / Σ_k α_ik ‖f_h(x_k)‖
// shows where the head's output comes from. The norms need no [m, D] product per head: ‖W_O,h v‖² = vᵀ G_h v
// with G_h = W_O,hᵀ W_O,h ([head_dim]², made once per layer): MultiHeadAttention::valueNorms.
//
//   ResidualTrace trace;  trace.rows = {0};  trace.values = true;     // LayerTrace::valueNorms [H, m]
//   RunControls run;  run.trace = &trace;  model.forward(ids, false, run);
//   RowMatrix map = …head (l, h)'s attention [n, m]…;
//   valueWeightRows(map, trace.layers[l].valueNorms.row(h));

#include "core/layers/multi_head_attention.h"
#include "core/models/text_models.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"

#include <span>
#include <vector>

namespace attnlens {

// map [n, m] (one head's attention) in place: each weight times its key's norm, each row renormalised to sum
// to 1 (a row whose weighted sum is 0 stays 0). norms: [m].
void valueWeightRows(Eigen::Ref<RowMatrix> map, const Eigen::Ref<const Eigen::RowVectorXf>& norms);

// Every layer's value norms [heads, ids.size()] of a text model's pass over `ids` (one traced forward pass,
// no attention kept). Throws attnlens::Error for a family that does not trace its stream.
std::vector<RowMatrix> textValueNorms(const TextModel& model, std::span<const int> ids,
                                      const Callbacks* callbacks = nullptr);

// The same from a decoder's KV cache, no pass at all: each layer's norms over the cache's entries [heads,
// length]. Empty for a family without TransformerBlock blocks (TextModel::blocks()).
std::vector<RowMatrix> cacheValueNorms(const TextModel& model, const TextCache& cache);

// attentions [L, H, n, m] in place, every head's rows value-weighted with norms[l].row(h).
void valueWeightAttentions(Tensor& attentions, const std::vector<RowMatrix>& norms);

} // namespace attnlens
