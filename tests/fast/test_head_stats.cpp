// core/analysis/head_stats: every statistic on hand-made attention whose values are worked out in the
// comments, positions (pixels, a CLS without one), masked rows, alignment, the batch mean and bad input.

#include "core/analysis/head_stats.h"
#include "core/decode/trace_attention.h"
#include "core/util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace attnlens;

namespace {

bool near(double a, double b, double tol = 1e-5) {
    return std::abs(a - b) <= tol;
}

// [L=1, H=2, 3, 3]: head 0 is the identity (each token on itself), head 1 spreads evenly.
Tensor identityAndUniform() {
    const float t = 1.0f / 3.0f;
    return Tensor({1, 2, 3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, //
                                 t, t, t, t, t, t, t, t, t});
}

} // namespace

class TestHeadStats : public QObject {
    Q_OBJECT
private slots:
    void identityAndUniformHeads() {
        const HeadStats s = computeHeadStats(identityAndUniform());
        QCOMPARE(s.layers(), 1);
        QCOMPARE(s.heads(), 2);
        QCOMPARE(s.rows, 3);
        // Entropy: one key → 0; three equal keys → log 3 / log 3 = 1.
        QVERIFY(near(s.entropy(0, 0), 0.0));
        QVERIFY(near(s.entropy(0, 1), 1.0));
        // Distance |q − k|: identity 0; uniform rows: (0+1+2)/3, (1+0+1)/3, (2+1+0)/3 → mean 8/9.
        QVERIFY(near(s.distance(0, 0), 0.0));
        QVERIFY(near(s.distance(0, 1), 8.0 / 9.0));
        // Sink (key 0 by default): identity 1/3 (only row 0), uniform 1/3.
        QVERIFY(near(s.sink(0, 0), 1.0 / 3.0));
        QVERIFY(near(s.sink(0, 1), 1.0 / 3.0));
        // Diagonal 1 and 1/3; previous (rows 1, 2): 0 and 1/3.
        QVERIFY(near(s.diagonal(0, 0), 1.0));
        QVERIFY(near(s.diagonal(0, 1), 1.0 / 3.0));
        QVERIFY(near(s.previous(0, 0), 0.0));
        QVERIFY(near(s.previous(0, 1), 1.0 / 3.0));
        QVERIFY(std::isnan(s.alignment(0, 0))); // no alignment given
    }

    // A causal row sees fewer keys: entropy is normalised by its own unmasked keys.
    void causalRowsNormaliseByTheirKeys() {
        // Row 0: [1, 0, 0] → 0. Row 1: [.5, .5, 0] → log2/log2 = 1. Row 2: [.25, .25, .5] →
        // (−2·.25·ln .25 − .5·ln .5) / ln 3 = 1.0397208 / 1.0986123 = 0.9463946.
        const Tensor a({1, 1, 3, 3}, {1, 0, 0, 0.5f, 0.5f, 0, 0.25f, 0.25f, 0.5f});
        const HeadStats s = computeHeadStats(a);
        QVERIFY(near(s.entropy(0, 0), (0.0 + 1.0 + 0.9463946) / 3.0));
        // Previous-token share: rows 1, 2 → (.5 + .25) / 2.
        QVERIFY(near(s.previous(0, 0), 0.375));
        // Only rows 1 and 2 averaged.
        HeadStatsOptions o;
        o.queryRows = {1, 2};
        QVERIFY(near(computeHeadStats(a, o).entropy(0, 0), (1.0 + 0.9463946) / 2.0));
    }

    // Image-like: CLS (no position) then a 1 × 2 patch grid 16 px apart. CLS's own row has no distance; its
    // weight is left out of the others' and the rest renormalised.
    void pixelPositionsWithoutCls() {
        const Tensor a({1, 1, 3, 3},
                       {0.2f, 0.4f, 0.4f,   // CLS row: no distance
                        0.5f, 0.25f, 0.25f, // patch 0: keys 1, 2 weight .25 each → 16·.25/.5 = 8
                        0.0f, 0.0f, 1.0f}); // patch 1 on itself → 0
        HeadStatsOptions o;
        const float nan = std::nanf("");
        o.queryPositions = o.keyPositions = {{nan, nan}, {8, 8}, {24, 8}};
        const HeadStats s = computeHeadStats(a, o);
        QVERIFY(near(s.distance(0, 0), (8.0 + 0.0) / 2.0));
        // CLS as the sink: (.2 + .5 + 0) / 3.
        QVERIFY(near(s.sink(0, 0), 0.7 / 3.0));
    }

    // Cross-attention with an alignment: rows 0 and 2 known; row 0's argmax (key 1) is aligned, row 2's (key
    // 0) is not → 1/2. Row 1 unknown, skipped. No diagonal for cross-attention.
    void alignmentAgreement() {
        const Tensor a({1, 1, 3, 2}, {0.3f, 0.7f, 0.5f, 0.5f, 0.9f, 0.1f});
        HeadStatsOptions o;
        o.selfAttention = false;
        o.alignment = {{1}, {}, {1}};
        o.sinkKeys = {1};
        const HeadStats s = computeHeadStats(a, o);
        QCOMPARE(s.alignedRows, 2);
        QVERIFY(near(s.alignment(0, 0), 0.5));
        QVERIFY(std::isnan(s.diagonal(0, 0)) && std::isnan(s.previous(0, 0)));
        QVERIFY(near(s.sink(0, 0), (0.7 + 0.5 + 0.1) / 3.0));
    }

    // The batch mean weights each input by its rows: 3 rows of entropy 0 and 1 row of entropy 1 → 1/4.
    // A Pharaoh word alignment becomes per-target-piece source pieces: words are "▁" groups, specials stand
    // alone.
    void pieceAlignmentFromWords() {
        TranslationTrace t;
        t.sourceTokens = {"\u2581Das", "\u2581Haus", "chen", "</s>"};
        t.targetTokens = {"\u2581The", "\u2581little", "\u2581house", "</s>"};
        const auto a = pieceAlignment(t, "0-0 1-1  1-2\t2-3");
        QCOMPARE(a.size(), size_t(4));
        QCOMPARE(a[0], (std::vector<int>{0}));
        QCOMPARE(a[1], (std::vector<int>{1, 2}));
        QCOMPARE(a[2], (std::vector<int>{1, 2}));
        QCOMPARE(a[3], (std::vector<int>{3}));
        QVERIFY(pieceAlignment(t, "").front().empty());
        QVERIFY_THROWS_EXCEPTION(Error, pieceAlignment(t, "3-0"));
        QVERIFY_THROWS_EXCEPTION(Error, pieceAlignment(t, "0-"));
        QVERIFY_THROWS_EXCEPTION(Error, pieceAlignment(t, "-1-0"));
    }

    void batchMeanWeightsByRows() {
        HeadStatsBatch batch;
        batch.add(computeHeadStats(Tensor({1, 1, 3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1})));
        batch.add(computeHeadStats(Tensor({1, 1, 1, 2}, {0.5f, 0.5f}), [] {
            HeadStatsOptions o;
            o.selfAttention = false;
            return o;
        }()));
        const HeadStats m = batch.mean();
        QCOMPARE(batch.inputs(), 2);
        QCOMPARE(m.rows, 4);
        QVERIFY(near(m.entropy(0, 0), 0.25));
        QVERIFY(near(m.diagonal(0, 0), 1.0)); // the cross input has none: only the first counts
        QVERIFY_THROWS_EXCEPTION(Error, batch.add(computeHeadStats(Tensor({2, 1, 1, 1}, {1, 1}))));
    }

    // Where a long text parks attention besides the first token: on delimiters, and near the query.
    void delimiterAndLocalShares() {
        // 6 causal tokens; head 0 keeps .6 on key 0 and .4 on itself (row 0: all on key 0); head 1 puts
        // everything on the previous token (row 0 on itself).
        std::vector<float> v(2 * 36, 0.0f);
        for (int q = 0; q < 6; ++q) {
            v[size_t(q * 6)] += q == 0 ? 1.0f : 0.6f;
            if (q > 0) v[size_t(q * 6 + q)] += 0.4f;
            v[size_t(36 + q * 6 + std::max(0, q - 1))] = 1.0f;
        }
        const Tensor a({1, 2, 6, 6}, v);
        HeadStatsOptions o;
        o.delimiterKeys = {2, 4};
        o.localWindow = 2;
        const HeadStats s = computeHeadStats(a, o);
        // Delimiters 2 and 4: head 0 only rows 2 and 4 on themselves → (.4 + .4) / 6; head 1 rows 3 and 5
        // → 2 / 6.
        QVERIFY(near(s.delimiter(0, 0), 0.8 / 6.0));
        QVERIFY(near(s.delimiter(0, 1), 2.0 / 6.0));
        // Local (|q − k| ≤ 2): head 0: rows 0–2 keep all (key 0 within 2), rows 3–5 only their .4 → (3 +
        // 1.2) / 6; head 1: always 1.
        QVERIFY(near(s.local(0, 0), 4.2 / 6.0));
        QVERIFY(near(s.local(0, 1), 1.0));
        // Image positions have no local share; without special tokens there is no delimiter share.
        o.queryPositions = o.keyPositions = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}};
        QVERIFY(std::isnan(computeHeadStats(a, o).local(0, 0)));
        o = {};
        o.hasSinks = false;
        o.delimiterKeys = {2};
        QVERIFY(std::isnan(computeHeadStats(a, o).delimiter(0, 0)));
        o = {};
        o.delimiterKeys = {6};
        QVERIFY_THROWS_EXCEPTION(Error, computeHeadStats(a, o));
    }

    // A block made on demand (issue 40: a long text) is measured one head map at a time, reporting each, with
    // the same numbers as its captured tensor; cancel stops it between heads.
    void onDemandBlocksMeasuredHeadByHead() {
        const Tensor a = identityAndUniform();
        AttentionCapture captured, onDemand;
        for (AttentionCapture* c : {&captured, &onDemand})
            c->addAxis({"tokens", {"a", ",", "c"}, {}, {}, true, {1}});
        captured.addLayers(a, AttentionKind::DecoderSelf, 0, 0, "layer.");
        int made = 0;
        onDemand.blocks.push_back({"layer.0", AttentionKind::DecoderSelf, 0, Tensor(), 0, 0,
                                   [&](int h, float* out) {
                                       ++made;
                                       std::copy_n(a.sub({0, h}).data(), 9, out);
                                   },
                                   2});
        onDemand.check();
        std::vector<std::string> stages;
        Callbacks cb;
        cb.progress = [&](double, const std::string& stage) { stages.push_back(stage); };
        const HeadStats s = captureHeadStats(captured, AttentionKind::DecoderSelf);
        const HeadStats t = captureHeadStats(onDemand, AttentionKind::DecoderSelf, {}, &cb);
        QCOMPARE(made, 2);
        QCOMPARE(stages.back(), std::string("measuring heads: 2 of 2"));
        for (HeadStatistic st : kAllHeadStatistics)
            for (int h = 0; h < 2; ++h)
                QVERIFY((std::isnan(s.get(st)(0, h)) && std::isnan(t.get(st)(0, h))) ||
                        s.get(st)(0, h) == t.get(st)(0, h));
        cb.cancelled = [] { return true; };
        QVERIFY_THROWS_EXCEPTION(Cancelled, captureHeadStats(onDemand, AttentionKind::DecoderSelf, {}, &cb));
    }

    void namesRoundTrip() {
        for (HeadStatistic s : kAllHeadStatistics)
            QCOMPARE(parseHeadStatistic(headStatisticId(s)), s);
        QVERIFY(!parseHeadStatistic("nope"));
    }

    void badInputThrows() {
        QVERIFY_THROWS_EXCEPTION(Error, computeHeadStats(Tensor({3, 3}, std::vector<float>(9, 0.1f))));
        QVERIFY_THROWS_EXCEPTION(
            Error, computeHeadStats(Tensor({1, 1, 2, 3}, std::vector<float>(6, 0.3f)))); // self, not square
        HeadStatsOptions o;
        o.sinkKeys = {5};
        QVERIFY_THROWS_EXCEPTION(Error, computeHeadStats(identityAndUniform(), o));
        o = {};
        o.queryPositions = {{0, 0}};
        o.keyPositions = {{0, 0}, {1, 0}, {2, 0}};
        QVERIFY_THROWS_EXCEPTION(Error, computeHeadStats(identityAndUniform(), o));
        QVERIFY_THROWS_EXCEPTION(Error, HeadStatsBatch().mean());
    }
};

QTEST_GUILESS_MAIN(TestHeadStats)
#include "test_head_stats.moc"
