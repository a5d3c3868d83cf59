// core/analysis/attention_flow: max-flow values checked against closed forms. One layer: the flow is the
// single edge Â(i, j). Two layers: every path i → k → j uses its own two edges, so the flow is Σ_k
// min(Â₂(i,k), Â₁(k,j)). Three layers: paths share edges; a case worked out by hand.

#include "core/analysis/attention_flow.h"
#include "core/util/error.h"

#include <QTest>

#include <cmath>

using namespace attnlens;

namespace {

bool near(double a, double b, double tol = 1e-5) {
    return std::abs(a - b) <= tol;
}

// Â = rownorm(A + I): for rows that sum to 1, (A + I) / 2.
RowMatrix withResidual(const RowMatrix& a) {
    return (a + RowMatrix::Identity(a.rows(), a.cols())) / 2.0f;
}

} // namespace

class TestAttentionFlow : public QObject {
    Q_OBJECT
private slots:
    void oneLayerIsTheEdge() {
        const Tensor a({1, 1, 3, 3}, {0.2f, 0.5f, 0.3f, 0.1f, 0.1f, 0.8f, 0.6f, 0.2f, 0.2f});
        const RowMatrix hat = withResidual(a.slice2d({0, 0}));
        for (int q = 0; q < 3; ++q) {
            const std::vector<float> f = attentionFlow(a, q);
            for (int j = 0; j < 3; ++j)
                QVERIFY(near(f[j], hat(q, j)));
        }
    }

    void twoLayersSumOfBottlenecks() {
        const Tensor a({2, 2, 3, 3}, {
                                         // layer 0: head 0, head 1 (fused: mean)
                                         0.6f,
                                         0.2f,
                                         0.2f,
                                         0.3f,
                                         0.3f,
                                         0.4f,
                                         0.1f,
                                         0.1f,
                                         0.8f, //
                                         0.2f,
                                         0.6f,
                                         0.2f,
                                         0.5f,
                                         0.1f,
                                         0.4f,
                                         0.3f,
                                         0.3f,
                                         0.4f, //
                                               // layer 1
                                         0.1f,
                                         0.8f,
                                         0.1f,
                                         0.3f,
                                         0.4f,
                                         0.3f,
                                         0.5f,
                                         0.25f,
                                         0.25f, //
                                         0.3f,
                                         0.4f,
                                         0.3f,
                                         0.7f,
                                         0.2f,
                                         0.1f,
                                         0.5f,
                                         0.25f,
                                         0.25f,
                                     });
        const RowMatrix a1 = withResidual((a.slice2d({0, 0}) + a.slice2d({0, 1})) / 2.0f);
        const RowMatrix a2 = withResidual((a.slice2d({1, 0}) + a.slice2d({1, 1})) / 2.0f);
        for (int q = 0; q < 3; ++q) {
            const std::vector<float> f = attentionFlow(a, q);
            for (int j = 0; j < 3; ++j) {
                double expected = 0;
                for (int k = 0; k < 3; ++k)
                    expected += std::min(a2(q, k), a1(k, j));
                QVERIFY2(near(f[j], expected),
                         qPrintable(QString("%1 → %2: %3 vs %4").arg(q).arg(j).arg(f[j]).arg(expected)));
            }
        }
        // Only the top layer: the one-layer case.
        FlowOptions top;
        top.firstLayer = 1;
        QVERIFY(near(attentionFlow(a, 0, top)[1], a2(0, 1)));
    }

    // Three layers of two tokens whose paths share edges. Layer 0: A = [[1, 0], [1, 0]] → Â = [[1, 0], [.5,
    // .5]]; layers 1, 2: A = [[0, 1], [1, 0]] → Â = [[.5, .5], [.5, .5]]. From either top token 1 unit leaves
    // (.5 + .5). To input token 0: everything can go through (1, 0), whose edge to (0, 0) holds 1 → 1
    // (rollout would give .75). To input token 1: only the edge (1, 1) → (0, 1) of capacity .5 gets there →
    // .5.
    void sharedEdgesLimitTheFlow() {
        const Tensor a({3, 1, 2, 2}, {
                                         1.0f, 0.0f, 1.0f, 0.0f, // layer 0
                                         0.0f, 1.0f, 1.0f, 0.0f, // layer 1
                                         0.0f, 1.0f, 1.0f, 0.0f, // layer 2
                                     });
        for (int q = 0; q < 2; ++q) {
            const std::vector<float> f = attentionFlow(a, q);
            QVERIFY2(near(f[0], 1.0), qPrintable(QString::number(f[0])));
            QVERIFY2(near(f[1], 0.5), qPrintable(QString::number(f[1])));
        }
    }

    void costAndErrors() {
        QCOMPARE(attentionFlowCost(12, 197), int64_t(12) * 197 * 197 * 197);
        const Tensor a({1, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f});
        QVERIFY_THROWS_EXCEPTION(Error, attentionFlow(a, 2));
        FlowOptions bad;
        bad.lastLayer = 3;
        QVERIFY_THROWS_EXCEPTION(Error, attentionFlow(a, 0, bad));
        QVERIFY_THROWS_EXCEPTION(Error, attentionFlow(Tensor({1, 1, 2, 3}, std::vector<float>(6, 0.3f)), 0));
        Callbacks cancel;
        cancel.cancelled = [] { return true; };
        QVERIFY_THROWS_EXCEPTION(Cancelled, attentionFlow(a, 0, {}, cancel));
    }
};

QTEST_GUILESS_MAIN(TestAttentionFlow)
#include "test_attention_flow.moc"
