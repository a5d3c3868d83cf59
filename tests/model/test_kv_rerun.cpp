// KV-cache what-ifs re-run (issue 42, core/analysis/kv_rerun.h) on the text fixtures written by transformers'
// own save_pretrained (tests/data/text, tests/data/llm) and the built-in Llama-architecture model:
// - a policy that keeps everything reproduces the baseline exactly (every log-probability bit for bit, KL 0,
//   the same tokens), and the baseline is the model's own greedy continuation;
// - evicting works as the definition says: layer 0's attention of the step (whose inputs no eviction
//   touches) is the full run's row with the evicted keys at 0 and the rest renormalised — rotary, windowed
//   and learned-position models alike;
// - StreamingLLM's kept set on a re-run is the paper's (the sinks and the window), the cache memory is the
//   entries kept × one entry's bytes; H2O keeps its budget and its recent entries and never brings one back;
// - Free mode writes the policy's own text; an encoder is one clear error;
// - `attnlens-cli lens --kv-policy` prints and writes the same numbers, and exits 2 on bad usage.

#include "core/analysis/kv_rerun.h"
#include "core/io/json_file.h"
#include "core/models/llama_model.h"
#include "core/models/text_folder.h"
#include "core/models/text_generation.h"
#include "core/util/error.h"
#include "support/cli_run.h"
#include "support/lens_models.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;
using lenstest::load;
using lenstest::sampleIds;

} // namespace

class TestKvRerun : public QObject {
    Q_OBJECT
private slots:
    void folders_data() {
        QTest::addColumn<QString>("folder");
        QTest::newRow("GPT-2") << "text/gpt2";
        QTest::newRow("Llama, GQA") << "llm/llama-gqa";
        QTest::newRow("Qwen3, q/k norm") << "llm/qwen3-qknorm";
        QTest::newRow("Mistral, window") << "llm/mistral-window";
        QTest::newRow("Gemma 3, sliding and global") << "llm/gemma3";
    }

    void keepingEverythingIsTheRunItself_data() { folders_data(); }
    void keepingEverythingIsTheRunItself() {
        QFETCH(QString, folder);
        const auto m = load(folder);
        const auto prompt = sampleIds(*m, 6);
        const KvBaseline base = kvBaseline(*m, prompt, {.steps = 8, .stop = StopAt::Count});
        QVERIFY(base.steps() >= 1);
        QCOMPARE(base.tokens.size(), size_t(base.steps() + 1));
        // the baseline is the model's greedy continuation
        TextCache cache = m->newCache();
        const TextForward first = m->extend(prompt, cache, true, true, {});
        TextFolder f;
        f.model = m;
        const auto greedy =
            greedyContinuation(f, first.logits, cache, base.steps() + 1, {}, {}, StopAt::Count);
        for (int s = 0; s <= base.steps(); ++s)
            QCOMPARE(base.tokens[size_t(s)], greedy[size_t(s)]);
        for (const char* policy : {"full", "streaming:0,1000", "h2o:1000,1", "snapkv:1000,2"}) {
            const KvRerun r = kvRerun(*m, base, parseKvPolicy(policy));
            QCOMPARE(int(r.steps.size()), base.steps());
            QCOMPARE(r.firstChange, -1);
            for (int s = 0; s < base.steps(); ++s) {
                const KvRerunStep& st = r.steps[size_t(s)];
                QCOMPARE(st.fed, base.tokens[size_t(s)]);
                QCOMPARE(st.chosen, st.original);
                QCOMPARE(st.logprob, st.baseLogprob); // bit for bit
                QCOMPARE(st.kl, 0.0f);
                QCOMPARE(st.kept, base.promptLength() + s + 1);
            }
        }
    }

    void evictedKeysAreLeftOutOfTheSoftmax_data() { folders_data(); }
    void evictedKeysAreLeftOutOfTheSoftmax() {
        QFETCH(QString, folder);
        const auto m = load(folder);
        const auto prompt = sampleIds(*m, 7);
        TextCache cache = m->newCache();
        m->extend(prompt, cache, false, true, {});
        TextCache evicted = cache;
        const std::vector<int> next{11};
        const TextForward full = m->extend(next, cache, true, true, {});
        std::vector<char> kept{1, 0, 1, 1, 0, 0, 1, 1}; // keys 1, 4, 5 evicted; 7 is the token's own
        RunControls run;
        run.keptKeys = &kept;
        const TextForward what = m->extend(next, evicted, true, true, run);
        const int64_t keys = 8;
        QCOMPARE(what.attentions.dim(3), keys);
        for (int h = 0; h < m->heads(); ++h) {
            const float* a = full.attentions.data() + h * keys; // layer 0
            const float* b = what.attentions.data() + h * keys;
            double rest = 0;
            for (int j = 0; j < keys; ++j)
                rest += kept[size_t(j)] ? a[j] : 0.0;
            for (int j = 0; j < keys; ++j) {
                if (!kept[size_t(j)]) {
                    QCOMPARE(b[j], 0.0f);
                    continue;
                }
                QVERIFY2(
                    std::abs(b[j] - a[j] / rest) < 1e-5,
                    qPrintable(QString("head %1 key %2: %3 vs %4").arg(h).arg(j).arg(b[j]).arg(a[j] / rest)));
            }
        }
        QVERIFY((full.logits - what.logits).cwiseAbs().maxCoeff() > 1e-6); // it changed what came out
        // a prompt of several tokens cannot evict (the what-if feeds one token at a time)
        TextCache again = m->newCache();
        QVERIFY_THROWS_EXCEPTION(Error, m->extend(prompt, again, false, true, run));
    }

    void streamingKeepsTheSinksAndTheWindow() {
        const auto m = load("llm/llama-gqa");
        const auto prompt = sampleIds(*m, 10);
        const KvBaseline base = kvBaseline(*m, prompt, {.steps = 6, .stop = StopAt::Count});
        QCOMPARE(base.steps(), 6);
        const KvRerun r = kvRerun(*m, base, parseKvPolicy("streaming:2,3"));
        const auto* llama = dynamic_cast<const LlamaModel*>(m.get());
        const auto& c = llama->config();
        QCOMPARE(base.entryBytes, int64_t(c.layers) * 2 * c.kvHeads * c.headDim * 4);
        for (int s = 0; s < 6; ++s) {
            const int current = 10 + s;
            QCOMPARE(int(r.kept.rows[size_t(s)].size()), current + 1);
            for (int j = 0; j <= current; ++j)
                QCOMPARE(r.kept.kept(s, j), j < 2 || j > current - 3);
            QCOMPARE(r.steps[size_t(s)].kept, 5);
            QCOMPARE(r.steps[size_t(s)].cacheBytes, 5 * base.entryBytes);
            QVERIFY(r.steps[size_t(s)].kl >= 0.0f);
            QVERIFY(std::isfinite(r.steps[size_t(s)].logprob));
        }
        QVERIFY(r.steps.back().kl > 0.0f); // most of the text evicted: the distribution moved
    }

    void heavyHittersKeepTheirBudget() {
        const auto m = load("text/gpt2");
        const KvBaseline base = kvBaseline(*m, sampleIds(*m, 9), {.steps = 6, .stop = StopAt::Count});
        const KvRerun r = kvRerun(*m, base, parseKvPolicy("h2o:5,2"));
        for (int s = 0; s < r.kept.steps; ++s) {
            const int current = 9 + s;
            QCOMPARE(r.kept.keptCount(s), 5);
            QVERIFY(r.kept.kept(s, current) && r.kept.kept(s, current - 1)); // the recent
            if (s > 0)
                for (int j = 0; j < current; ++j) // evicted entries never return
                    QVERIFY(!r.kept.kept(s, j) || r.kept.kept(s - 1, j));
        }
    }

    void freeModeWritesItsOwnText() {
        const auto m = load("llm/llama-gqa");
        const KvBaseline base = kvBaseline(*m, sampleIds(*m, 12), {.steps = 10, .stop = StopAt::Count});
        const KvRerun forced = kvRerun(*m, base, parseKvPolicy("keep:0"), KvRerunMode::Forced);
        const KvRerun free = kvRerun(*m, base, parseKvPolicy("keep:0"), KvRerunMode::Free);
        QCOMPARE(free.firstChange, forced.firstChange); // the same text up to it, so the same first change
        for (size_t s = 0; s < free.steps.size(); ++s) {
            if (s > 0) QCOMPARE(free.steps[s].fed, free.steps[s - 1].chosen);
            const bool same = free.firstChange < 0 || int(s) <= free.firstChange;
            QCOMPARE(std::isfinite(free.steps[s].kl), same);
            if (same) QCOMPARE(free.steps[s].logprob, forced.steps[s].logprob);
        }
    }

    // A page's run handed over (its prompt attention and cache) gives the baseline the prompt's own pass
    // gives
    void aGivenPromptRunIsNotRunAgain() {
        const auto m = load("llm/llama-gqa");
        const auto prompt = sampleIds(*m, 9);
        const KvBaseline own = kvBaseline(*m, prompt, {.steps = 5, .stop = StopAt::Count});
        TextCache cache = m->newCache();
        const TextForward run = m->extend(prompt, cache, false, true, {});
        m->extend(std::vector<int>{3, 4}, cache, false, true, {}); // the page's cache runs on past the prompt
        const KvBaseline given = kvBaseline(*m, prompt,
                                            {.steps = 5,
                                             .stop = StopAt::Count,
                                             .promptAttention = run.attentionStore().get(),
                                             .promptCache = &cache});
        QCOMPARE(given.tokens, own.tokens);
        QCOMPARE(given.promptCache.length(), int64_t(prompt.size()));
        QVERIFY((given.summedPrompt - own.summedPrompt).cwiseAbs().maxCoeff() < 1e-5);
        for (int s = 0; s < own.steps(); ++s)
            for (size_t v = 0; v < own.logprobs[size_t(s)].size(); ++v)
                QVERIFY(std::abs(given.logprobs[size_t(s)][v] - own.logprobs[size_t(s)][v]) < 1e-4);
        QVERIFY_THROWS_EXCEPTION(
            Error, kvBaseline(*m, sampleIds(*m, 8),
                              {.promptAttention = run.attentionStore().get(), .promptCache = &cache}));
    }

    void encodersAreRefused() {
        const auto m = load("text/bert-mlm");
        QVERIFY_THROWS_EXCEPTION(Error, kvBaseline(*m, sampleIds(*m, 4), {.steps = 3}));
        const auto d = load("text/gpt2");
        QVERIFY_THROWS_EXCEPTION(Error, kvBaseline(*d, std::vector<int>{}, {.steps = 3}));
    }

    void cli() {
        QTemporaryDir tmp;
        const QString json = tmp.filePath("kv.json");
        const auto r = clitest::run(
            {"lens", "--kv-policy", "streaming:2,4", "--generate", "6", "--json", json, "The little dog"});
        QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("streaming:2,4 (forced)"), qPrintable(r.out));
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["policy"].get<std::string>(), std::string("streaming:2,4"));
        const int p = j["prompt_length"].get<int>();
        QCOMPARE(j["steps"].size(), size_t(6));
        QCOMPARE(j["kept"][0].size(), size_t(p + 1));
        QCOMPARE(j["steps"][5]["kept"].get<int>(), 6);
        // keeping everything changes nothing
        const auto full =
            clitest::run({"lens", "--kv-policy", "full", "--generate", "5", "--json", json, "A dog"});
        QVERIFY2(!full.crashed && full.exitCode == 0, qPrintable(full.err));
        const Json f = readJsonFile(json.toStdString());
        QCOMPARE(f["changed"].get<int>(), 0);
        for (const auto& st : f["steps"])
            QCOMPARE(st["kl"].get<float>(), 0.0f);
        clitest::expectError(clitest::run({"lens", "--kv-policy", "lru:3", "hello"}), "KV policy 'lru:3'");
        clitest::expectError(clitest::run({"lens", "--kv-policy", "full", "--contrib", "hello"}),
                             "say which lens");
        clitest::expectError(clitest::run({"lens", "--free", "--logit-lens", "hello"}), "--free");
        clitest::expectError(
            clitest::run({"lens", "--kv-policy", "full", "--model",
                          QString::fromStdString((kData / "text/bert-mlm").string()), "hello"}),
            "decoder-only");
    }
};

QTEST_GUILESS_MAIN(TestKvRerun)
#include "test_kv_rerun.moc"
