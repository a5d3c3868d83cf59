#pragma once
// BpeMerges: the merge step of byte-pair encoding, shared by the BPE tokenizers (GPT-2's byte-level BPE and
// CLIP's, core/text/text_tokenizers.h and clip_tokenizer.h): the ranked merges of a merges.txt, applied to
// the symbols of one pre-tokenized piece as transformers' slow tokenizers do — the adjacent pair with the
// lowest rank merges first, every occurrence of it left to right, until no adjacent pair has a merge.
//
//   BpeMerges merges;  merges.add("t", "h", 0);  merges.add("th", "e</w>", 1);
//   merges.apply({"t", "h", "e</w>"});          // {"the</w>"}
//
// Symbols are interned, so that a merge step looks up integers only (a piece of n symbols costs O(n²) lookups
// at worst, without allocations). Thread-safety: immutable after the add() calls.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlens {

class BpeMerges {
public:
    // The merge of a and b at `rank`; a pair added twice keeps the later rank (as a dict of the lines does).
    void add(const std::string& a, const std::string& b, int rank);
    std::vector<std::string> apply(const std::vector<std::string>& symbols) const;
    bool empty() const { return m_merges.empty(); }

private:
    struct Rule {
        int rank = 0;
        int result = 0;
    };
    int intern(const std::string& symbol);
    std::unordered_map<std::string, int> m_symbols;
    std::vector<std::string> m_symbolText;
    std::unordered_map<uint64_t, Rule> m_merges; // (left << 32 | right) -> rank and merged symbol
};

} // namespace attnlens
