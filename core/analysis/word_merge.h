#pragma once
// SentencePiece pieces → words, and attention matrices re-expressed over words or with tokens hidden.
// Shared by the translation workspace and exports. Convention (tensor.h): attention [query, key],
// rows are probabilities.
//
//   groupPieces        pieces → word index per piece ("▁" starts a word; specials stand alone)
//   mergeToWords       [Q, K] → [Wq, Wk]   summed over a word's key pieces, averaged over its query
//                                          pieces, so rows still sum to 1
//   dropTokens         [Q, K] → [Q', K']   rows/columns removed, rows renormalised over kept keys
//
// Thread-safety: pure functions.

#include "core/tensor/tensor.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// </s>, <s>, <pad>, <unk>, Marian language codes (">>de<<"), BERT's [CLS] [SEP] [PAD] [MASK] [UNK], GPT-2's
// <|endoftext|> and CLIP's <|startoftext|>.
bool isSpecialPiece(std::string_view piece);

struct WordGroups {
    std::vector<int> wordOf;        // [pieces] word index of each piece
    std::vector<int> firstPiece;    // [words] index of the word's first piece
    std::vector<std::string> words; // [words] display text: pieces joined, "▁" removed
    int count() const { return static_cast<int>(words.size()); }
};

// A piece starting with "▁" (U+2581) starts a new word, any other piece continues the previous word
// (the first piece always starts one); special pieces are words of their own and never absorb the
// following piece.
WordGroups groupPieces(std::span<const std::string> pieces);
// The same for BERT's WordPiece ("##" continues the previous word, shown without it) and GPT-2's byte-level
// BPE
// ("Ġ", a space, starts a word; the display text is the decoded text of the word's tokens: `texts`).
WordGroups groupWordPieces(std::span<const std::string> tokens);
WordGroups groupByteBpe(std::span<const std::string> tokens, std::span<const std::string> texts);
// CLIP's BPE: a piece ending in "</w>" ends its word (shown without it), the others continue into the next;
// special pieces are words of their own.
WordGroups groupEndOfWord(std::span<const std::string> tokens);

// attention [Q, K] → [queryGroups.count(), keyGroups.count()]: out(w, v) = mean over the query pieces
// q of word w of sum over the key pieces k of word v of a(q, k). Throws attnlens::Error when the
// groups do not cover the matrix (wordOf sizes differ from Q / K).
RowMatrix mergeToWords(const Eigen::Ref<const RowMatrix>& attention, const WordGroups& queryGroups,
                       const WordGroups& keyGroups);

// Keeps the rows with keepQuery[q] != 0 and the columns with keepKey[k] != 0. With renormalize, every
// kept row is divided by its kept sum (a row whose kept sum is 0 stays 0). Throws on size mismatch.
RowMatrix dropTokens(const Eigen::Ref<const RowMatrix>& attention, std::span<const char> keepQuery,
                     std::span<const char> keepKey, bool renormalize = true);

} // namespace attnlens
