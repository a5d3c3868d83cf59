#pragma once
// The tokenizers of BERT- and GPT-2-style folders, equal to transformers v4.33's slow BertTokenizer and
// GPT2Tokenizer on every input (tests/data/text goldens from tools/golden/text_reference.py):
//
// WordPieceTokenizer (vocab.txt, or tokenizer.json's WordPiece vocabulary; tokenizer_config.json's
// do_lower_case, strip_accents, tokenize_chinese_chars): special tokens ([CLS], [SEP], [MASK], [PAD], [UNK])
// typed in the text are kept whole; the rest is lower-cased one character at a time (special tokens
// excepted), control characters are dropped, white space becomes a space, CJK ideographs are split off, NFC,
// split on white space, accents stripped (NFD without Mn) when lower-casing, split on punctuation, then
// greedy longest-match WordPiece ("##" pieces; [UNK] for a word longer than 100 characters or one that cannot
// be pieced). encode() adds [CLS] … [SEP].
//
// ByteBpeTokenizer (vocab.json + merges.txt, or tokenizer.json's BPE model): added tokens such as
// <|endoftext|> are kept whole; the rest is split by GPT-2's pattern ('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|
// ?\p{N}+|
// ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+), each piece's UTF-8 bytes are mapped to GPT-2's printable stand-ins and
// merged by rank. No BOS is added. decode() maps the bytes back.
//
// Both derive from TextTokenizer, what a text model folder (core/models/text_folder.h) and everything above
// it use; a new family's tokenizer is one more class behind it.
//
// Thread-safety: immutable after load(); encode()/decode() may be called from any thread.

#include "core/text/bpe_merges.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnlens {

struct TextEncoding {
    std::vector<std::string> tokens; // as the tokenizer names them ("##ing", "Ġworld", "[CLS]")
    std::vector<int> ids;
};

// The text a SentencePiece-style piece stands for: "▁world" → " world", a byte-fallback "<0x0A>" → "\n".
std::string sentencePieceText(const std::string& piece);

// The tokenizer contract of the text families.
class TextTokenizer {
public:
    virtual ~TextTokenizer() = default;
    // The text's tokens with the ones the family adds around it ([CLS] … [SEP]; a BOS where the family has
    // one).
    virtual TextEncoding encode(std::string_view text) const = 0;
    // Without the tokens the family adds around a text (add_special_tokens=False): encode() less the leading
    // and trailing ones framesText() names.
    virtual TextEncoding encodePlain(std::string_view text) const;
    virtual int vocabSize() const = 0;
    virtual const std::string& token(int id) const = 0; // as the vocabulary names it; "" outside it
    // The text a token stands for, for display ("Ġworld" → " world"; WordPiece tokens as they are).
    virtual std::string tokenText(int id) const = 0;
    // How words are marked: pieces carry their leading space (byte-level BPE "Ġ", SentencePiece "▁") or
    // continue a word with "##" (WordPiece).
    virtual bool piecesCarrySpaces() const = 0;
    // Whether a word's last piece is marked instead ("cat</w>": CLIP): labels drop the mark, words end there.
    virtual bool piecesEndWords() const { return false; }
    virtual int maskId() const { return -1; }      // the [MASK] token; -1 when there is none
    virtual int endOfTextId() const { return -1; } // the end-of-text token the vocabulary has; -1 when none
    // A token the family adds around every text ([CLS], [SEP]): not a word of the user's.
    virtual bool framesText(int id) const {
        (void)id;
        return false;
    }

protected:
    // prefix + ids + suffix, each with its token().
    TextEncoding framed(const std::vector<int>& prefix, const std::vector<int>& ids,
                        const std::vector<int>& suffix = {}) const;
};

class WordPieceTokenizer final : public TextTokenizer {
public:
    // Throws attnlens::Error naming the file (missing, unreadable, no [UNK] / [CLS] / [SEP]).
    static std::shared_ptr<const WordPieceTokenizer> load(const std::filesystem::path& dir);

    TextEncoding encode(std::string_view text) const override; // [CLS] … [SEP]
    std::vector<std::string> tokenize(std::string_view text) const;
    int vocabSize() const override { return static_cast<int>(m_tokens.size()); }
    const std::string& token(int id) const override;
    std::string tokenText(int id) const override { return token(id); }
    bool piecesCarrySpaces() const override { return false; }
    bool framesText(int id) const override { return id == m_cls || id == m_sep; }
    std::optional<int> id(const std::string& token) const;
    int clsId() const { return m_cls; }
    int sepId() const { return m_sep; }
    int maskId() const override { return m_mask; }
    int unkId() const { return m_unk; }
    bool lowerCase() const { return m_lower; }

private:
    std::vector<std::string> basicTokens(std::u32string_view text) const;
    void wordPieces(const std::u32string& word, std::vector<std::string>& out) const;

    std::unordered_map<std::string, int> m_vocab;
    std::vector<std::string> m_tokens;
    std::vector<std::string> m_specials; // kept whole in the text
    bool m_lower = true;
    std::optional<bool> m_stripAccents;
    bool m_chinese = true;
    int m_cls = -1, m_sep = -1, m_mask = -1, m_unk = -1;
};

class ByteBpeTokenizer final : public TextTokenizer {
public:
    // Throws attnlens::Error naming the file (missing, not JSON, a merge of unknown tokens, a byte without a
    // token).
    static std::shared_ptr<const ByteBpeTokenizer> load(const std::filesystem::path& dir);

    TextEncoding encode(std::string_view text) const override;
    std::vector<std::string> tokenize(std::string_view text) const;
    // Ids back to text (added tokens as themselves; ids outside the vocabulary skipped).
    std::string decode(std::span<const int> ids) const;
    std::string tokenText(int id) const override; // "Ġworld" → " world"
    bool piecesCarrySpaces() const override { return true; }
    int vocabSize() const override { return static_cast<int>(m_tokens.size()); }
    const std::string& token(int id) const override;
    std::optional<int> id(const std::string& token) const;
    int endOfTextId() const override; // <|endoftext|>; -1 when the vocabulary has none

private:
    std::vector<std::string> bpe(const std::string& word) const; // word: the stand-ins of one piece's bytes

    std::unordered_map<std::string, int> m_vocab;
    std::vector<std::string> m_tokens;
    BpeMerges m_merges;
    std::vector<std::string> m_added; // added tokens, longest first
    std::string m_byteToUnicode[256]; // UTF-8 of each byte's stand-in
    std::unordered_map<char32_t, unsigned char> m_unicodeToByte;
};

// The pieces of GPT-2's pre-tokenization pattern (exposed for tests), as code-point ranges of `text`.
std::vector<std::u32string> gpt2Pretokenize(std::u32string_view text);

} // namespace attnlens
