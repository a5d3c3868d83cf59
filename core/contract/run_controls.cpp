#include "core/contract/run_controls.h"

#include "core/util/error.h"

#include <algorithm>
#include <string>

namespace attnlens {

std::optional<AttentionKind> parseAttentionKind(std::string_view name) {
    if (name == "encoder") return AttentionKind::EncoderSelf;
    if (name == "decoder") return AttentionKind::DecoderSelf;
    if (name == "cross") return AttentionKind::Cross;
    return std::nullopt;
}

std::string_view attentionKindId(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::EncoderSelf:
        return "encoder";
    case AttentionKind::DecoderSelf:
        return "decoder";
    case AttentionKind::Cross:
        return "cross";
    }
    return {};
}

std::vector<std::vector<int>> headsOffByLayer(const HeadList& heads, std::span<const int> headsPerLayer,
                                              std::string_view layerNoun) {
    const int layers = static_cast<int>(headsPerLayer.size());
    const bool uniform = std::adjacent_find(headsPerLayer.begin(), headsPerLayer.end(),
                                            std::not_equal_to<>()) == headsPerLayer.end();
    std::vector<std::vector<int>> off(headsPerLayer.size());
    for (const auto& [layer, head] : heads) {
        const bool layerOk = layer >= 0 && layer < layers;
        if (layerOk && head >= 0 && head < headsPerLayer[static_cast<size_t>(layer)]) {
            off[static_cast<size_t>(layer)].push_back(head);
            continue;
        }
        // Uniform layers read "the 2 layers × 4 heads"; others (U-Net levels) name the layer's own count.
        const bool grid = uniform && layers > 0 && layerNoun == "layers";
        std::string message = "ablated head " + std::to_string(layer) + ":" + std::to_string(head) +
                              " is outside the " + std::to_string(layers) + " " + std::string(layerNoun);
        if (grid) message += " × " + std::to_string(headsPerLayer.front()) + " heads";
        message += " (numbered from 0)";
        if (!grid && layerOk)
            message += "; layer " + std::to_string(layer) + " has " +
                       std::to_string(headsPerLayer[static_cast<size_t>(layer)]) + " head(s)";
        throw Error(message);
    }
    for (auto& list : off) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    return off;
}

} // namespace attnlens
