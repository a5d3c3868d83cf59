#include "core/analysis/word_merge.h"

#include "core/util/error.h"

namespace attnlens {

namespace {
constexpr std::string_view kWordStart = "\xE2\x96\x81"; // U+2581 "▁"
}

bool isSpecialPiece(std::string_view piece) {
    if (piece == "</s>" || piece == "<s>" || piece == "<pad>" || piece == "<unk>") return true;
    if (piece == "[CLS]" || piece == "[SEP]" || piece == "[PAD]" || piece == "[MASK]" || piece == "[UNK]" ||
        piece == "<|endoftext|>" || piece == "<|startoftext|>")
        return true;
    return piece.size() > 4 && piece.starts_with(">>") && piece.ends_with("<<");
}

WordGroups groupPieces(std::span<const std::string> pieces) {
    WordGroups g;
    g.wordOf.reserve(pieces.size());
    bool previousSpecial = true;
    for (size_t i = 0; i < pieces.size(); ++i) {
        const std::string& p = pieces[i];
        const bool special = isSpecialPiece(p);
        const bool starts = special || previousSpecial || p.starts_with(kWordStart);
        if (starts) {
            g.firstPiece.push_back(static_cast<int>(i));
            g.words.emplace_back();
        }
        std::string_view text = p;
        if (text.starts_with(kWordStart)) text.remove_prefix(kWordStart.size());
        g.words.back() += text;
        g.wordOf.push_back(g.count() - 1);
        previousSpecial = special;
    }
    return g;
}

WordGroups groupWordPieces(std::span<const std::string> tokens) {
    WordGroups g;
    bool previousSpecial = true;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string& t = tokens[i];
        const bool special = isSpecialPiece(t);
        const bool continues = !special && !previousSpecial && t.starts_with("##");
        if (!continues) {
            g.firstPiece.push_back(static_cast<int>(i));
            g.words.emplace_back();
        }
        g.words.back() += continues ? t.substr(2) : t;
        g.wordOf.push_back(g.count() - 1);
        previousSpecial = special;
    }
    return g;
}

WordGroups groupByteBpe(std::span<const std::string> tokens, std::span<const std::string> texts) {
    WordGroups g;
    bool previousSpecial = true;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string& t = tokens[i];
        const bool special = isSpecialPiece(t);
        const bool starts = special || previousSpecial || t.starts_with("\xC4\xA0"); // "Ġ": a leading space
        if (starts) {
            g.firstPiece.push_back(static_cast<int>(i));
            g.words.emplace_back();
        }
        g.words.back() += i < texts.size() ? texts[i] : t;
        g.wordOf.push_back(g.count() - 1);
        previousSpecial = special;
    }
    return g;
}

WordGroups groupEndOfWord(std::span<const std::string> tokens) {
    WordGroups g;
    bool open = false; // the last word still takes pieces
    for (size_t i = 0; i < tokens.size(); ++i) {
        std::string_view t = tokens[i];
        const bool special = isSpecialPiece(t);
        if (special || !open) {
            g.firstPiece.push_back(static_cast<int>(i));
            g.words.emplace_back();
        }
        const bool ends = special || t.ends_with("</w>");
        if (!special && ends) t.remove_suffix(4);
        g.words.back() += t;
        g.wordOf.push_back(g.count() - 1);
        open = !ends;
    }
    return g;
}

RowMatrix mergeToWords(const Eigen::Ref<const RowMatrix>& a, const WordGroups& qg, const WordGroups& kg) {
    if (static_cast<Eigen::Index>(qg.wordOf.size()) != a.rows() ||
        static_cast<Eigen::Index>(kg.wordOf.size()) != a.cols())
        throw Error("mergeToWords: attention is " + std::to_string(a.rows()) + "x" +
                    std::to_string(a.cols()) + " but the word groups cover " +
                    std::to_string(qg.wordOf.size()) + "x" + std::to_string(kg.wordOf.size()) + " pieces");
    RowMatrix keySummed = RowMatrix::Zero(a.rows(), kg.count()); // [Q, Wk]
    for (Eigen::Index k = 0; k < a.cols(); ++k)
        keySummed.col(kg.wordOf[static_cast<size_t>(k)]) += a.col(k);
    RowMatrix out = RowMatrix::Zero(qg.count(), kg.count()); // [Wq, Wk]
    std::vector<int> counts(static_cast<size_t>(qg.count()), 0);
    for (Eigen::Index q = 0; q < a.rows(); ++q) {
        const int w = qg.wordOf[static_cast<size_t>(q)];
        out.row(w) += keySummed.row(q);
        ++counts[static_cast<size_t>(w)];
    }
    for (int w = 0; w < qg.count(); ++w)
        out.row(w) /= static_cast<float>(counts[static_cast<size_t>(w)]);
    return out;
}

RowMatrix dropTokens(const Eigen::Ref<const RowMatrix>& a, std::span<const char> keepQuery,
                     std::span<const char> keepKey, bool renormalize) {
    if (static_cast<Eigen::Index>(keepQuery.size()) != a.rows() ||
        static_cast<Eigen::Index>(keepKey.size()) != a.cols())
        throw Error("dropTokens: attention is " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
                    " but the keep flags cover " + std::to_string(keepQuery.size()) + "x" +
                    std::to_string(keepKey.size()));
    std::vector<Eigen::Index> rows, cols;
    for (size_t i = 0; i < keepQuery.size(); ++i)
        if (keepQuery[i]) rows.push_back(static_cast<Eigen::Index>(i));
    for (size_t i = 0; i < keepKey.size(); ++i)
        if (keepKey[i]) cols.push_back(static_cast<Eigen::Index>(i));
    RowMatrix out(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(cols.size())); // [Q', K']
    for (size_t r = 0; r < rows.size(); ++r) {
        for (size_t c = 0; c < cols.size(); ++c)
            out(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = a(rows[r], cols[c]);
        if (renormalize) {
            const float sum = out.row(static_cast<Eigen::Index>(r)).sum();
            if (sum > 0.0f) out.row(static_cast<Eigen::Index>(r)) /= sum;
        }
    }
    return out;
}

} // namespace attnlens
