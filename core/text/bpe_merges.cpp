#include "core/text/bpe_merges.h"

namespace attnlens {

int BpeMerges::intern(const std::string& symbol) {
    const auto [it, added] = m_symbols.emplace(symbol, static_cast<int>(m_symbolText.size()));
    if (added) m_symbolText.push_back(symbol);
    return it->second;
}

void BpeMerges::add(const std::string& a, const std::string& b, int rank) {
    const auto left = static_cast<uint64_t>(intern(a));
    const auto right = static_cast<uint64_t>(intern(b));
    const int result = intern(a + b);
    m_merges[(left << 32) | right] = Rule{rank, result};
}

std::vector<std::string> BpeMerges::apply(const std::vector<std::string>& symbols) const {
    // Symbols the merges know are ids >= 0; any other is -1 - k, its text symbols[k] (it never merges).
    std::vector<int> parts;
    parts.reserve(symbols.size());
    for (size_t k = 0; k < symbols.size(); ++k) {
        const auto it = m_symbols.find(symbols[k]);
        parts.push_back(it != m_symbols.end() ? it->second : -1 - static_cast<int>(k));
    }
    auto rule = [this](int a, int b) -> const Rule* {
        if (a < 0 || b < 0) return nullptr;
        const auto it = m_merges.find((static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b));
        return it == m_merges.end() ? nullptr : &it->second;
    };
    while (parts.size() > 1) {
        const Rule* best = nullptr;
        size_t at = 0;
        for (size_t i = 0; i + 1 < parts.size(); ++i)
            if (const Rule* r = rule(parts[i], parts[i + 1]); r && (!best || r->rank < best->rank))
                best = r, at = i;
        if (!best) break;
        const int a = parts[at], b = parts[at + 1];
        std::vector<int> merged;
        merged.reserve(parts.size());
        for (size_t i = 0; i < parts.size();) {
            if (i + 1 < parts.size() && parts[i] == a && parts[i + 1] == b) {
                merged.push_back(best->result);
                i += 2;
            } else {
                merged.push_back(parts[i]);
                ++i;
            }
        }
        parts = std::move(merged);
    }
    std::vector<std::string> out;
    out.reserve(parts.size());
    for (int id : parts)
        out.push_back(id >= 0 ? m_symbolText[static_cast<size_t>(id)]
                              : symbols[static_cast<size_t>(-1 - id)]);
    return out;
}

} // namespace attnlens
