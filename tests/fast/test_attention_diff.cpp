// Difference maps in core (analysis/attention_diff): axes matched by position or by token (longest common
// subsequence, unmatched tokens listed), A − B over the matched cells, max |Δ| and the Jensen–Shannon
// divergence of matched rows, all on hand-computed cases; the diverging colour map's ends and middle.

#include "core/analysis/attention_diff.h"
#include "core/export/colormap.h"
#include "core/util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace attnlens;

class TestAttentionDiff : public QObject {
    Q_OBJECT
private slots:
    void jensenShannonByHand() {
        Eigen::RowVectorXd p(2), q(2);
        p << 1, 0;
        q << 0, 1;
        QCOMPARE(jensenShannon(p, q), 1.0);
        QCOMPARE(jensenShannon(p, p), 0.0);
        p << 0.5, 0.5;
        q << 1, 0;
        // m = (0.75, 0.25): ½(½·log2(⅔) + ½·log2 2) + ½·log2(4/3)
        const double expected =
            0.5 * (0.5 * std::log2(0.5 / 0.75) + 0.5 * std::log2(2.0)) + 0.5 * std::log2(1 / 0.75);
        QVERIFY(std::abs(jensenShannon(p, q) - expected) < 1e-12);
        p << 2, 2; // normalised first
        QVERIFY(std::abs(jensenShannon(p, q) - expected) < 1e-12);
        p << 0, 0;
        QVERIFY(std::isnan(jensenShannon(p, q)));
    }

    void sameTokensMatchByPosition() {
        LabelledMatrix a{RowMatrix(2, 2), {"x", "y"}, {"x", "y"}};
        a.values << 0.5f, 0.5f, 1.0f, 0.0f;
        LabelledMatrix b = a;
        b.values << 0.5f, 0.5f, 0.0f, 1.0f;
        const AttentionDiff d = diffAttention(a, b);
        QCOMPARE(d.rows.how, AxisMatch::Position);
        QCOMPARE(d.diff(1, 0), 1.0f);
        QCOMPARE(d.diff(1, 1), -1.0f);
        QCOMPARE(d.maxAbs, 1.0);
        QCOMPARE(d.rowJs[0], 0.0);
        QCOMPARE(d.rowJs[1], 1.0);
        QCOMPARE(d.meanJs, 0.5);
        QCOMPARE(d.rowLabels, (std::vector<std::string>{"x", "y"}));
    }

    // "the house is small" against "the house is very small": rows and columns by token, "very" only in B.
    void differentTokensMatchByToken() {
        const std::vector<std::string> ta{"the", "house", "is", "small"},
            tb{"the", "house", "is", "very", "small"};
        LabelledMatrix a{RowMatrix::Identity(4, 4), ta, ta};
        LabelledMatrix b{RowMatrix::Identity(5, 5), tb, tb};
        const AttentionDiff d = diffAttention(a, b);
        QCOMPARE(d.rows.how, AxisMatch::Token);
        QCOMPARE(d.rows.pairs, (std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {2, 2}, {3, 4}}));
        QVERIFY(d.rows.onlyA.empty());
        QCOMPARE(d.rows.onlyB, std::vector<int>{3});
        QCOMPARE(d.columns.onlyB, std::vector<int>{3});
        QCOMPARE(d.maxAbs, 0.0); // "small" looks at "small" in both
        QCOMPARE(d.rowLabels.back(), std::string("small"));
        // Repeated tokens keep their order; a token only in A is listed.
        const AxisAlignment x = alignAxis({"a", "b", "a", "c"}, 4, {"a", "a", "c"}, 3);
        QCOMPARE(x.pairs, (std::vector<std::pair<int, int>>{{0, 0}, {2, 1}, {3, 2}}));
        QCOMPARE(x.onlyA, std::vector<int>{1});
    }

    void unlabelledAxesNeedTheSameSize() {
        LabelledMatrix a{RowMatrix::Constant(2, 3, 1.0f / 3), {}, {}};
        LabelledMatrix b{RowMatrix::Constant(2, 3, 1.0f / 3), {}, {}};
        QCOMPARE(diffAttention(a, b).maxAbs, 0.0);
        b.values = RowMatrix::Constant(3, 3, 1.0f / 3);
        QVERIFY_THROWS_EXCEPTION(Error, diffAttention(a, b));
        LabelledMatrix c{RowMatrix::Constant(2, 2, 0.5f), {"p", "q"}, {"p", "q"}};
        LabelledMatrix e{RowMatrix::Constant(2, 2, 0.5f), {"r", "s"}, {"r", "s"}};
        QVERIFY_THROWS_EXCEPTION(Error, diffAttention(c, e)); // no common token
        c.rows = {"p"};
        QVERIFY_THROWS_EXCEPTION(Error, diffAttention(c, e)); // labels do not fit the matrix
    }

    void divergingColourMap() {
        QCOMPARE(colorAt(ColorMap::Diverging, 0.0f), (Rgb{33, 102, 172}));
        const Rgb middle = colorAt(ColorMap::Diverging, 0.5f); // entry 128 of 256: white, a hair towards red
        QVERIFY(middle.r >= 245 && middle.g >= 244 && middle.b >= 244);
        QCOMPARE(colorAt(ColorMap::Diverging, 1.0f), (Rgb{178, 24, 43}));
        QCOMPARE(*parseColorMap("diverging"), ColorMap::Diverging);
        const auto maps = allColorMaps();
        QVERIFY(std::find(maps.begin(), maps.end(), ColorMap::Diverging) == maps.end());
    }
};

QTEST_GUILESS_MAIN(TestAttentionDiff)
#include "test_attention_diff.moc"
