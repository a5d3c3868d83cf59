// KV-cache eviction what-ifs (issue 42, core/analysis/kv_policy.h) on hand-made traces: StreamingLLM keeps
// the sinks and the window exactly as the paper defines them; H2O keeps its budget, the recent entries and
// the heaviest by attention received, and never brings an evicted entry back; SnapKV keeps what the
// observation window voted for; full keeps everything; bad policy texts are one message.

#include "core/analysis/kv_policy.h"
#include "core/util/error.h"

#include <QTest>

using namespace attnlens;

namespace {

// A decoder trace of 1 layer, 1 head: a prompt of p tokens and `steps` generated, each query's attention put
// on `heavy` (weight w) and spread evenly over the rest of what it sees.
struct Trace {
    Tensor prompt;
    std::vector<Tensor> steps;
};

Trace makeTrace(int p, int steps, int heavy, float w) {
    Trace t;
    const auto fill = [&](float* row, int seen) {
        for (int j = 0; j < seen; ++j)
            row[j] = seen == 1 ? 1.0f : (j == heavy ? w : (1.0f - w) / float(seen - 1));
    };
    t.prompt = Tensor({1, 1, p, p});
    for (int q = 0; q < p; ++q) {
        float* row = t.prompt.data() + q * p;
        std::fill(row, row + p, 0.0f);
        fill(row, q + 1);
    }
    for (int s = 0; s < steps; ++s) {
        Tensor step({1, 1, 1, p + s + 1});
        fill(step.data(), p + s + 1);
        t.steps.push_back(step);
    }
    return t;
}

std::vector<int> keptKeys(const KvKeptMap& m, int step) {
    std::vector<int> keys;
    for (int j = 0; j < int(m.rows[size_t(step)].size()); ++j)
        if (m.kept(step, j)) keys.push_back(j);
    return keys;
}

} // namespace

class TestKvPolicy : public QObject {
    Q_OBJECT
private slots:
    void streamingKeepsSinksAndWindow() {
        const Trace t = makeTrace(6, 3, 2, 0.5f);
        const KvKeptMap m = kvKeptMap(parseKvPolicy("streaming:2,3"), t.prompt, t.steps);
        QCOMPARE(m.promptLength, 6);
        QCOMPARE(keptKeys(m, 0), (std::vector<int>{0, 1, 4, 5, 6})); // step 0 sees keys 0..6
        QCOMPARE(keptKeys(m, 1), (std::vector<int>{0, 1, 5, 6, 7}));
        QCOMPARE(keptKeys(m, 2), (std::vector<int>{0, 1, 6, 7, 8}));
        for (int s = 0; s < 3; ++s)
            QCOMPARE(m.keptCount(s), 2 + 3);
        // a window as long as the text keeps everything
        const KvKeptMap all = kvKeptMap(parseKvPolicy("streaming:0,100"), t.prompt, t.steps);
        QCOMPARE(all.keptCount(2), 9);
    }

    void fullAndKeep() {
        const Trace t = makeTrace(5, 2, 0, 0.5f);
        const KvKeptMap full = kvKeptMap(parseKvPolicy("full"), t.prompt, t.steps);
        QCOMPARE(full.keptCount(0), 6);
        QCOMPARE(full.keptCount(1), 7);
        const KvKeptMap keep = kvKeptMap(parseKvPolicy("keep:0,2-3"), t.prompt, t.steps);
        QCOMPARE(keptKeys(keep, 1), (std::vector<int>{0, 2, 3, 5, 6})); // the generated tokens stay
    }

    void heavyHittersKeepTheHeaviest() {
        const Trace t = makeTrace(8, 4, 3, 0.7f); // key 3 draws 70 % of every query that sees it
        const KvKeptMap m = kvKeptMap(parseKvPolicy("h2o:4,2"), t.prompt, t.steps);
        for (int s = 0; s < 4; ++s) {
            const auto keys = keptKeys(m, s);
            QCOMPARE(int(keys.size()), 4);
            QVERIFY(std::find(keys.begin(), keys.end(), 3) != keys.end());         // the heavy hitter
            QVERIFY(std::find(keys.begin(), keys.end(), 8 + s) != keys.end());     // the current token
            QVERIFY(std::find(keys.begin(), keys.end(), 8 + s - 1) != keys.end()); // recent
            if (s > 0) // an entry evicted never comes back
                for (int j : keys)
                    QVERIFY(j >= 8 + s - 1 || m.kept(s - 1, j));
        }
        // key 0 (seen by every query, though lightly) outweighs the later light keys
        QVERIFY(m.kept(0, 0));
    }

    void snapKvKeepsTheVoted() {
        const Trace t = makeTrace(10, 2, 4, 0.8f);
        const KvKeptMap m = kvKeptMap(parseKvPolicy("snapkv:4,2"), t.prompt, t.steps);
        // the window (8, 9), the two most voted before it (4; then the rest tie and the first, 0, goes), the
        // generated
        QCOMPARE(keptKeys(m, 0), (std::vector<int>{0, 4, 8, 9, 10}));
        QCOMPARE(keptKeys(m, 1), (std::vector<int>{0, 4, 8, 9, 10, 11}));
    }

    void badPoliciesAreOneMessage() {
        for (const char* bad :
             {"", "streaming", "streaming:4", "streaming:4,0", "streaming:a,3", "h2o:4,5", "h2o:4,0",
              "snapkv:2,3", "keep:", "keep:3-1", "lru:4", "full:1", "streaming:-1,4"})
            QVERIFY_THROWS_EXCEPTION(Error, parseKvPolicy(bad));
        for (const char* good : {"full", "streaming:4,256", "h2o:256,64", "snapkv:256,32", "keep:0,1,2"})
            QCOMPARE(kvPolicyName(parseKvPolicy(good)), std::string(good));
        QVERIFY_THROWS_EXCEPTION(Error, kvKeptMap(KvPolicy{}, Tensor({1, 1, 3, 4}), {}));
    }
};

QTEST_GUILESS_MAIN(TestKvPolicy)
#include "test_kv_policy.moc"
