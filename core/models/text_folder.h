#pragma once
// A text model folder (BERT, GPT-2, or a Llama-style decoder: core/models/llama_model.h) with its tokenizer,
// loaded together: what the Text page, the CLI's `text` and `bench --text` run. BERT folders bring a
// WordPiece tokenizer, GPT-2 folders a byte-level BPE one (core/text/text_tokenizers.h).
//
//   TextFolder f = loadTextFolder(dir);
//   TextEncoding e = f.encode("The [MASK] sat.");     TextForward out = f.forward(e.ids);

#include "core/models/text_models.h"
#include "core/text/chat_template.h"
#include "core/text/text_tokenizers.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnlens {

struct TextFolder {
    std::filesystem::path dir;
    std::string
        modelType; // "bert", "gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma3_text", "clip_text_model"
    std::shared_ptr<const TextModel>
        model; // the family's model behind the contract (core/models/text_models.h)
    std::shared_ptr<const BertModel> bert; // the same model as its family's class (its config), or nullptr
    std::shared_ptr<const Gpt2Model> gpt2;
    std::shared_ptr<const TextTokenizer> tokenizer; // the family's (core/text/text_tokenizers.h)
    // Llama-style folders: the chat template (core/text/chat_template.h), or nullopt with chatProblem saying
    // why when the folder's does not parse (the model still opens; only chat is unavailable).
    std::optional<ChatTemplate> chat;
    std::string chatProblem;
    // CLIP text encoders: the length every text is padded (and truncated) to, as the pipeline feeds it; 0 =
    // none.
    int padTo = 0;

    bool decoderOnly() const { return model && model->decoderOnly(); }
    bool piecesCarrySpaces() const { return tokenizer->piecesCarrySpaces(); }
    bool piecesEndWords() const { return tokenizer->piecesEndWords(); }
    bool hasLmHead() const { return model && model->hasLmHead(); }
    int layers() const;
    int heads() const;
    int maxPositions() const;
    int vocabSize() const;          // the model's
    int tokenizerVocabSize() const; // the tokenizer's (≤ the model's)
    // The text's tokens; `asChat`: the text as one user turn of the chat template, tokenized without the
    // post-processor's tokens (as transformers' apply_chat_template) — attnlens::Error when there is none.
    TextEncoding encode(const std::string& text, bool asChat = false) const;
    TextForward forward(const std::vector<int>& ids, bool logits = true, const RunControls& run = {}) const;
    const std::string& token(int id) const;
    // The text a token stands for, for display ("Ġworld" → " world"; WordPiece tokens as they are).
    std::string tokenText(int id) const;
    // The ids of [MASK] in `ids` (BERT with a mask token; empty otherwise).
    std::vector<int> maskPositions(const std::vector<int>& ids) const;
    int endOfTextId() const;        // GPT-2's <|endoftext|> / eos_token_id; -1 when none
    bool isEndOfText(int id) const; // any of the model's eos ids (or the tokenizer's end-of-text token)
};

// The tokenizer of a text folder without its weights (the CLI's `tokenize`): by config.json's model_type
// when there is one, else by the files: tokenizer.json, tokenizer.model (SentencePiece), vocab.txt
// (WordPiece), vocab.json + merges.txt; a GGUF file: its tokenizer.ggml.* vocabulary.
std::shared_ptr<const TextTokenizer> loadTextTokenizer(const std::filesystem::path& dir);

// Why a GGUF file of this general.architecture and tokenizer.ggml.model does not open as a text model (one
// line), or nullopt when it does (llama, qwen2, qwen3, gemma3, gpt2; byte-level 'gpt2' or SentencePiece
// 'llama' vocabularies). The cache dialog and `inspect` say it before anything is loaded.
std::optional<std::string> ggufRefusal(const std::string& architecture, const std::string& vocabulary);

// Throws attnlens::Error naming the folder: another model_type, missing tokenizer files, a bad checkpoint.
TextFolder loadTextFolder(const std::filesystem::path& dir, const Callbacks& callbacks = {});
bool isTextModelType(const std::string& modelType);

// The k most probable tokens of a logits row (softmax probabilities), best first.
struct TextCandidate {
    int id = 0;
    float probability = 0.0f;
};
std::vector<TextCandidate> topCandidates(const float* logits, int64_t vocab, int k);

} // namespace attnlens
