#pragma once
// HfTokenizer: a Hugging Face `tokenizer.json` with a BPE model, the format the LLM folders of today bring
// (Llama 3, Qwen2/3, SmolLM: byte-level BPE behind the model's own split regex; Llama 2, Mistral, TinyLlama,
// Gemma: SentencePiece-style BPE over "▁" with byte fallback). Ids equal Hugging Face's Rust `tokenizers`
// (tests/data/tokenizers goldens, tools/golden/make_tokenizer_goldens.mjs) on the real files:
//   1. added tokens (special or not) are found in the raw text first, longest at the leftmost place, and
//      kept whole (core/text/added_tokens.h: lstrip, rstrip, single_word; `normalized` is not read: such
//      tokens are matched in the raw text too);
//   2. each stretch between them is normalised (NFC, NFKC, NFD, Lowercase, Replace, Prepend, Sequence);
//   3. pre-tokenised (Split by a regex — PCRE2 with Unicode properties — or a string, with its behaviour;
//      ByteLevel, optionally with GPT-2's regex; Metaspace; Sequence);
//   4. each piece is merged by rank (a heap, O(n log n) per piece), or taken whole when the vocabulary has it
//      and ignore_merges is set; characters outside the vocabulary become <0xXX> byte tokens (byte_fallback)
//      or the unknown token (consecutive ones fused when fuse_unk);
//   5. encode() adds what the post-processor's template adds around one sequence (Llama 2 / Gemma: BOS).
// Anything else in the file (another model type, normalizer or pre-tokenizer) is refused naming it.
//
//   auto tok = HfTokenizer::load(dir);        TextEncoding e = tok->encode("Hello");   // <bos> Hello

#include "core/text/added_tokens.h"
#include "core/text/text_tokenizers.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlens {

class HfRegex; // a compiled PCRE2 pattern (hf_tokenizer.cpp)
using Json = nlohmann::json;

class HfTokenizer final : public TextTokenizer {
public:
    // dir/tokenizer.json (and tokenizer_config.json's eos_token when present). Throws attnlens::Error naming
    // the file and the field: not JSON, not a BPE model, an unsupported step, a merge of unknown tokens, a
    // regex PCRE2 does not compile.
    static std::shared_ptr<const HfTokenizer> load(const std::filesystem::path& dir);
    static bool present(const std::filesystem::path& dir); // the folder has a tokenizer.json
    // The same from a tokenizer.json document already read (or made: core/text/gguf_tokenizer.h); `where`
    // names it in errors; eosId: the end-of-text token (-1: none).
    static std::shared_ptr<const HfTokenizer> fromJson(const Json& tokenizerJson, const std::string& where,
                                                       int eosId = -1);

    TextEncoding encode(std::string_view text) const override;      // with the template's tokens (BOS, …)
    TextEncoding encodePlain(std::string_view text) const override; // without them
    std::string decode(std::span<const int> ids) const;             // ids back to text (the decoder's rules)
    // The model's vocabulary (added tokens past it, such as Gemma 3's image token, not counted).
    int vocabSize() const override { return m_modelVocab; }
    const std::string& token(int id) const override;
    std::string tokenText(int id) const override; // "Ġworld" / "▁world" → " world", "<0x0A>" → "\n"
    bool piecesCarrySpaces() const override { return true; }
    int endOfTextId() const override { return m_eos; }
    bool framesText(int id) const override;
    bool isSpecial(int id) const;
    std::optional<int> id(const std::string& token) const;

    // The steps, as read (public for load's helpers).
    struct Normalizer {
        enum class Kind { Nfc, Nfkc, Nfd, Lowercase, Replace, Prepend };
        Kind kind = Kind::Nfc;
        std::string from, to; // Replace: from → to; Prepend: to
    };
    struct PreTokenizer {
        enum class Kind { Split, ByteLevel, Metaspace };
        enum class Behavior { Isolated, Removed, MergedWithPrevious, MergedWithNext };
        Kind kind = Kind::Split;
        std::shared_ptr<const HfRegex> regex; // Split by regex; ByteLevel with use_regex (GPT-2's)
        std::string literal;                  // Split by string
        Behavior behavior = Behavior::Isolated;
        bool invert = false;
        bool addPrefixSpace = false;              // ByteLevel
        std::string replacement = "\xE2\x96\x81"; // Metaspace "▁"
        std::string prependScheme = "always";     // Metaspace: always, first, never
        bool split = true;                        // Metaspace
    };

private:
    static std::shared_ptr<HfTokenizer> build(const Json& tokenizerJson, const std::string& where);
    static void readMerges(HfTokenizer& tok, const Json& model, const std::string& where);
    static void readPostProcessor(HfTokenizer& tok, const Json& post, const std::string& where,
                                  int depth = 0);
    static void readDecoder(HfTokenizer& tok, const Json& decoder, int depth = 0);
    static void readEos(HfTokenizer& tok, const std::filesystem::path& dir);
    std::vector<std::string> preTokenize(std::string text, bool atStart) const;
    void bpe(const std::string& piece, std::vector<int>& out) const;
    std::string normalize(std::string text) const;

    std::unordered_map<std::string, int> m_vocab;
    std::vector<std::string> m_tokens;
    std::unordered_map<uint64_t, std::pair<int, int>> m_merges; // (left << 32 | right) -> (rank, merged id)
    bool m_byteFallback = false, m_ignoreMerges = false, m_fuseUnk = false, m_byteLevelDecode = false,
         m_stripLeadingSpace = false;
    int m_unk = -1, m_eos = -1, m_modelVocab = 0;
    std::array<int, 256> m_byteIds{}; // <0xXX> tokens (byte_fallback), -1 when absent
    std::vector<Normalizer> m_normalizers;
    std::vector<PreTokenizer> m_preTokenizers;
    AddedTokens m_added;
    std::vector<bool> m_special;         // per id
    std::vector<int> m_prefix, m_suffix; // the template around one sequence
};

} // namespace attnlens
