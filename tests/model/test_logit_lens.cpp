// Lenses past the attention weights (issue 42, core/analysis/logit_lens.h) on the text fixtures written by
// transformers' own save_pretrained (tests/data/text, tests/data/llm) and the built-in models:
// - the logit lens's last row is the model's own output and its first the readout of the embeddings,
//   computed apart (embeddingParts), at every position;
// - the residual trace adds up: the stream entering layer l + 1 is the one entering l plus what its
//   sub-layers wrote (through a sandwich norm where the block has one);
// - direct logit attribution: the embeddings, every head, o_proj's bias, every MLP and the constant sum to
//   the logit within 1e-4, for the model's top token and for another, for GPT-2 (o_proj bias), Llama (GQA),
//   Qwen2 (q/k/v bias), Qwen3 (q/k norm), Mistral (window) and Gemma 3 (sandwich norms, √D embeddings);
// - a head switched off writes nothing; bad positions, targets and a BERT head are one clear error;
// - `attnlens-cli lens` prints and writes the same numbers, and exits 2 on bad usage.

#include "core/analysis/logit_lens.h"
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

double maxDiff(const RowMatrix& a, const RowMatrix& b) {
    return (a - b).cwiseAbs().maxCoeff();
}

} // namespace

class TestLogitLens : public QObject {
    Q_OBJECT
private slots:
    void folders_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("attribution");
        QTest::newRow("GPT-2") << "text/gpt2" << true;
        QTest::newRow("BERT, MLM head") << "text/bert-mlm" << false;
        QTest::newRow("Llama, GQA") << "llm/llama-gqa" << true;
        QTest::newRow("Llama, tied bf16") << "llm/llama-mqa-tied-bf16" << true;
        QTest::newRow("Qwen2, bias") << "llm/qwen2-bias" << true;
        QTest::newRow("Qwen3, q/k norm") << "llm/qwen3-qknorm" << true;
        QTest::newRow("Mistral, window") << "llm/mistral-window" << true;
        QTest::newRow("Gemma 3, sandwich") << "llm/gemma3" << true;
    }

    void lensEndsAtTheOutputAndStartsAtTheEmbeddings_data() { folders_data(); }
    void lensEndsAtTheOutputAndStartsAtTheEmbeddings() {
        QFETCH(QString, folder);
        const auto m = load(folder);
        const auto ids = sampleIds(*m, 9);
        const TextForward out = m->forward(ids);
        const RowMatrix first = m->readout(m->embeddingParts(ids).input);
        std::vector<int> positions{0, 4, 8};
        const auto lenses = logitLens(*m, ids, positions, {}, 3);
        QCOMPARE(lenses.size(), positions.size());
        for (size_t i = 0; i < lenses.size(); ++i) {
            const int p = positions[i];
            QCOMPARE(lenses[i].layers.size(), size_t(m->layers() + 1));
            const auto& last = lenses[i].layers.back();
            Eigen::Index best = 0;
            out.logits.row(p).maxCoeff(&best);
            QCOMPARE(lenses[i].target, int(best));
            QCOMPARE(last.top.front().id, int(best));
            QCOMPARE(last.targetRank, 0);
            QVERIFY(std::abs(last.targetLogit - out.logits(p, best)) < 1e-4);
            const auto& zero = lenses[i].layers.front();
            const int target = lenses[i].target;
            QVERIFY(std::abs(zero.targetLogit - first(p, target)) < 1e-4);
            QCOMPARE(zero.targetRank, int((first.row(p).array() > first(p, target)).count()));
            // probabilities: a softmax's, best first
            double sum = 0;
            for (Eigen::Index v = 0; v < out.logits.cols(); ++v)
                sum += std::exp(double(out.logits(p, v)) - out.logits(p, best));
            QVERIFY(std::abs(last.top.front().prob - 1.0 / sum) < 1e-5);
            QVERIFY(last.top[0].prob >= last.top[1].prob && last.top[1].prob >= last.top[2].prob);
        }
    }

    void traceAddsUp_data() { folders_data(); }
    void traceAddsUp() {
        QFETCH(QString, folder);
        QFETCH(bool, attribution);
        if (!attribution) QSKIP("post-norm blocks: the trace keeps their input and context only");
        const auto model = load(folder);
        const auto ids = sampleIds(*model, 7);
        ResidualTrace trace;
        trace.rows = {2, 6};
        RunControls run;
        run.trace = &trace;
        const TextForward out = model->forward(ids, false, run);
        QVERIFY(!out.attentions.empty()); // the trace does not take the attention away
        const auto blocks = model->blocks();
        QCOMPARE(trace.layers.size(), blocks.size());
        QVERIFY(maxDiff(trace.layers[0].input, traceRows(model->embeddingParts(ids).input, trace.rows)) <
                1e-6);
        for (size_t l = 0; l < blocks.size(); ++l) {
            const LayerTrace& t = trace.layers[l];
            RowMatrix a = t.attention, m = t.mlp;
            if (blocks[l].attentionOutputNorm) blocks[l].attentionOutputNorm->apply(a);
            if (blocks[l].mlpOutputNorm) blocks[l].mlpOutputNorm->apply(m);
            const RowMatrix& next = l + 1 < blocks.size() ? trace.layers[l + 1].input : trace.final;
            QVERIFY2(maxDiff(t.input + a + m, next) < 1e-4, qPrintable(QString("layer %1").arg(l)));
            QCOMPARE(t.context.cols(), blocks[l].attention.dim());
        }
    }

    // A page's cache handed over: only the rows read run, the numbers the same up to float rounding
    void aCacheRunsOnlyTheRowsRead_data() { folders_data(); }
    void aCacheRunsOnlyTheRowsRead() {
        QFETCH(QString, folder);
        QFETCH(bool, attribution);
        const auto m = load(folder);
        if (!m->decoderOnly()) QSKIP("encoders keep no cache");
        const auto ids = sampleIds(*m, 10);
        TextCache cache = m->newCache();
        m->extend(std::span<const int>(ids).first(8), cache, false, true, {}); // the page has fed 8 of them
        const std::vector<int> positions{5, 7, 9};
        const auto plain = logitLens(*m, ids, positions, {}, 3);
        const auto fast = logitLens(*m, ids, positions, {}, 3, nullptr, {}, &cache);
        for (size_t i = 0; i < positions.size(); ++i)
            for (size_t l = 0; l < plain[i].layers.size(); ++l) {
                QCOMPARE(fast[i].layers[l].top[0].id, plain[i].layers[l].top[0].id);
                QVERIFY(std::abs(fast[i].layers[l].targetLogit - plain[i].layers[l].targetLogit) < 1e-4);
            }
        if (!attribution) return;
        const auto a = logitContributions(*m, ids, 7, -1);
        const auto b = logitContributions(*m, ids, 7, -1, nullptr, {}, &cache);
        QVERIFY(std::abs(a.logit - b.logit) < 1e-4);
        QVERIFY((a.heads - b.heads).cwiseAbs().maxCoeff() < 1e-4);
        QVERIFY(std::abs(b.total() - b.logit) < 1e-4);
        // a cache short of the first row read: the whole pass, the same numbers
        TextCache short_ = cachePrefix(cache, 3);
        const auto c = logitContributions(*m, ids, 7, -1, nullptr, {}, &short_);
        QVERIFY(std::abs(c.logit - a.logit) < 1e-4);
    }

    void contributionsSumToTheLogit_data() { folders_data(); }
    void contributionsSumToTheLogit() {
        QFETCH(QString, folder);
        QFETCH(bool, attribution);
        const auto m = load(folder);
        const auto ids = sampleIds(*m, 8);
        if (!attribution) {
            QVERIFY_THROWS_EXCEPTION(Error, logitContributions(*m, ids, 3, -1));
            return;
        }
        const TextForward out = m->forward(ids);
        for (int position : {7, 3})
            for (int target : {-1, 5}) {
                const LogitContributions c = logitContributions(*m, ids, position, target);
                const int t = target < 0 ? c.target : target;
                QVERIFY(std::abs(c.logit - out.logits(position, t)) < 1e-4);
                QCOMPARE(c.heads.rows(), Eigen::Index(m->layers()));
                QCOMPARE(c.heads.cols(), Eigen::Index(m->heads()));
                QVERIFY(std::all_of(c.split.begin(), c.split.end(), [](char s) { return s == 1; }));
                const double z = c.softcap > 0 ? c.softcap * std::tanh(c.total() / c.softcap) : c.total();
                QVERIFY2(
                    std::abs(z - c.logit) < 1e-4,
                    qPrintable(
                        QString("%1 at %2: parts %3, logit %4").arg(t).arg(position).arg(z).arg(c.logit)));
                QVERIFY(c.heads.cwiseAbs().maxCoeff() > 0);
            }
    }

    // Each head's write is its own: with head (l, h) switched off, layer l's attention output (its input
    // unchanged) drops by exactly that head's write, and the head's contribution is 0.
    void aHeadOffTakesItsWriteAway_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<int>("layer");
        QTest::addColumn<int>("head");
        QTest::newRow("GPT-2 1:2") << "text/gpt2" << 1 << 2;
        QTest::newRow("Llama GQA 1:5") << "llm/llama-gqa" << 1 << 5;
        QTest::newRow("Qwen3 0:3") << "llm/qwen3-qknorm" << 0 << 3;
    }
    void aHeadOffTakesItsWriteAway() {
        QFETCH(QString, folder);
        QFETCH(int, layer);
        QFETCH(int, head);
        const auto m = load(folder);
        const auto ids = sampleIds(*m, 6);
        const auto traced = [&](const HeadList& off) {
            ResidualTrace trace;
            trace.rows = {5};
            RunControls run;
            run.trace = &trace;
            run.captureAttention = false;
            run.offHeads = off;
            m->forward(ids, false, run);
            return trace;
        };
        const ResidualTrace on = traced({}), off = traced({{layer, head}});
        const MultiHeadAttention& a = m->blocks()[size_t(layer)].attention;
        const RowMatrix writes = headWrites(a, on.layers[size_t(layer)], 0);
        RowMatrix sum = writes.colwise().sum();
        if (!a.outWeights().bias.empty())
            sum += Eigen::Map<const Eigen::RowVectorXf>(a.outWeights().bias.data(), sum.cols());
        QVERIFY(maxDiff(sum, on.layers[size_t(layer)].attention) < 1e-5);
        QVERIFY(maxDiff(off.layers[size_t(layer)].input, on.layers[size_t(layer)].input) == 0);
        const RowMatrix dropped = on.layers[size_t(layer)].attention - writes.row(head);
        QVERIFY(maxDiff(off.layers[size_t(layer)].attention, dropped) < 1e-5);
        for (int other = 0; other < a.heads(); ++other) // another head's write differs: the slice is its own
            if (other != head) QVERIFY(maxDiff(writes.row(other), writes.row(head)) > 1e-4);
        const auto c = logitContributions(*m, ids, 5, -1, nullptr, {{layer, head}});
        QCOMPARE(c.heads(layer, head), 0.0f);
        QVERIFY(std::abs(c.total() - c.logit) < 1e-4);
        const auto lens = logitLens(*m, ids, std::vector<int>{5}, {}, 3, nullptr, {{layer, head}});
        RunControls offRun;
        offRun.offHeads = {{layer, head}};
        const TextForward f = m->forward(ids, true, offRun);
        QVERIFY(std::abs(lens[0].layers.back().targetLogit - f.logits(5, lens[0].target)) < 1e-4);
    }

    // GPT-2's o_proj (c_proj) has a bias: its share is apart from the heads'.
    void outputBiasIsItsOwnPart() {
        const auto gpt2 = load("text/gpt2");
        const auto c = logitContributions(*gpt2, sampleIds(*gpt2, 6), 5, -1);
        QVERIFY(std::any_of(c.outputBias.begin(), c.outputBias.end(), [](float v) { return v != 0.0f; }));
        const auto llama = load("llm/llama-gqa");
        const auto d = logitContributions(*llama, sampleIds(*llama, 6), 5, -1);
        QVERIFY(std::all_of(d.outputBias.begin(), d.outputBias.end(), [](float v) { return v == 0.0f; }));
    }

    void badRequestsAreOneError() {
        const auto m = load("llm/llama-gqa");
        const auto ids = sampleIds(*m, 4);
        const std::vector<int> outside{4}, negative{-1}, one{1};
        const std::vector<int> tooBig{m->vocabSize()};
        QVERIFY_THROWS_EXCEPTION(Error, logitLens(*m, ids, outside, {}, 3));
        QVERIFY_THROWS_EXCEPTION(Error, logitLens(*m, ids, negative, {}, 3));
        QVERIFY_THROWS_EXCEPTION(Error, logitLens(*m, ids, one, tooBig, 3));
        QVERIFY_THROWS_EXCEPTION(Error, logitLens(*m, ids, one, std::vector<int>{1, 2}, 3));
        QVERIFY_THROWS_EXCEPTION(Error, logitLens(*m, ids, std::vector<int>{}, {}, 3));
        QVERIFY_THROWS_EXCEPTION(Error, logitContributions(*m, ids, 4, -1));
        QVERIFY_THROWS_EXCEPTION(Error, logitContributions(*m, ids, 0, m->vocabSize()));
        const auto bert = load("text/bert-cased"); // no LM head
        QVERIFY_THROWS_EXCEPTION(Error, logitLens(*bert, sampleIds(*bert, 4), one, {}, 3));
    }

    void cliPrintsAndWritesTheLens() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("lens.json");
        auto r =
            clitest::run({"lens", "--logit-lens", "--position", "all", "--json", out, "Once upon a time"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json j = readJsonFile(out.toStdString());
        const auto ids = j["ids"].get<std::vector<int>>();
        QCOMPARE(j["lens"].size(), ids.size());
        const TextFolder f = loadTextFolder(kData / "../../resources/models/llama-en-tiny");
        const auto lenses = logitLens(*f.model, ids, std::vector<int>{int(ids.size()) - 1}, {}, 5);
        const Json& last = j["lens"].back();
        QCOMPARE(last["target"].get<int>(), lenses[0].target);
        QCOMPARE(last["layers"].size(), size_t(f.layers() + 1));
        QVERIFY(std::abs(last["layers"][1]["target_prob"].get<double>() - lenses[0].layers[1].targetProb) <
                1e-6);
        QVERIFY(r.out.contains("top-1 token per layer"));

        const QString contrib = tmp.filePath("contrib.json");
        r = clitest::run({"lens", "--contrib", "--target", " time", "--position", "2", "--json", contrib,
                          "Once upon a time"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json c = readJsonFile(contrib.toStdString());
        QCOMPARE(c["position"].get<int>(), 2);
        QCOMPARE(c["target_token"].get<std::string>(), std::string(" time"));
        QVERIFY(std::abs(c["total"].get<double>() - c["logit"].get<double>()) < 1e-4);
        QCOMPARE(c["heads"].size(), size_t(f.layers()));
        QVERIFY(r.out.contains("heads that move it most"));
        r = clitest::run({"lens", "--contrib", "--timing", "Once upon a time"});
        QVERIFY2(r.exitCode == 0 && r.err.startsWith("timing: the lens "), qPrintable(r.err));
    }

    void cliBadUsageExitsTwo() {
        const QStringList text{"Once upon a time"};
        for (const QStringList& a :
             {QStringList{"lens"} + text, QStringList{"lens", "--logit-lens", "--contrib"} + text,
              QStringList{"lens", "--logit-lens", "--position", "99"} + text,
              QStringList{"lens", "--contrib", "--position", "all"} + text,
              QStringList{"lens", "--contrib", "--target", " once upon"} + text,
              QStringList{"lens", "--contrib", "--target-id", "99999999"} + text,
              QStringList{"lens", "--contrib", "--model", QString(ATTNLENS_TEST_DATA "/text/bert-mlm")} +
                  text}) {
            clitest::expectError(clitest::run(a), "");
        }
    }
};

QTEST_GUILESS_MAIN(TestLogitLens)
#include "test_logit_lens.moc"
