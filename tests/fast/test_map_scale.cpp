// core/analysis/map_scale (issue 40): the sink-aware scales on a hand-made map — the first column as a sink,
// renormalisation without it, the log range and the clip percentile worked out in the comments — and the
// colour positions of core/export/colormap's log scale.

#include "core/analysis/map_scale.h"
#include "core/analysis/top_links.h"
#include "core/util/error.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace attnlens;

namespace {

// 3 causal rows, most of each on the first token: [1 0 0; .9 .1 0; .8 .15 .05].
RowMatrix sinkMap() {
    RowMatrix m(3, 3);
    m << 1.0f, 0.0f, 0.0f, 0.9f, 0.1f, 0.0f, 0.8f, 0.15f, 0.05f;
    return m;
}

bool near(double a, double b, double tol = 1e-6) {
    return std::abs(a - b) <= tol;
}

} // namespace

class TestMapScale : public QObject {
    Q_OBJECT
private slots:
    void linearKeepsTheWeights() {
        const ScaledMap s = scaleMap(sinkMap(), {});
        QCOMPARE(s.values, sinkMap());
        QCOMPARE(s.keep.size(), Eigen::Index(0));
        QVERIFY(s.lo == 0.0f && s.hi == 1.0f && s.colorScale == ColorScale::Linear);
    }

    void ignoringTheSinkRenormalisesTheRest() {
        const ScaledMap s = scaleMap(sinkMap(), {MapScaleKind::Linear, 99.0f, 1});
        // Row 0 had nothing else: all 0. Row 1: .1 / .1 = 1. Row 2: .15 / .2 = .75, .05 / .2 = .25.
        RowMatrix expected(3, 3);
        expected << 0, 0, 0, 0, 1, 0, 0, 0.75f, 0.25f;
        QVERIFY((s.values - expected).cwiseAbs().maxCoeff() < 1e-6f);
        QCOMPARE(s.keep.col(0).sum(), 0.0f);
        QCOMPARE(s.keep.rightCols(2).sum(), 6.0f);
    }

    void logRangeSpansThePositiveWeights() {
        const ScaledMap s = scaleMap(sinkMap(), {MapScaleKind::Log, 99.0f, 0});
        QVERIFY(s.colorScale == ColorScale::Log);
        QVERIFY(near(s.lo, 0.05) && near(s.hi, 1.0));
        // log position of .15 between .05 and 1: ln 3 / ln 20 = 0.366725.
        QVERIFY(near(scalePosition(0.15f, s.lo, s.hi, s.colorScale), std::log(3.0) / std::log(20.0), 1e-5));
        QCOMPARE(scalePosition(0.0f, s.lo, s.hi, s.colorScale), 0.0f); // zeros at the low end
        QVERIFY(
            near(scaleValueAt(0.5f, s.lo, s.hi, s.colorScale), std::sqrt(0.05), 1e-6)); // the bar's middle
        QVERIFY(near(scalePosition(0.5f, 0.0f, 1.0f, ColorScale::Linear), 0.5));
    }

    void clipEndsAtThePercentile() {
        // Positive weights, sorted: .05 .1 .15 .8 .9 1 — nearest rank: 50 % → the 3rd (.15), 99 % → the 6th.
        QVERIFY(near(scaleMap(sinkMap(), {MapScaleKind::Clip, 50.0f, 0}).hi, 0.15));
        QVERIFY(near(scaleMap(sinkMap(), {MapScaleKind::Clip, 99.0f, 0}).hi, 1.0));
        // Without the sink column: .25 .75 1 → 50 % is .75.
        QVERIFY(near(scaleMap(sinkMap(), {MapScaleKind::Clip, 50.0f, 1}).hi, 0.75));
    }

    // Shares by hand: the column sums 2.7, .25, .05 of 3 → .9, .0833, .0167.
    void sinkColumnsByHand() {
        const std::vector<KeyShare> sinks = sinkColumns(sinkMap());
        QCOMPARE(sinks.size(), size_t(1));
        QCOMPARE(sinks[0].column, 0);
        QVERIFY(near(sinks[0].share, 0.9, 1e-6));
        const std::vector<KeyShare> two = sinkColumns(sinkMap(), 0.05f);
        QCOMPARE(two.size(), size_t(2));
        QCOMPARE(two[1].column, 1);
        QVERIFY(near(two[1].share, 0.25 / 3, 1e-6));
        QCOMPARE(sinkColumns(sinkMap(), 0.0f, 1).size(), size_t(1)); // the most kept, largest first
        QCOMPARE(sinkColumns(sinkMap(), 0.0f).size(), size_t(3));
        // Named on the weights as they came, also when the sink is left out of the colours.
        const ScaledMap ignored = scaleMap(sinkMap(), {MapScaleKind::Log, 99.0f, 1});
        QCOMPARE(ignored.sinks.size(), size_t(1));
        QVERIFY(near(ignored.sinks[0].share, 0.9, 1e-6));
        RowMatrix uniform = RowMatrix::Constant(8, 8, 0.125f); // no key above 20 %
        QVERIFY(sinkColumns(uniform).empty());
        uniform(3, 3) = std::numeric_limits<float>::quiet_NaN(); // never a wrong sink
        QVERIFY(sinkColumns(uniform, 0.0f).empty());
        QVERIFY(sinkColumns(RowMatrix()).empty());
    }

    // The Lines views' links (core/analysis/top_links), by hand: per query the weights ≥ the threshold,
    // strongest first, ties by key, cut at `most`.
    void topLinksByHand() {
        RowMatrix m(3, 4);
        m << 0.1f, 0.6f, 0.2f, 0.1f,    //
            0.25f, 0.25f, 0.25f, 0.25f, //
            0.01f, std::numeric_limits<float>::quiet_NaN(), 0.005f, 0.015f;
        const AttentionLinks all = topLinks(m, 0, 0.1f);
        QCOMPARE(all.queries(), 3);
        QCOMPARE(all.start, (std::vector<int>{0, 4, 8, 8})); // the last row: nothing ≥ .1, NaN never
        QCOMPARE(all.key, (std::vector<int>{1, 2, 0, 3, 0, 1, 2, 3}));
        QCOMPARE(all.weight, (std::vector<float>{0.6f, 0.2f, 0.1f, 0.1f, 0.25f, 0.25f, 0.25f, 0.25f}));
        QCOMPARE(all.end(0, 2), 2);
        QCOMPARE(all.end(0, 0), 4);
        QCOMPARE(all.end(2, 3), 8);
        const AttentionLinks two = topLinks(m, 2, 0.15f);
        QCOMPARE(two.start, (std::vector<int>{0, 2, 4, 4}));
        QCOMPARE(two.key, (std::vector<int>{1, 2, 0, 1}));
        QCOMPARE(topLinks(RowMatrix(), 3, 0.0f).queries(), 0);
    }

    void namesAndBadInput() {
        for (MapScaleKind k : {MapScaleKind::Linear, MapScaleKind::Log, MapScaleKind::Clip})
            QCOMPARE(parseMapScale(mapScaleId(k)), k);
        QVERIFY(!parseMapScale("cubic"));
        QVERIFY_THROWS_EXCEPTION(Error, scaleMap(sinkMap(), {MapScaleKind::Clip, 0.0f, 0}));
        QVERIFY_THROWS_EXCEPTION(Error, scaleMap(sinkMap(), {MapScaleKind::Clip, 101.0f, 0}));
        QVERIFY_THROWS_EXCEPTION(Error, scaleMap(sinkMap(), {MapScaleKind::Linear, 99.0f, -1}));
        QCOMPARE(scaleMap(RowMatrix(), {MapScaleKind::Log, 99.0f, 1}).values.size(), Eigen::Index(0));
    }
};

QTEST_GUILESS_MAIN(TestMapScale)
#include "test_map_scale.moc"
