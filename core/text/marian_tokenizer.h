#pragma once
// MarianTokenizer: the Hugging Face MarianTokenizer (slow) path for one model folder.
//
//   source.spm   SentencePiece model that splits source text into pieces
//   target.spm   SentencePiece model that joins target pieces back into text
//   vocab.json   piece -> model id (SentencePiece's own ids are NOT model ids)
//
// encode(text):
//   1. a language code `>>xx<<` at the very start (regex `>>.+<<`, greedy, within the first line) is
//      kept as its own token; every `>>.+<<` match is removed from the text (as HF's re.sub does)
//   2. source.spm splits the rest into pieces
//   3. pieces map through vocab.json; unknown pieces become <unk>
//   4. </s> is appended; there is no BOS
// decode(ids): special tokens (</s>, <unk>, <pad>) are skipped, the remaining pieces are joined by
// target.spm, "▁" becomes a space, the result is stripped, then HF's clean_up_tokenization
// (" ." -> ".", " ," -> ",", " n't" -> "n't", ...; on by default in transformers v4.33) is applied.
//
// Basic usage:
//   auto tok = MarianTokenizer::load(dir);
//   MarianEncoding enc = tok->encode(">>en<< Guten Morgen!");   // enc.pieces, enc.ids
//   std::string text = tok->decode(generatedIds);
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

struct MarianEncoding {
    std::vector<std::string> pieces; // one per id, "</s>" last
    std::vector<int> ids;            // model ids, </s> last
};

class MarianTokenizer {
public:
    // Loads source.spm, target.spm and vocab.json from dir. Throws attnlens::Error naming the file
    // (missing, unreadable, not a SentencePiece model, vocab.json not an object of piece -> id,
    // duplicate ids, missing </s> or <unk>).
    static std::shared_ptr<const MarianTokenizer> load(const std::filesystem::path& dir);

    // Throws attnlens::Error if text is not valid UTF-8.
    MarianEncoding encode(std::string_view text) const;
    // Model ids -> text through target.spm (special tokens skipped). Unknown ids are skipped too.
    std::string decode(std::span<const int> ids) const;

    // The vocab.json piece of a model id ("" if the id has none).
    std::string idToPiece(int id) const;
    std::optional<int> pieceToId(std::string_view piece) const;
    bool isSpecial(int id) const { return id == m_eos || id == m_unk || (m_pad && id == *m_pad); }

    // Number of entries in vocab.json and the largest id + 1 (checked against the checkpoint).
    int vocabEntries() const { return static_cast<int>(m_pieceToId.size()); }
    int idLimit() const { return static_cast<int>(m_idToPiece.size()); }
    int eosId() const { return m_eos; }
    int unkId() const { return m_unk; }
    std::optional<int> padId() const { return m_pad; }
    const std::filesystem::path& dir() const { return m_dir; }

    // Public for make_shared; use load().
    MarianTokenizer() = default;
    ~MarianTokenizer();

private:
    struct Spm;
    std::filesystem::path m_dir;
    std::unique_ptr<Spm> m_source;
    std::unique_ptr<Spm> m_target;
    std::unordered_map<std::string, int> m_pieceToId;
    std::vector<std::string> m_idToPiece; // index = id; "" where vocab.json has no entry
    int m_eos = 0;
    int m_unk = 1;
    std::optional<int> m_pad;
};

// True if the bytes are well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
bool isValidUtf8(std::string_view text);

} // namespace attnlens
