#pragma once
// SentencePieceTokenizer: a Llama-family folder that brings `tokenizer.model` (SentencePiece) and no
// tokenizer.json — what transformers' AutoTokenizer reads through LlamaTokenizer(Fast): the tokens of
// tokenizer_config.json's added_tokens_decoder (else the model's control and unknown pieces: <s>, </s>,
// <unk>) are found in the raw text first (core/text/added_tokens.h); each stretch between them is encoded by
// the SentencePiece library, with its "▁" dummy prefix on every stretch (`legacy`, transformers' default) or
// only on the one that opens the text (`"legacy": false`); encode() puts the BOS in front (`add_bos_token`,
// default true) and the EOS behind (`add_eos_token`, default false). Ids equal Hugging Face's `tokenizers`
// on Mistral-7B's tokenizer.json for a tokenizer.model rebuilt from it (tests/data/tokenizers/mistral-spm).
//
//   auto tok = SentencePieceTokenizer::load(dir);   TextEncoding e = tok->encode("Hello");   // <s> ▁Hello

#include "core/io/json_file.h"
#include "core/text/added_tokens.h"
#include "core/text/text_tokenizers.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attnlens {

// What tokenizer_config.json (or a GGUF file's tokenizer.ggml.* metadata) adds to the model file.
struct SentencePieceSettings {
    bool legacy = true, addBos = true, addEos = false;
    std::string bos, eos;                         // piece names; empty or absent: the model's bos_id / eos_id
    std::optional<std::vector<AddedToken>> added; // none: the model's control and unknown pieces (special)
};

// A SentencePiece model file's bytes (at most 256 MB); throws attnlens::Error naming the file.
std::string readSentencePieceModel(const std::filesystem::path& path);
// The same serialized model with normalizer_spec.add_dummy_prefix = false.
std::string sentencePieceWithoutDummyPrefix(std::string serialized);
// A tokenizer_config.json special-token field ("eos_token": a string or {"content": …}); "" when absent.
std::string specialTokenContent(const Json& config, const char* key);
// tokenizer_config.json's added_tokens_decoder (none when absent); throws attnlens::Error naming `where`.
std::optional<std::vector<AddedToken>> addedTokensDecoder(const Json& config, const std::string& where);

class SentencePieceTokenizer final : public TextTokenizer {
public:
    // dir/tokenizer.model and, when present, dir/tokenizer_config.json. Throws attnlens::Error naming the
    // file: missing, not a SentencePiece model, a config field of the wrong type, an added token whose id is
    // outside the vocabulary.
    static std::shared_ptr<const SentencePieceTokenizer> load(const std::filesystem::path& dir);
    // A serialized ModelProto (a tokenizer.model's bytes, or one made from a GGUF vocabulary:
    // core/text/gguf_tokenizer.h); `where` names it in errors (an added token outside the vocabulary, …).
    static std::shared_ptr<const SentencePieceTokenizer>
    fromModel(const std::string& serialized, const SentencePieceSettings& settings, const std::string& where);
    static bool present(const std::filesystem::path& dir); // the folder has a tokenizer.model

    ~SentencePieceTokenizer() override;
    TextEncoding encode(std::string_view text) const override;
    TextEncoding encodePlain(std::string_view text) const override;
    int vocabSize() const override { return static_cast<int>(m_tokens.size()); }
    const std::string& token(int id) const override;
    std::string tokenText(int id) const override; // "▁world" → " world", "<0x0A>" → "\n"
    bool piecesCarrySpaces() const override { return true; }
    int endOfTextId() const override { return m_eos; }
    bool framesText(int id) const override;

private:
    SentencePieceTokenizer();
    void encodeStretch(std::string_view text, bool opensText, std::vector<int>& ids) const;

    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_sp;         // as the file says
    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_spNoPrefix; // without the dummy prefix
    std::vector<std::string> m_tokens;
    std::vector<bool> m_special;
    AddedTokens m_added;
    bool m_legacy = true, m_addBos = true, m_addEos = false;
    int m_bos = -1, m_eos = -1;
};

} // namespace attnlens
