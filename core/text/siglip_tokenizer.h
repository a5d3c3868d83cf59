#pragma once
// SiglipTokenizer: SigLIP's text tokenizer (spiece.model + tokenizer_config.json), equal to transformers
// v4.50.3's slow SiglipTokenizer (there is no fast one; tests/data/siglip/tokenizer_cases.json from
// tools/golden/make_siglip_fixtures.py):
//   1. "▁" is put in front of the text (a "▁" inside it becomes a space); with do_lower_case (default true)
//      everything but the special tokens is lower-cased (str.lower());
//   2. the special tokens (</s>, <unk>, … as added_tokens_decoder says; they take the white space around
//      them with them) are split off, the longest at the leftmost place;
//   3. every stretch between them is canonicalised as big_vision does (ASCII punctuation removed, runs of
//      white space made one space, ends trimmed) and encoded by the SentencePiece model with its dummy prefix
//      switched off, "<unk>" in front, whose pieces are then dropped;
//   4. a leading lone "▁" before a special token is dropped; pieces become ids; the EOS is appended unless
//      the text already ends with it.
// encodePadded() is what SigLIP was trained on and what transformers' zero-shot pipeline gives the model
// (padding="max_length", max_length=64, truncation=True): at most length − 1 tokens + EOS, padded to `length`
// with the pad token — which is the EOS in google/siglip-*: the text tower pools the LAST position.
//
//   auto tok = SiglipTokenizer::load(dir);   auto ids = tok->encodePadded("a photo of a cat", 64).ids;
//
// Thread-safety: immutable after load(); encode() may be called from any thread.

#include "core/text/added_tokens.h"
#include "core/text/text_tokenizers.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attnlens {

class SiglipTokenizer final : public TextTokenizer {
public:
    // Whether `dir` has a spiece.model.
    static bool present(const std::filesystem::path& dir);
    // dir/spiece.model and, when present, dir/tokenizer_config.json. Throws attnlens::Error naming the file.
    static std::shared_ptr<const SiglipTokenizer> load(const std::filesystem::path& dir);

    ~SiglipTokenizer() override;
    TextEncoding encode(std::string_view text) const override; // … EOS, neither truncated nor padded
    TextEncoding encodePadded(std::string_view text, int length) const;
    int vocabSize() const override { return static_cast<int>(m_tokens.size()); }
    const std::string& token(int id) const override;
    std::string tokenText(int id) const override;
    bool piecesCarrySpaces() const override { return true; }
    int endOfTextId() const override { return m_eos; }
    bool framesText(int id) const override { return id == m_eos || id == m_pad; }
    int padId() const { return m_pad; }
    int modelMaxLength() const { return m_maxLength; } // tokenizer_config.json's model_max_length (64)

private:
    SiglipTokenizer();
    std::vector<int> pieces(std::string_view text) const; // steps 1 to 4 without the EOS

    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_sp; // dummy prefix off
    std::vector<std::string> m_tokens;
    std::vector<bool> m_special;
    std::vector<std::string> m_specialTexts; // for lower-casing around them
    AddedTokens m_added;
    std::string m_unkText = "<unk>";
    size_t m_unkPieces = 0;
    bool m_lower = true;
    int m_eos = -1, m_pad = -1, m_unk = -1, m_maxLength = 64;
};

} // namespace attnlens
