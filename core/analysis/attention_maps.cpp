#include "core/analysis/attention_maps.h"

#include "core/util/error.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string>
#include <vector>

namespace attnlens {

std::optional<HeadFusion> parseHeadFusion(std::string_view name) {
    if (name == "mean") return HeadFusion::Mean;
    if (name == "max") return HeadFusion::Max;
    if (name == "min") return HeadFusion::Min;
    return std::nullopt;
}

int clampLayer(int layer, int layers) {
    return std::clamp(layer, 0, std::max(0, layers - 1));
}

int clampHead(int head, int heads) {
    return head < 0 || head >= heads ? -1 : head;
}

bool AttentionSelection::setLayer(int value, int layers) {
    value = clampLayer(value, layers);
    if (value == layer) return false;
    layer = value;
    return true;
}

bool AttentionSelection::setHead(int value, int headCount) {
    value = clampHead(value, headCount);
    if (value == heads.head) return false;
    heads.head = value;
    return true;
}

bool AttentionSelection::setFusion(HeadFusion value) {
    if (value == heads.fusion) return false;
    heads.fusion = value;
    return true;
}

HeadSelection parseHeadSelection(std::string_view text, int heads) {
    if (auto fusion = parseHeadFusion(text)) return {-1, *fusion};
    int h = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), h);
    if (ec != std::errc() || ptr != text.data() + text.size() || h < 0)
        throw Error("head: expected a head index (from 0) or mean|max|min, got '" + std::string(text) + "'");
    if (heads >= 0 && h >= heads)
        throw Error("head: " + std::string(text) + " is out of range (the model has " +
                    std::to_string(heads) + " heads, numbered from 0)");
    return {h, HeadFusion::Mean};
}

std::string_view headFusionName(HeadFusion fusion) {
    switch (fusion) {
    case HeadFusion::Mean:
        return "mean";
    case HeadFusion::Max:
        return "max";
    case HeadFusion::Min:
        return "min";
    }
    return "?";
}

RowMatrix fuseHeads(const Tensor& layerAttention, HeadFusion fusion) {
    if (layerAttention.rank() != 3 || layerAttention.dim(0) < 1)
        throw Error("fuseHeads: expected [heads, query, key], got " + shapeToString(layerAttention.shape()));
    return fuseHeads(static_cast<int>(layerAttention.dim(0)), fusion,
                     [&](int h) { return RowMatrix(layerAttention.slice2d({h})); });
}

RowMatrix fuseHeads(int heads, HeadFusion fusion, const std::function<RowMatrix(int head)>& headMap) {
    if (heads < 1) throw Error("fuseHeads: no heads");
    RowMatrix out = headMap(0); // [Q, K]
    for (int h = 1; h < heads; ++h) {
        const RowMatrix a = headMap(h);
        switch (fusion) {
        case HeadFusion::Mean:
            out += a;
            break;
        case HeadFusion::Max:
            out = out.cwiseMax(a);
            break;
        case HeadFusion::Min:
            out = out.cwiseMin(a);
            break;
        }
    }
    if (fusion == HeadFusion::Mean) out /= static_cast<float>(heads);
    return out;
}

RowMatrix layerAttention(const Tensor& attentions, int layer, const HeadSelection& heads) {
    if (attentions.rank() != 4)
        throw Error("attention maps: expected [layer, head, query, key], got " +
                    shapeToString(attentions.shape()));
    if (layer < 0 || layer >= attentions.dim(0))
        throw Error("layer " + std::to_string(layer) + " out of range (the model has " +
                    std::to_string(attentions.dim(0)) + " layers, numbered from 0)");
    if (heads.head >= attentions.dim(1))
        throw Error("head " + std::to_string(heads.head) + " out of range (the model has " +
                    std::to_string(attentions.dim(1)) + " heads, numbered from 0)");
    if (heads.head >= 0) return attentions.slice2d({layer, heads.head});
    return fuseHeads(attentions.sub({layer}), heads.fusion);
}

RowMatrix layerAttention(const AttentionStore& store, int layer, const HeadSelection& heads) {
    if (!store.onDemand()) return layerAttention(store.captured(), layer, heads);
    if (layer < 0 || layer >= store.layers())
        throw Error("layer " + std::to_string(layer) + " out of range (the model has " +
                    std::to_string(store.layers()) + " layers, numbered from 0)");
    if (heads.head >= store.heads())
        throw Error("head " + std::to_string(heads.head) + " out of range (the model has " +
                    std::to_string(store.heads()) + " heads, numbered from 0)");
    if (heads.head >= 0) return store.head(layer, heads.head);
    return fuseHeads(static_cast<int>(store.heads()), heads.fusion,
                     [&](int h) { return store.head(layer, h); });
}

RowMatrix attentionRollout(const Tensor& attentions, const RolloutOptions& options) {
    if (attentions.rank() != 4 || attentions.dim(0) < 1 || attentions.dim(2) != attentions.dim(3))
        throw Error("attention rollout: expected non-empty [layer, head, T, T], got " +
                    shapeToString(attentions.shape()));
    if (!(options.discardRatio >= 0.0f && options.discardRatio < 1.0f))
        throw Error("attention rollout: discard ratio must be in [0, 1)");
    const int layers = static_cast<int>(attentions.dim(0));
    const int last = options.lastLayer < 0 ? layers - 1 : options.lastLayer;
    if (options.firstLayer < 0 || last >= layers || options.firstLayer > last)
        throw Error("attention rollout: layer range " + std::to_string(options.firstLayer) + ".." +
                    std::to_string(last) + " is invalid for " + std::to_string(layers) + " layers");
    const int64_t t = attentions.dim(2);
    RowMatrix result = RowMatrix::Identity(t, t); // [T, T]
    for (int layer = options.firstLayer; layer <= last; ++layer) {
        RowMatrix a = fuseHeads(attentions.sub({layer}), options.fusion); // [T, T]
        if (options.discardRatio > 0.0f && t > 1) {
            // The smallest weights among keys 1..T-1 (ties broken by position) are dropped.
            std::vector<int64_t> order(static_cast<size_t>(t * (t - 1)));
            std::iota(order.begin(), order.end(), 0);
            auto entry = [&](int64_t i) -> float& { return a(i / (t - 1), 1 + i % (t - 1)); };
            const auto drop = static_cast<int64_t>(static_cast<double>(order.size()) * options.discardRatio);
            std::nth_element(order.begin(), order.begin() + drop, order.end(), [&](int64_t x, int64_t y) {
                return entry(x) < entry(y) || (entry(x) == entry(y) && x < y);
            });
            for (int64_t i = 0; i < drop; ++i)
                entry(order[i]) = 0.0f;
        }
        a += RowMatrix::Identity(t, t); // the residual connection
        const Eigen::VectorXf sums = a.rowwise().sum();
        a.array().colwise() /= sums.array();
        result = a * result;
    }
    return result;
}

namespace {

void checkIndices(std::span<const int> indices, int64_t size, const char* what) {
    if (indices.empty()) throw Error(std::string("attention map: no ") + what + " tokens chosen");
    for (int i : indices)
        if (i < 0 || i >= size)
            throw Error(std::string("attention map: ") + what + " token " + std::to_string(i) +
                        " out of range (0.." + std::to_string(size - 1) + ")");
}

} // namespace

Eigen::VectorXf queryMap(const Eigen::Ref<const RowMatrix>& attention, std::span<const int> queries,
                         TokenReduce reduce) {
    checkIndices(queries, attention.rows(), "query");
    Eigen::VectorXf out = Eigen::VectorXf::Zero(attention.cols());
    for (int q : queries)
        out += attention.row(q).transpose();
    if (reduce == TokenReduce::Mean) out /= static_cast<float>(queries.size());
    return out;
}

Eigen::VectorXf keyMap(const Eigen::Ref<const RowMatrix>& attention, std::span<const int> keys,
                       TokenReduce reduce) {
    checkIndices(keys, attention.cols(), "key");
    Eigen::VectorXf out = Eigen::VectorXf::Zero(attention.rows());
    for (int k : keys)
        out += attention.col(k);
    if (reduce == TokenReduce::Mean) out /= static_cast<float>(keys.size());
    return out;
}

RowMatrix tokensToGrid(const Eigen::Ref<const Eigen::VectorXf>& perToken, int rows, int cols,
                       int firstToken) {
    if (rows < 1 || cols < 1 || firstToken < 0 || firstToken + int64_t(rows) * cols > perToken.size())
        throw Error("tokensToGrid: " + std::to_string(perToken.size()) + " tokens cannot fill a " +
                    std::to_string(rows) + "×" + std::to_string(cols) + " grid from token " +
                    std::to_string(firstToken));
    RowMatrix grid(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            grid(r, c) = perToken(firstToken + r * cols + c);
    return grid;
}

} // namespace attnlens
