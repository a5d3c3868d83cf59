#include "core/contract/attention_store.h"

#include "core/util/error.h"

#include <cstring>
#include <string>

namespace attnlens {

int64_t capturedAttentionBytes(int64_t layers, int64_t heads, int64_t rows, int64_t cols) {
    return layers * heads * rows * cols * static_cast<int64_t>(sizeof(float));
}

AttentionStore::AttentionStore(Tensor captured) : m_captured(std::move(captured)) {
    if (m_captured.empty()) return;
    if (m_captured.rank() != 4)
        throw Error("attention is " + shapeToString(m_captured.shape()) + ", expected [L, H, n, m]");
    m_layers = m_captured.dim(0);
    m_heads = m_captured.dim(1);
    m_rows = m_captured.dim(2);
    m_cols = m_captured.dim(3);
}

AttentionStore::AttentionStore(std::vector<LayerRecall> layers, int64_t heads,
                               std::shared_ptr<const void> owner)
    : m_recall(std::move(layers)), m_owner(std::move(owner)) {
    if (m_recall.empty()) return;
    m_layers = static_cast<int64_t>(m_recall.size());
    m_heads = heads;
    m_rows = m_recall.front().queries.rows();
    m_cols = m_recall.front().keys.rows();
    for (const LayerRecall& r : m_recall)
        if (!r.attention || r.queries.rows() != m_rows || r.keys.rows() != m_cols ||
            r.attention->heads() != heads)
            throw Error("attention on demand: the layers' recalls differ in shape");
}

const Tensor& AttentionStore::captured() const {
    if (onDemand()) throw Error("attention on demand has no captured tensor: ask for one head at a time");
    return m_captured;
}

void AttentionStore::checkPair(int layer, int head) const {
    if (layer < 0 || layer >= m_layers || head < 0 || head >= m_heads)
        throw Error("attention head " + std::to_string(layer) + ":" + std::to_string(head) +
                    " is outside the " + std::to_string(m_layers) + " layers × " + std::to_string(m_heads) +
                    " heads (numbered from 0)");
}

void AttentionStore::headInto(int layer, int head, float* out) const {
    checkPair(layer, head);
    if (onDemand()) {
        m_recall[static_cast<size_t>(layer)].headInto(head, out);
        return;
    }
    const Tensor map = m_captured.sub({layer, head});
    std::memcpy(out, map.data(), sizeof(float) * static_cast<size_t>(m_rows * m_cols));
}

RowMatrix AttentionStore::head(int layer, int head) const {
    RowMatrix out(m_rows, m_cols);
    headInto(layer, head, out.data());
    return out;
}

int64_t AttentionStore::bytes() const {
    int64_t total = m_captured.numel() * static_cast<int64_t>(sizeof(float));
    for (const LayerRecall& r : m_recall)
        total += r.bytes();
    return total;
}

} // namespace attnlens
