#pragma once
// A GGUF tensor name of one layer, "blk.<layer>.<part>.<weight|bias>", taken apart for the families' renaming
// to transformers' names (core/models/llama_gguf.h, gpt2_gguf.h).
//
//   splitGgufBlockName("blk.3.attn_q.weight")   // {"3", "attn_q", "weight"}

#include <optional>
#include <string>

namespace attnlens {

struct GgufBlockName {
    std::string layer, part, kind; // kind: weight or bias
};

inline std::optional<GgufBlockName> splitGgufBlockName(const std::string& name) {
    if (name.rfind("blk.", 0) != 0) return std::nullopt;
    const size_t layerEnd = name.find('.', 4), kindStart = name.rfind('.');
    if (layerEnd == std::string::npos || kindStart <= layerEnd) return std::nullopt;
    GgufBlockName n{name.substr(4, layerEnd - 4), name.substr(layerEnd + 1, kindStart - layerEnd - 1),
                    name.substr(kindStart + 1)};
    if (n.layer.empty() || n.layer.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    if (n.kind != "weight" && n.kind != "bias") return std::nullopt;
    return n;
}

} // namespace attnlens
