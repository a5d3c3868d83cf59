#pragma once
// AddedTokens: the tokens a Hugging Face tokenizer finds in the raw text before anything else runs (special
// tokens such as <s> or <|im_start|>, and added ones such as <think>), as the `tokenizers` library's
// AddedVocabulary does: the longest token at the leftmost place wins; `lstrip` / `rstrip` make a match take
// the white space (Unicode White_Space) on its left / right with it, so that space never reaches the model;
// `single_word` matches only where the token is no part of a longer word (no letter, number, mark or '_'
// touches it). Used by HfTokenizer (tokenizer.json's added_tokens) and SentencePieceTokenizer
// (tokenizer_config.json's added_tokens_decoder).
//
//   AddedTokens added({{"<s>", 1, true}});
//   added.split(text, [&](size_t b, size_t e) { encodeStretch(text.substr(b, e - b)); },
//               [&](const AddedToken& t) { ids.push_back(t.id); });

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct AddedToken {
    std::string content;
    int id = 0;
    bool special = false;
    bool lstrip = false, rstrip = false, singleWord = false;
};

class AddedTokens {
public:
    AddedTokens() = default;
    explicit AddedTokens(std::vector<AddedToken> tokens); // empty contents are dropped

    // Calls plain(begin, end) for every stretch of `text` between matches (empty ones skipped; whitespace a
    // match took excluded) and token(t) for every match, left to right. `text` must be valid UTF-8.
    void split(std::string_view text, const std::function<void(size_t, size_t)>& plain,
               const std::function<void(const AddedToken&)>& token) const;
    const std::vector<AddedToken>& tokens() const { return m_tokens; }

private:
    const AddedToken* longestAt(std::string_view text, size_t at) const;
    std::vector<AddedToken> m_tokens;
    std::vector<std::vector<int>> m_byFirstByte; // [256] indices into m_tokens, longest first
};

} // namespace attnlens
