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
// Thread-safety: immutable after load(); encode()/decode() may be called from any thread.

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

class WordPieceTokenizer {
public:
    // Throws attnlens::Error naming the file (missing, unreadable, no [UNK] / [CLS] / [SEP]).
    static std::shared_ptr<const WordPieceTokenizer> load(const std::filesystem::path& dir);

    TextEncoding encode(std::string_view text) const; // [CLS] … [SEP]
    std::vector<std::string> tokenize(std::string_view text) const;
    int vocabSize() const { return static_cast<int>(m_tokens.size()); }
    const std::string& token(int id) const; // "" outside the vocabulary
    std::optional<int> id(const std::string& token) const;
    int clsId() const { return m_cls; }
    int sepId() const { return m_sep; }
    int maskId() const { return m_mask; } // -1 when the vocabulary has no [MASK]
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

class ByteBpeTokenizer {
public:
    // Throws attnlens::Error naming the file (missing, not JSON, a merge of unknown tokens, a byte without a
    // token).
    static std::shared_ptr<const ByteBpeTokenizer> load(const std::filesystem::path& dir);

    TextEncoding encode(std::string_view text) const;
    std::vector<std::string> tokenize(std::string_view text) const;
    // Ids back to text (added tokens as themselves; ids outside the vocabulary skipped).
    std::string decode(std::span<const int> ids) const;
    // One token as the text it stands for ("Ġworld" → " world").
    std::string tokenText(int id) const;
    int vocabSize() const { return static_cast<int>(m_tokens.size()); }
    const std::string& token(int id) const;
    std::optional<int> id(const std::string& token) const;
    std::optional<int> endOfTextId() const; // <|endoftext|> when the vocabulary has it

private:
    std::vector<std::string> bpe(const std::string& word) const; // word: the stand-ins of one piece's bytes

    std::unordered_map<std::string, int> m_vocab;
    std::vector<std::string> m_tokens;
    // Merges over interned symbols: (left << 32 | right) -> rank and the merged symbol, so that a merge step
    // looks up integers only (a word of n bytes costs O(n²) lookups at worst, without allocations).
    struct MergeRule {
        int rank = 0;
        int result = 0;
    };
    int intern(const std::string& symbol);
    std::unordered_map<std::string, int> m_symbols;
    std::vector<std::string> m_symbolText;
    std::unordered_map<uint64_t, MergeRule> m_merges;
    std::vector<std::string> m_added; // added tokens, longest first
    std::string m_byteToUnicode[256]; // UTF-8 of each byte's stand-in
    std::unordered_map<char32_t, unsigned char> m_unicodeToByte;
};

// The pieces of GPT-2's pre-tokenization pattern (exposed for tests), as code-point ranges of `text`.
std::vector<std::u32string> gpt2Pretokenize(std::u32string_view text);

} // namespace attnlens
