// Choosing the next token (core/models/text_generation): greedy at temperature 0, top-k and top-p cut as
// transformers' warpers do (the most likely always kept), frequencies following the warped softmax, the same
// seed giving the same choices, bad settings refused.
#include "core/models/text_generation.h"
#include "core/util/error.h"

#include <QTest>

#include <cmath>
#include <map>

using namespace attnlens;

class TestSampling : public QObject {
    Q_OBJECT
private slots:
    void greedyAndCuts() {
        const std::vector<float> logits{1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
        std::mt19937_64 rng(1);
        QCOMPARE(chooseToken(logits.data(), 5, Sampling{}, rng), 1); // ties: the lower id
        Sampling one{1.0f, 1, 1.0f, 0};
        for (int i = 0; i < 50; ++i)
            QCOMPARE(chooseToken(logits.data(), 5, one, rng), 1); // top-k 1: greedy
        // top-p 0.5: p = softmax → tokens 1 and 3 carry 0.39 each: {1} reaches 0.39 < 0.5, {1, 3} 0.79 ≥ 0.5.
        Sampling p{1.0f, 0, 0.5f, 0};
        std::map<int, int> seen;
        for (int i = 0; i < 2000; ++i)
            ++seen[chooseToken(logits.data(), 5, p, rng)];
        QCOMPARE(seen.size(), size_t(2));
        QVERIFY(seen[1] > 850 && seen[3] > 850);
        // Temperature 2 over all: frequencies near softmax(logits / 2).
        Sampling t{2.0f, 0, 1.0f, 0};
        seen.clear();
        const int n = 20000;
        for (int i = 0; i < n; ++i)
            ++seen[chooseToken(logits.data(), 5, t, rng)];
        double z = 0;
        for (float l : logits)
            z += std::exp(l / 2.0);
        for (int id = 0; id < 5; ++id) {
            const double expected = std::exp(logits[size_t(id)] / 2.0) / z;
            QVERIFY2(std::abs(seen[id] / double(n) - expected) < 0.015, qPrintable(QString::number(id)));
        }
    }

    void seedReproduces() {
        std::vector<float> logits(100);
        for (size_t i = 0; i < logits.size(); ++i)
            logits[i] = std::sin(float(i));
        auto draw = [&](uint64_t seed) {
            std::mt19937_64 rng(seed);
            std::vector<int> out;
            for (int i = 0; i < 30; ++i)
                out.push_back(chooseToken(logits.data(), 100, Sampling{1.0f, 40, 0.95f, seed}, rng));
            return out;
        };
        QCOMPARE(draw(7), draw(7));
        QVERIFY(draw(7) != draw(8));
    }

    void badSettingsRefused() {
        const std::vector<float> logits{1.0f, 2.0f};
        std::mt19937_64 rng(1);
        QVERIFY_THROWS_EXCEPTION(Error, chooseToken(logits.data(), 2, Sampling{-1.0f, 0, 1.0f, 0}, rng));
        QVERIFY_THROWS_EXCEPTION(Error, chooseToken(logits.data(), 2, Sampling{1.0f, 0, 0.0f, 0}, rng));
        QVERIFY_THROWS_EXCEPTION(Error, chooseToken(logits.data(), 0, Sampling{}, rng));
    }
};

QTEST_GUILESS_MAIN(TestSampling)
#include "test_sampling.moc"
