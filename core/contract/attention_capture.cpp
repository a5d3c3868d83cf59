#include "core/contract/attention_capture.h"

#include "core/util/error.h"

#include <algorithm>

namespace attnlens {

int AttentionCapture::addAxis(AttentionAxis axis) {
    axes.push_back(std::move(axis));
    return static_cast<int>(axes.size()) - 1;
}

void AttentionCapture::addLayers(const Tensor& layers, AttentionKind kind, int queryAxis, int keyAxis,
                                 const std::string& prefix) {
    if (layers.empty()) return;
    if (layers.rank() != 4)
        throw Error("attention of " + prefix + " is " + shapeToString(layers.shape()) +
                    ", expected [L, H, n, m]");
    for (int64_t l = 0; l < layers.dim(0); ++l)
        blocks.push_back({prefix + std::to_string(l),
                          kind,
                          static_cast<int>(l),
                          layers.sub({l}),
                          queryAxis,
                          keyAxis,
                          {},
                          0});
}

std::vector<AttentionKind> AttentionCapture::kinds() const {
    std::vector<AttentionKind> out;
    for (const AttentionBlock& b : blocks)
        if (std::find(out.begin(), out.end(), b.kind) == out.end()) out.push_back(b.kind);
    return out;
}

std::vector<const AttentionBlock*> AttentionCapture::blocksOf(AttentionKind kind) const {
    std::vector<const AttentionBlock*> out;
    for (const AttentionBlock& b : blocks)
        if (b.kind == kind) out.push_back(&b);
    std::stable_sort(out.begin(), out.end(),
                     [](const AttentionBlock* a, const AttentionBlock* b) { return a->layer < b->layer; });
    return out;
}

void AttentionBlock::headInto(int head, float* out) const {
    if (head < 0 || head >= heads())
        throw Error("attention block " + name + " has no head " + std::to_string(head) +
                    " (numbered from 0)");
    if (onDemand()) return makeHead(head, out);
    const Tensor map = weights.sub({head});
    std::copy(map.data(), map.data() + map.numel(), out);
}

void AttentionCapture::check() const {
    for (const AttentionBlock& b : blocks) {
        const auto axisSize = [&](int axis) -> int64_t {
            if (axis < 0 || axis >= static_cast<int>(axes.size()))
                throw Error("attention block " + b.name + " names axis " + std::to_string(axis) + " of " +
                            std::to_string(axes.size()));
            return axes[size_t(axis)].size();
        };
        const int64_t n = axisSize(b.queryAxis), m = axisSize(b.keyAxis);
        if (b.onDemand()) {
            if (b.onDemandHeads <= 0) throw Error("attention block " + b.name + " makes no heads");
        } else if (b.weights.rank() != 3 || b.weights.dim(1) != n || b.weights.dim(2) != m)
            throw Error("attention block " + b.name + " is " + shapeToString(b.weights.shape()) +
                        ", expected [H, " + std::to_string(n) + ", " + std::to_string(m) + "]");
        const AttentionAxis& q = axes[size_t(b.queryAxis)];
        const AttentionAxis& k = axes[size_t(b.keyAxis)];
        if ((!q.points.empty() && q.size() != static_cast<int>(q.points.size())) ||
            (!k.points.empty() && k.size() != static_cast<int>(k.points.size())))
            throw Error("attention block " + b.name + ": an axis has " +
                        "a different number of points than labels");
    }
}

} // namespace attnlens
