// Playground attention vs goldens from an independent PyTorch implementation
// (tools/golden/attention_golden.py), plus the invariants every attention matrix must satisfy.

#include "core/io/json_file.h"
#include "core/layers/multi_head_attention.h"
#include "core/ops/attention.h"
#include "core/util/error.h"

#include <QTest>

#include <cmath>

using namespace attnlens;

namespace {

Tensor matrixFrom(const Json& j) {
    Tensor t({static_cast<int64_t>(j.size()), static_cast<int64_t>(j[0].size())});
    for (size_t r = 0; r < j.size(); ++r)
        for (size_t c = 0; c < j[r].size(); ++c)
            t.at({int64_t(r), int64_t(c)}) = j[r][c].get<float>();
    return t;
}

// Largest |a - b| between a [h, q, k] tensor and a JSON [h][q][k] array, checking sizes first.
double maxAbsDiff3(const Tensor& t, const Json& expected, bool relativeForHuge = false) {
    if (t.dim(0) != static_cast<int64_t>(expected.size())) return INFINITY;
    double worst = 0;
    for (int64_t h = 0; h < t.dim(0); ++h) {
        const auto m = t.slice2d({h});
        if (m.rows() != static_cast<int64_t>(expected[h].size()) ||
            m.cols() != static_cast<int64_t>(expected[h][0].size()))
            return INFINITY;
        for (int64_t r = 0; r < m.rows(); ++r)
            for (int64_t c = 0; c < m.cols(); ++c) {
                const double e = expected[h][r][c].get<double>();
                double d = std::abs(m(r, c) - e);
                if (relativeForHuge && std::abs(e) > 1e6) d /= std::abs(e); // -1e9 fill compares relatively
                worst = std::max(worst, d);
            }
    }
    return worst;
}

} // namespace

class TestAttention : public QObject {
    Q_OBJECT
private slots:
    // Masked keys weigh exactly 0 on every path of the softmax (Eigen's vectorised exp never returns 0 by
    // itself: 24 keys take its packet path), and so does a key far below the row's maximum.
    void maskedKeysWeighExactlyZero() {
        const int n = 24;
        RowMatrix scores = RowMatrix::Random(n, n) + causalMask(n, 0);
        scores(n - 1, 0) = -200.0f; // exp(-200 - max) is below float32's range
        softmaxRowsInPlace(MatrixMap(scores.data(), n, n));
        for (int q = 0; q < n; ++q) {
            for (int k = q + 1; k < n; ++k)
                QVERIFY2(scores(q, k) == 0.0f, qPrintable(QString::number(double(scores(q, k)))));
            QVERIFY(std::abs(scores.row(q).sum() - 1.0f) < 1e-6f);
        }
        QVERIFY(scores(n - 1, 0) == 0.0f);
        QVERIFY(scores(n - 1, 1) > 0.0f);
    }
    // The playground's stage-by-stage attention and the models' layer agree: with identity projections
    // the layer's captured weights and output are the playground's (scores scaled like ViT/diffusers).
    void playgroundEqualsTheModelsLayer() {
        const int64_t n = 5, m = 7, d = 8;
        const int heads = 2;
        auto filled = [](int64_t r, int64_t c, float seed) {
            Tensor t({r, c});
            for (int64_t i = 0; i < t.numel(); ++i)
                t.data()[i] = std::sin(seed + 0.37f * static_cast<float>(i));
            return t;
        };
        const Tensor q = filled(n, d, 0.1f), kv = filled(m, d, 1.3f);
        Tensor eye({d, d});
        for (int64_t i = 0; i < d; ++i)
            eye.at({i, i}) = 1.0f;
        const MultiHeadAttention layer({eye, {}}, {eye, {}}, {eye, {}}, {eye, {}}, heads, QueryScale::Scores);
        Tensor probs;
        const RowMatrix out =
            layer.forward(q.matrix(), kv.matrix(), nullptr, &probs); // [n, d], probs [heads, n, m]
        const AttentionResult play = multiHeadAttention(q, kv, kv, nullptr, heads, true);
        QCOMPARE(play.weights.shape(), probs.shape());
        double worstW = 0, worstO = 0;
        for (int64_t i = 0; i < probs.numel(); ++i)
            worstW = std::max(worstW, double(std::abs(probs.data()[i] - play.weights.data()[i])));
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < d; ++j)
                worstO = std::max(worstO, double(std::abs(out(i, j) - play.output.at({i, j}))));
        QVERIFY2(worstW < 1e-6 && worstO < 1e-5,
                 qPrintable(QString("weights %1, output %2").arg(worstW).arg(worstO)));

        // The capture is a typed tensor: a view into a larger [L, H, n, m] capture is written in place;
        // a view of the wrong shape is refused by name instead of overrunning memory.
        Tensor all({3, heads, n, m}, -1.0f);
        Tensor layerOne = all.sub({1});
        layer.forward(q.matrix(), kv.matrix(), nullptr, &layerOne);
        QCOMPARE(all.at({1, 1, n - 1, m - 1}), probs.at({1, n - 1, m - 1}));
        QCOMPARE(all.at({0, 0, 0, 0}), -1.0f); // other layers untouched
        Tensor wrong = all.sub({2}).reshaped({heads, m, n});
        try {
            layer.forward(q.matrix(), kv.matrix(), nullptr, &wrong);
            QFAIL("a capture of the wrong shape was accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("[2, 5, 7]"), e.what());
        }
    }

    void goldens_data();
    void goldens();
    void invariants();
    void badShapes();
    void valueWidthByHand();
};

void TestAttention::goldens_data() {
    QTest::addColumn<int>("index");
    const Json all = readJsonFile(std::string(ATTNLENS_TEST_DATA) + "/attention/cases.json");
    QVERIFY(all["cases"].size() >= 7);
    for (size_t i = 0; i < all["cases"].size(); ++i)
        QTest::newRow(all["cases"][i]["name"].get<std::string>().c_str()) << static_cast<int>(i);
}

void TestAttention::goldens() {
    QFETCH(int, index);
    const Json all = readJsonFile(std::string(ATTNLENS_TEST_DATA) + "/attention/cases.json");
    const Json& c = all["cases"][index];
    const Tensor q = matrixFrom(c["query"]), k = matrixFrom(c["key"]), v = matrixFrom(c["value"]);
    std::optional<Tensor> mask;
    if (c.contains("mask")) mask = matrixFrom(c["mask"]);
    const int heads = c["heads"].get<int>();
    const auto result = multiHeadAttention(q, k, v, mask ? &*mask : nullptr, heads, true);
    QVERIFY(result.stages.has_value());
    const auto& s = *result.stages;
    const Json& e = c["expected"];
    // float32 computation against a float64 reference on O(1) inputs: 1e-6 absolute is ~10 ulps.
    const double tol = 1e-6;
    QVERIFY2(maxAbsDiff3(s.scores, e["scores"]) < tol, "scores");
    QVERIFY2(maxAbsDiff3(s.scaled, e["scaled"]) < tol, "scaled");
    QVERIFY2(maxAbsDiff3(s.masked, e["masked"], true) < tol, "masked");
    QVERIFY2(maxAbsDiff3(s.weights, e["weights"]) < tol, "weights");
    QVERIFY2(maxAbsDiff3(s.output, e["output"]) < tol, "output");
    QVERIFY2(maxAbsDiff3(result.output.reshaped({1, q.dim(0), v.dim(1)}), Json::array({e["concat"]})) < tol,
             "concatenated output");
}

void TestAttention::invariants() {
    const Json all = readJsonFile(std::string(ATTNLENS_TEST_DATA) + "/attention/cases.json");
    int maskedSeen = 0;
    for (const Json& c : all["cases"]) {
        const Tensor q = matrixFrom(c["query"]), k = matrixFrom(c["key"]), v = matrixFrom(c["value"]);
        std::optional<Tensor> mask;
        if (c.contains("mask")) mask = matrixFrom(c["mask"]);
        const auto r = multiHeadAttention(q, k, v, mask ? &*mask : nullptr, c["heads"].get<int>(), false);
        QVERIFY(!r.stages.has_value());
        QCOMPARE(r.weights.shape(), (Shape{c["heads"].get<int64_t>(), q.dim(0), k.dim(0)}));
        for (int64_t h = 0; h < r.weights.dim(0); ++h) {
            const auto w = r.weights.slice2d({h});
            for (int64_t i = 0; i < w.rows(); ++i) {
                QVERIFY(std::abs(w.row(i).sum() - 1.0f) < 1e-6f);
                for (int64_t j = 0; j < w.cols(); ++j) {
                    QVERIFY(w(i, j) >= 0.0f);
                    if (mask && mask->at({i, j}) == 0.0f) {
                        QCOMPARE(w(i, j), 0.0f); // exp(-1e9 - max) underflows to exactly 0
                        ++maskedSeen;
                    }
                }
            }
        }
    }
    QVERIFY(maskedSeen > 20); // the goldens really do exercise masking
}

void TestAttention::badShapes() {
    const Tensor q({3, 4}), k({5, 4}), v({5, 4}), kBad({5, 3}), vBad({4, 4}), mBad({3, 4});
    QVERIFY_THROWS_EXCEPTION(Error, multiHeadAttention(q, kBad, v, nullptr, 1, false));
    QVERIFY_THROWS_EXCEPTION(Error, multiHeadAttention(q, k, vBad, nullptr, 1, false));
    QVERIFY_THROWS_EXCEPTION(Error, multiHeadAttention(q, k, v, nullptr, 3, false)); // 3 does not divide 4
    QVERIFY_THROWS_EXCEPTION(Error, multiHeadAttention(q, k, v, &mBad, 1, false));
    QVERIFY_THROWS_EXCEPTION(Error, multiHeadAttention(Tensor({0, 4}), k, v, nullptr, 1, false));
    const auto ok = multiHeadAttention(q, k, v, nullptr, 2, false);
    QCOMPARE(ok.output.shape(), (Shape{3, 4}));

    // V may be wider or narrower than Q and K (d_v != d_k): the output is [queries, d_v]; heads must divide
    // both widths and the message names the one they do not.
    const Tensor v6({5, 6});
    QCOMPARE(multiHeadAttention(q, k, v6, nullptr, 2, true).output.shape(), (Shape{3, 6}));
    QCOMPARE(multiHeadAttention(q, k, v6, nullptr, 2, true).stages->output.shape(), (Shape{2, 3, 3}));
    try {
        multiHeadAttention(q, k, v6, nullptr, 4, false);
        QFAIL("4 heads accepted for d_v = 6");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("value width d_v = 6"), e.what());
    }
}

// By hand: one query that scores both keys equally (q = 0) averages their values, whatever V's width.
void TestAttention::valueWidthByHand() {
    const Tensor q({1, 1}, std::vector<float>{0.0f});
    const Tensor k({2, 1}, std::vector<float>{1.0f, -1.0f});
    const Tensor v({2, 3}, std::vector<float>{1, 2, 3, 3, 4, 9});
    const auto r = multiHeadAttention(q, k, v, nullptr, 1, true);
    QCOMPARE(r.output.shape(), (Shape{1, 3}));
    QCOMPARE(r.output.at({0, 0}), 2.0f);
    QCOMPARE(r.output.at({0, 1}), 3.0f);
    QCOMPARE(r.output.at({0, 2}), 6.0f);
}

QTEST_GUILESS_MAIN(TestAttention)
#include "test_attention.moc"
