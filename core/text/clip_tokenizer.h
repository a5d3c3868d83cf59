#pragma once
// ClipTokenizer: CLIP's BPE, the tokenizer/ folder of a Stable Diffusion pipeline (vocab.json + merges.txt,
// tokenizer_config.json / special_tokens_map.json), equal to transformers v4.33's CLIPTokenizer as it runs
// without ftfy (its own fallback; tests/data/t2i goldens from tools/golden/make_clip_fixtures.py):
//   1. the special tokens (bos, eos, unk, pad; SD 2.x's pad is "!") and added_tokens.json's are split off
//   first,
//      the longest at the leftmost place, and are their own ids;
//   2. the rest is cleaned as BERT's BasicTokenizer does (control characters dropped, white space folded, CJK
//      ideographs spaced, NFC), split on white space, each word lower-cased (str.lower()), joined by spaces;
//   3. CLIP's pattern cuts it: <|startoftext|> | <|endoftext|> | 's 't 're 've 'm 'll 'd | letters+ | one
//      number | other characters+ (white space between pieces dropped);
//   4. each piece's UTF-8 bytes become GPT-2's printable stand-ins, "</w>" is appended to its last symbol,
//   and
//      merges.txt's merges apply by rank (its first line skipped, at most 48 894 merges, as CLIP's file has);
//      a piece that is <|startoftext|> or <|endoftext|> stays whole;
//   5. tokens the vocabulary lacks become unk; encode() frames the ids: BOS … EOS.
// encodePadded() is what the pipeline gives its text encoder: BOS + at most length − 2 pieces + EOS, padded
// to `length` with the pad token.
//
// Thread-safety: immutable after load(); encode() may be called from any thread.

#include "core/text/added_tokens.h"
#include "core/text/bpe_merges.h"
#include "core/text/text_tokenizers.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnlens {

class ClipTokenizer final : public TextTokenizer {
public:
    // A folder CLIPTokenizer reads: tokenizer_config.json naming CLIPTokenizer(Fast), or a CLIP text
    // encoder's config.json (model_type clip_text_model) beside vocab.json and merges.txt.
    static bool present(const std::filesystem::path& dir);
    // Throws attnlens::Error naming the file (missing, not JSON, a special token the vocabulary lacks).
    static std::shared_ptr<const ClipTokenizer> load(const std::filesystem::path& dir);

    TextEncoding encode(std::string_view text) const override; // BOS … EOS, neither truncated nor padded
    TextEncoding encodePadded(std::string_view text, int length = 77) const;
    std::vector<std::string> tokenize(std::string_view text) const; // without BOS / EOS
    int vocabSize() const override { return static_cast<int>(m_tokens.size()); }
    const std::string& token(int id) const override;
    std::string tokenText(int id) const override; // "cat</w>" → "cat ", special tokens as they are
    bool piecesCarrySpaces() const override { return false; }
    bool piecesEndWords() const override { return true; }
    int endOfTextId() const override { return m_eos; }
    bool framesText(int id) const override { return id == m_bos || id == m_eos; }
    int bosId() const { return m_bos; }
    int eosId() const { return m_eos; }
    int padId() const { return m_pad; }

private:
    std::vector<int>
    pieceIds(std::string_view text) const; // tokenize()'s ids, unk for tokens not in the vocabulary
    std::vector<std::string> bpe(const std::string& piece) const;

    std::unordered_map<std::string, int> m_vocab;
    std::vector<std::string> m_tokens;
    BpeMerges m_merges;
    AddedTokens
        m_specials; // split off the text first; their ids are the vocabulary's (or added_tokens.json's)
    std::string m_byteToUnicode[256];
    std::unordered_map<char32_t, unsigned char> m_unicodeToByte;
    int m_bos = -1, m_eos = -1, m_pad = -1, m_unk = -1;
};

// CLIP's pattern over a cleaned, lower-cased text (exposed for tests).
std::vector<std::u32string> clipPretokenize(std::u32string_view text);

} // namespace attnlens
