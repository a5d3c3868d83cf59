// core/analysis/attention_maps: head fusion, query/key maps, grid layout and rollout on hand-made
// attention whose expected values are written out here.

#include "core/analysis/attention_maps.h"
#include "core/util/error.h"

#include <QTest>

using namespace attnlens;

namespace {

// [L=2, H=2, T=3, T=3] with rows summing to 1.
Tensor sampleAttention() {
    return Tensor({2, 2, 3, 3}, {
                                    // layer 0, head 0
                                    0.5f,
                                    0.3f,
                                    0.2f,
                                    0.1f,
                                    0.8f,
                                    0.1f,
                                    0.2f,
                                    0.2f,
                                    0.6f,
                                    // layer 0, head 1
                                    0.1f,
                                    0.1f,
                                    0.8f,
                                    0.3f,
                                    0.4f,
                                    0.3f,
                                    0.0f,
                                    0.5f,
                                    0.5f,
                                    // layer 1, head 0
                                    1.0f,
                                    0.0f,
                                    0.0f,
                                    0.2f,
                                    0.2f,
                                    0.6f,
                                    0.4f,
                                    0.4f,
                                    0.2f,
                                    // layer 1, head 1
                                    0.6f,
                                    0.2f,
                                    0.2f,
                                    0.0f,
                                    1.0f,
                                    0.0f,
                                    0.3f,
                                    0.3f,
                                    0.4f,
                                });
}

bool near(float a, float b, float tol = 1e-6f) {
    return std::abs(a - b) <= tol;
}

} // namespace

class TestAttentionMaps : public QObject {
    Q_OBJECT
private slots:
    // The one selection rule of every page (issue 37): layers clamped, a head outside the model = all heads.
    void selectionRule() {
        QCOMPARE(clampLayer(5, 3), 2);
        QCOMPARE(clampLayer(-1, 3), 0);
        QCOMPARE(clampLayer(2, 0), 0); // no layers: 0
        QCOMPARE(clampHead(3, 4), 3);
        QCOMPARE(clampHead(4, 4), -1); // not "the last head"
        QCOMPARE(clampHead(-7, 4), -1);
        QCOMPARE(clampHead(0, 0), -1);
    }

    // The selection every document holds applies that rule and says whether it changed.
    void selectionValue() {
        AttentionSelection s;
        QVERIFY(s.setLayer(7, 4));
        QCOMPARE(s.layer, 3);
        QVERIFY(!s.setLayer(9, 4)); // still the last layer: no change
        QVERIFY(s.setHead(2, 4));
        QVERIFY(s.setHead(4, 4)); // outside: all heads
        QCOMPARE(s.heads.head, -1);
        QVERIFY(!s.setHead(-3, 4));
        QVERIFY(s.setFusion(HeadFusion::Max));
        QVERIFY(!s.setFusion(HeadFusion::Max));
        QCOMPARE(s, (AttentionSelection{3, {-1, HeadFusion::Max}}));
    }

    void fusion() {
        const Tensor a = sampleAttention();
        const RowMatrix mean = fuseHeads(a.sub({0}), HeadFusion::Mean);
        QVERIFY(near(mean(0, 2), 0.5f));
        QVERIFY(near(mean(2, 1), 0.35f));
        const RowMatrix mx = fuseHeads(a.sub({0}), HeadFusion::Max);
        QVERIFY(near(mx(0, 0), 0.5f) && near(mx(0, 2), 0.8f));
        const RowMatrix mn = fuseHeads(a.sub({0}), HeadFusion::Min);
        QVERIFY(near(mn(2, 0), 0.0f) && near(mn(1, 1), 0.4f));
        QVERIFY(near(layerAttention(a, 1, {1, HeadFusion::Mean})(1, 1), 1.0f));
        QVERIFY(near(layerAttention(a, 1, {-1, HeadFusion::Mean})(0, 0), 0.8f));
        QVERIFY_THROWS_EXCEPTION(Error, layerAttention(a, 2, {}));
        QVERIFY_THROWS_EXCEPTION(Error, layerAttention(a, 0, {2, HeadFusion::Mean}));
        QCOMPARE(parseHeadFusion("max").value(), HeadFusion::Max);
        QVERIFY(!parseHeadFusion("median"));
    }

    void queryAndKeyMaps() {
        const RowMatrix a = sampleAttention().slice2d({0, 0}); // [3, 3]
        const int one[] = {1};
        const Eigen::VectorXf q = queryMap(a, one);
        QVERIFY(near(q(0), 0.1f) && near(q(1), 0.8f) && near(q(2), 0.1f));
        const int two[] = {0, 2};
        const Eigen::VectorXf qs = queryMap(a, two, TokenReduce::Sum);
        QVERIFY(near(qs(0), 0.7f) && near(qs(2), 0.8f));
        const Eigen::VectorXf qm = queryMap(a, two, TokenReduce::Mean);
        QVERIFY(near(qm(0), 0.35f));
        const Eigen::VectorXf k = keyMap(a, one); // column 1: who attends to token 1
        QVERIFY(near(k(0), 0.3f) && near(k(1), 0.8f) && near(k(2), 0.2f));
        const Eigen::VectorXf ks = keyMap(a, two, TokenReduce::Sum);
        QVERIFY(near(ks(1), 0.2f));
        const int bad[] = {3};
        QVERIFY_THROWS_EXCEPTION(Error, queryMap(a, bad));
        QVERIFY_THROWS_EXCEPTION(Error, keyMap(a, std::span<const int>{}));
    }

    void grid() {
        Eigen::VectorXf v(7);
        v << 9, 0, 1, 2, 3, 4, 5; // CLS then a 2×3 grid
        const RowMatrix g = tokensToGrid(v, 2, 3);
        QCOMPARE(g(0, 0), 0.0f);
        QCOMPARE(g(1, 2), 5.0f);
        QCOMPARE(g(1, 0), 3.0f);
        QVERIFY_THROWS_EXCEPTION(Error, tokensToGrid(v, 3, 3));
    }

    void rolloutFormula() {
        const Tensor a = sampleAttention();
        // Layer 0 mean: [[.3,.2,.5],[.2,.6,.2],[.1,.35,.55]]; +I, rows / 2.
        RowMatrix a0(3, 3), a1(3, 3);
        a0 << 0.65f, 0.1f, 0.25f, 0.1f, 0.8f, 0.1f, 0.05f, 0.175f, 0.775f;
        // Layer 1 mean: [[.8,.1,.1],[.1,.6,.3],[.35,.35,.3]]; +I, rows / 2.
        a1 << 0.9f, 0.05f, 0.05f, 0.05f, 0.8f, 0.15f, 0.175f, 0.175f, 0.65f;
        const RowMatrix expected = a1 * a0;
        const RowMatrix r = attentionRollout(a);
        QVERIFY((r - expected).cwiseAbs().maxCoeff() < 1e-6f);
        QVERIFY((r.rowwise().sum().array() - 1.0f).abs().maxCoeff() < 1e-6f);
        // One layer only.
        RolloutOptions first;
        first.lastLayer = 0;
        QVERIFY((attentionRollout(a, first) - a0).cwiseAbs().maxCoeff() < 1e-6f);
        // Discard 1/3 of the 6 non-CLS-key weights of each layer: the 2 smallest go to 0, then +I,
        // renormalise. Layer 0 mean, keys 1..2: [.2,.5],[.6,.2],[.35,.55] → drop (0,1)=.2 and (1,2)=.2.
        RowMatrix d0(3, 3);
        d0 << 1.3f, 0.0f, 0.5f, 0.2f, 1.6f, 0.0f, 0.1f, 0.35f, 1.55f;
        d0.array().colwise() /= d0.rowwise().sum().array();
        RolloutOptions discard;
        discard.discardRatio = 1.0f / 3.0f;
        discard.lastLayer = 0;
        QVERIFY((attentionRollout(a, discard) - d0).cwiseAbs().maxCoeff() < 1e-6f);
        RolloutOptions bad;
        bad.firstLayer = 1;
        bad.lastLayer = 0;
        QVERIFY_THROWS_EXCEPTION(Error, attentionRollout(a, bad));
        bad = {};
        bad.discardRatio = 1.0f;
        QVERIFY_THROWS_EXCEPTION(Error, attentionRollout(a, bad));
        QVERIFY_THROWS_EXCEPTION(Error, attentionRollout(Tensor({2, 3, 3})));
    }
};

QTEST_GUILESS_MAIN(TestAttentionMaps)
#include "test_attention_maps.moc"
