// core/analysis/word_merge: SentencePiece pieces grouped into words, attention merged to words
// (sum over key pieces, mean over query pieces) and special tokens hidden with renormalised rows,
// on hand-made matrices whose expected values are written out here.

#include "core/analysis/word_merge.h"
#include "core/util/error.h"

#include <QTest>

using namespace attnlens;

namespace {
const std::string W = "\xE2\x96\x81"; // ▁
bool near(float a, float b, float tol = 1e-6f) {
    return std::abs(a - b) <= tol;
}
} // namespace

class TestWordMerge : public QObject {
    Q_OBJECT
private slots:
    void specials() {
        QVERIFY(isSpecialPiece("</s>"));
        QVERIFY(isSpecialPiece("<pad>"));
        QVERIFY(isSpecialPiece("<unk>"));
        QVERIFY(isSpecialPiece(">>en<<"));
        QVERIFY(!isSpecialPiece(">><<"));
        QVERIFY(!isSpecialPiece(W + "Hund"));
        QVERIFY(!isSpecialPiece("s"));
    }

    void textModelGroups() {
        // BERT: "##" continues the word before, specials stand alone.
        const std::vector<std::string> wp = {"[CLS]", "un",     "##aff", "##able",
                                             "cat",   "[MASK]", "##s",   "[SEP]"};
        const WordGroups b = groupWordPieces(wp);
        QCOMPARE(b.wordOf, (std::vector<int>{0, 1, 1, 1, 2, 3, 4, 5}));
        QCOMPARE(b.words[1], std::string("unaffable"));
        QCOMPARE(b.words[4], std::string("##s")); // a piece after a special token starts a word of its own
        // GPT-2: "Ġ" (a space) starts a word; the words are the decoded texts.
        const std::vector<std::string> bpe = {"H", "ell", "o", "Ġworld", "!", "<|endoftext|>", "Ġthe"};
        const std::vector<std::string> texts = {"H", "ell", "o", " world", "!", "<|endoftext|>", " the"};
        const WordGroups g = groupByteBpe(bpe, texts);
        QCOMPARE(g.wordOf, (std::vector<int>{0, 0, 0, 1, 1, 2, 3}));
        QCOMPARE(g.words[0], std::string("Hello"));
        QCOMPARE(g.words[1], std::string(" world!"));
        QVERIFY(isSpecialPiece("[CLS]") && isSpecialPiece("<|endoftext|>") && !isSpecialPiece("##s"));
        // CLIP: "</w>" ends a word (and is not shown); <|startoftext|> and the padding stand alone.
        const std::vector<std::string> clip = {"<|startoftext|>", "sne",           "aker</w>",     "a</w>",
                                               "bag</w>",         "<|endoftext|>", "<|endoftext|>"};
        const WordGroups c = groupEndOfWord(clip);
        QCOMPARE(c.wordOf, (std::vector<int>{0, 1, 1, 2, 3, 4, 5}));
        QCOMPARE(c.words[1], std::string("sneaker"));
        QCOMPARE(c.words[3], std::string("bag"));
        QCOMPARE(c.firstPiece, (std::vector<int>{0, 1, 3, 4, 5, 6}));
        QVERIFY(isSpecialPiece("<|startoftext|>"));
    }

    void groups() {
        // "▁Wie ▁geht ▁es ▁dir ?" with "dir" split as "▁d" "ir", then </s>.
        const std::vector<std::string> pieces = {W + "Wie", W + "geht", W + "d", "ir", "?", "</s>"};
        const WordGroups g = groupPieces(pieces);
        QCOMPARE(g.count(), 4);
        QCOMPARE(g.wordOf, (std::vector<int>{0, 1, 2, 2, 2, 3}));
        QCOMPARE(g.firstPiece, (std::vector<int>{0, 1, 2, 5}));
        QCOMPARE(g.words[2], std::string("dir?"));
        QCOMPARE(g.words[3], std::string("</s>"));
        // A piece after a special starts a word even without ▁; a leading piece without ▁ too.
        const WordGroups h = groupPieces(std::vector<std::string>{"ab", "c", "<pad>", "x", W + "y"});
        QCOMPARE(h.wordOf, (std::vector<int>{0, 0, 1, 2, 3}));
    }

    void mergeSumsKeysAveragesQueries() {
        // Query pieces [a, b | c], key pieces [x | y, z]; rows sum to 1.
        RowMatrix a(3, 3);
        a << 0.2f, 0.3f, 0.5f, //
            0.6f, 0.1f, 0.3f,  //
            0.0f, 0.5f, 0.5f;
        const WordGroups qg{{0, 0, 1}, {0, 2}, {"ab", "c"}};
        const WordGroups kg{{0, 1, 1}, {0, 1}, {"x", "yz"}};
        const RowMatrix m = mergeToWords(a, qg, kg);
        QCOMPARE(m.rows(), Eigen::Index(2));
        QCOMPARE(m.cols(), Eigen::Index(2));
        // word "ab": mean of rows a, b with keys y+z summed: ((0.2, 0.8) + (0.6, 0.4)) / 2.
        QVERIFY(near(m(0, 0), 0.4f));
        QVERIFY(near(m(0, 1), 0.6f));
        QVERIFY(near(m(1, 0), 0.0f));
        QVERIFY(near(m(1, 1), 1.0f));
        for (int r = 0; r < 2; ++r)
            QVERIFY(near(m.row(r).sum(), 1.0f));
        QVERIFY_THROWS_EXCEPTION(Error, mergeToWords(a, qg, WordGroups{{0, 1}, {0, 1}, {"x", "y"}}));
    }

    void dropRenormalises() {
        RowMatrix a(2, 3);
        a << 0.2f, 0.3f, 0.5f, //
            0.0f, 0.0f, 1.0f;
        const std::vector<char> keepQ = {1, 1}, keepK = {1, 1, 0};
        const RowMatrix d = dropTokens(a, keepQ, keepK);
        QCOMPARE(d.rows(), Eigen::Index(2));
        QCOMPARE(d.cols(), Eigen::Index(2));
        QVERIFY(near(d(0, 0), 0.4f));
        QVERIFY(near(d(0, 1), 0.6f));
        QVERIFY(near(d(1, 0), 0.0f)); // nothing left: stays 0 instead of NaN
        QVERIFY(near(d(1, 1), 0.0f));
        const RowMatrix raw = dropTokens(a, std::vector<char>{0, 1}, std::vector<char>{1, 0, 1}, false);
        QCOMPARE(raw.rows(), Eigen::Index(1));
        QVERIFY(near(raw(0, 1), 1.0f));
        QVERIFY_THROWS_EXCEPTION(Error, dropTokens(a, keepQ, std::vector<char>{1}));
    }
};

QTEST_GUILESS_MAIN(TestWordMerge)
#include "test_word_merge.moc"
