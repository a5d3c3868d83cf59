#pragma once
// The model contract's one capture type (issue 37): what a run of any family kept of its attention, as a list
// of blocks — one attention layer's heads over one query axis and one key axis — and the axes they share.
//
//   AttentionCapture c = translationCapture(trace);   // producers per family:
//   core/analysis/attention_captures.h for (const AttentionBlock& b : c.blocks)           // "encoder.0",
//   "cross.3", "down_blocks.1.attentions.0"
//       b.weights;                                     // [H, n, m]: n = c.axes[b.queryAxis].size(), m = keys
//   HeadStats s = captureHeadStats(c, AttentionKind::Cross);   // a lens reads the capture, not the family
//
// Blocks of one kind are that kind's layers in execution order (layer numbers from 0, as everywhere). Their
// weights share the run's buffers (Tensor::sub: no copy). An axis carries what the lenses need to know about
// its positions: labels for people, points for distances (text: the index; images: patch or pixel centres),
// and the keys that act as attention sinks (</s>, the start token, CLS).

#include "core/contract/run_controls.h"
#include "core/tensor/tensor.h"

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace attnlens {

struct AttentionAxis {
    std::string name;                // "source pieces", "tokens", "patches", "pixels 8×8"
    std::vector<std::string> labels; // one per position
    // One point per position for distances; empty: the index. A NaN x marks "no position" (CLS).
    std::vector<std::array<float, 2>> points;
    std::vector<int> sinks;      // positions counted as attention sinks; empty with hasSinks: position 0
    bool hasSinks = true;        // false: no position is special (U-Net pixels)
    std::vector<int> delimiters; // positions whose token is punctuation or a line break (text axes)

    int size() const { return static_cast<int>(labels.size()); }
};

struct AttentionBlock {
    std::string name; // the layer's name in the model ("encoder.0", "h.3", "down_blocks.1.attentions.0")
    AttentionKind kind = AttentionKind::EncoderSelf;
    int layer = 0;     // among the blocks of its kind, from 0
    Tensor weights;    // [H, n, m], rows are probabilities; empty when the block's maps are made on demand
    int queryAxis = 0; // index into AttentionCapture::axes
    int keyAxis = 0;   // the same axis as queryAxis for self-attention
    bool selfAttention() const { return queryAxis == keyAxis; }
    bool onDemand() const { return weights.empty() && makeHead; }
    int64_t heads() const { return onDemand() ? onDemandHeads : weights.empty() ? 0 : weights.dim(0); }
    // Head h's map [n, m] into out (contiguous), from the weights or made on demand.
    void headInto(int head, float* out) const;

    // On demand (issue 40; a long text's attention, core/contract/attention_store.h): head h's [n, m] map
    // into `out` (contiguous), for onDemandHeads heads. Unset when weights hold them.
    std::function<void(int head, float* out)> makeHead;
    int64_t onDemandHeads = 0;
};

struct AttentionCapture {
    std::vector<AttentionAxis> axes;
    std::vector<AttentionBlock> blocks;

    // Adds an axis; returns its index.
    int addAxis(AttentionAxis axis);
    // One block per layer of `layers` ([L, H, n, m], shared, not copied), named prefix + layer number.
    void addLayers(const Tensor& layers, AttentionKind kind, int queryAxis, int keyAxis,
                   const std::string& prefix);
    // The kinds present, in the order of their first block.
    std::vector<AttentionKind> kinds() const;
    // The blocks of one kind in layer order.
    std::vector<const AttentionBlock*> blocksOf(AttentionKind kind) const;
    // Throws attnlens::Error naming the first block whose weights are not [H, n, m] over its axes.
    void check() const;
};

} // namespace attnlens
