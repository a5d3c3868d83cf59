// The lenses on the text families (issue 37), against the independent reference
// (tools/golden/text_reference.py, tools/golden/make_text_ablation_golden.py): heads switched off with
// transformers' head_mask semantics match the reference's attention and logits / hidden state within 1e-4;
// the neuron view's probe reproduces the captured attention; importance ranks by the drop of the output's
// log-probability; the Heads lens's sinks.

#include "core/analysis/attention_captures.h"
#include "core/analysis/head_stats.h"
#include "core/analysis/neuron_view.h"
#include "core/analysis/text_lenses.h"
#include "core/io/json_file.h"
#include "core/io/tensor_file.h"
#include "core/models/text_folder.h"
#include "core/util/error.h"
#include "support/text_fixtures.h"

#include <QTest>

#include <cmath>
#include <filesystem>

using namespace attnlens;

using texttest::firstIds;
using texttest::kData;
using texttest::kTol;
using texttest::maxDiff;

class TestTextLenses : public QObject {
    Q_OBJECT
private slots:
    void ablationMatchesReference_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("BertForMaskedLM") << "bert-mlm";
        QTest::newRow("BertModel") << "bert-cased";
        QTest::newRow("GPT2LMHeadModel") << "gpt2";
    }
    void ablationMatchesReference() {
        QFETCH(QString, model);
        const auto dir = kData / model.toStdString();
        const TextFolder folder = loadTextFolder(dir);
        const auto golden = TensorFile::open(dir / "golden_ablate.safetensors");
        const Tensor mask = golden.load("head_mask");
        RunControls run;
        for (int l = 0; l < mask.dim(0); ++l)
            for (int h = 0; h < mask.dim(1); ++h)
                if (mask.at({l, h}) == 0.0f) run.offHeads.push_back({l, h});
        QCOMPARE(run.offHeads.size(), size_t(3));
        const std::vector<int> ids = firstIds(dir);
        const TextForward f = folder.forward(ids, true, run);
        const Tensor att = golden.load("attentions");
        QCOMPARE(f.attentions.numel(), att.numel());
        QVERIFY(maxDiff(f.attentions.data(), att.data(), att.numel()) < kTol);
        for (const auto& [l, h] : run.offHeads) // the heads off capture all zeros
            QCOMPARE(f.attentions.sub({l, h}).matrix().cwiseAbs().maxCoeff(), 0.0f);
        if (golden.contains("logits")) {
            const Tensor logits = golden.load("logits");
            QCOMPARE(f.logits.size(), logits.numel());
            QVERIFY(maxDiff(f.logits.data(), logits.data(), logits.numel()) < kTol);
        } else {
            const Tensor hidden = golden.load("hidden");
            QVERIFY(maxDiff(f.hidden.data(), hidden.data(), hidden.numel()) < kTol);
        }
        // Nothing off is the plain run, bit for bit; duplicates change nothing; outside the model is refused.
        const TextForward plain = folder.forward(ids);
        QCOMPARE(folder.forward(ids, true, RunControls{}).attentions.toVector(), plain.attentions.toVector());
        RunControls twice = run;
        twice.offHeads.push_back(run.offHeads.front());
        QCOMPARE(folder.forward(ids, true, twice).attentions.toVector(), f.attentions.toVector());
        RunControls bad;
        bad.offHeads = {{2, 0}};
        QVERIFY_THROWS_EXCEPTION(Error, folder.forward(ids, true, bad));
        bad.offHeads = {{0, 4}};
        try {
            folder.forward(ids, true, bad);
            QFAIL("head 0:4 accepted");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("0:4 is outside the 2 layers × 4 heads") != std::string::npos,
                     e.what());
        }
    }

    // The GPT-2 KV cache with heads off equals the full pass with them off (generation of an ablated model).
    void ablatedCacheMatchesFullPass() {
        const TextFolder folder = loadTextFolder(kData / "gpt2");
        const std::vector<int> ids = firstIds(kData / "gpt2");
        RunControls run;
        run.offHeads = {{1, 2}};
        TextCache cache = folder.gpt2->newCache();
        const std::vector<int> prompt(ids.begin(), ids.end() - 1);
        (void)folder.gpt2->extend(prompt, cache, true, false, run);
        const TextForward last = folder.gpt2->extend(std::vector<int>{ids.back()}, cache, true, false, run);
        const TextForward full = folder.forward(ids, true, run);
        QVERIFY(maxDiff(last.logits.data(), full.logits.data() + (ids.size() - 1) * full.logits.cols(),
                        full.logits.cols()) < 1e-5);
    }

    void probeGivesTheNeuronView_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("BERT") << "bert-mlm";
        QTest::newRow("GPT-2") << "gpt2";
        QTest::newRow("GPT-2, scale_attn_weights false") << "gpt2-bare";
    }
    void probeGivesTheNeuronView() {
        QFETCH(QString, model);
        const auto dir = kData / model.toStdString();
        const TextFolder folder = loadTextFolder(dir);
        const std::vector<int> ids = firstIds(dir);
        const TextForward f = folder.forward(ids);
        const int n = static_cast<int>(ids.size());
        for (int layer = 0; layer < folder.layers(); ++layer) {
            const AttentionInputs in = textAttentionInputs(folder, ids, layer);
            QCOMPARE(in.causal, folder.decoderOnly());
            const ProjectedAttention p = projectAttention(in);
            for (int head = 0; head < folder.heads(); ++head)
                for (int q : {0, n / 2, n - 1})
                    for (int k : {0, q / 2, q, n - 1}) {
                        const NeuronTerms t = neuronTerms(p, head, q, k);
                        QVERIFY(std::abs(t.weight - f.attentions.at({layer, head, q, k})) < 1e-5);
                        QCOMPARE(t.masked, folder.decoderOnly() && k > q);
                    }
        }
        QVERIFY_THROWS_EXCEPTION(Error, textAttentionInputs(folder, ids, folder.layers()));
    }

    void targetsAndImportance() {
        // GPT-2: the tokens after the first (or the generated ones), predicted one row earlier.
        const TextFolder gpt = loadTextFolder(kData / "gpt2");
        const std::vector<int> ids = firstIds(kData / "gpt2");
        const TextTargets all = textTargets(gpt, ids);
        QCOMPARE(all.tokens.size(), ids.size() - 1);
        QCOMPARE(all.tokens.front(), std::make_pair(1, ids[1]));
        const TextTargets generated = textTargets(gpt, ids, static_cast<int>(ids.size()) - 3);
        QCOMPARE(generated.tokens.size(), size_t(3));
        QVERIFY(QString::fromStdString(generated.description).contains("3 generated"));
        const TextForward f = gpt.forward(ids);
        double expected = 0;
        for (const auto& [t, id] : generated.tokens) {
            const auto row = f.logits.row(t - 1).cast<double>();
            expected += row(id) - row.maxCoeff() - std::log((row.array() - row.maxCoeff()).exp().sum());
        }
        QVERIFY(std::abs(textLogProb(gpt, ids, generated) - expected) < 1e-6);

        int reported = 0;
        Callbacks callbacks;
        callbacks.progress = [&](double, const std::string&) { ++reported; };
        const RowMatrix drop = textHeadImportance(gpt, ids, all, callbacks);
        QCOMPARE(drop.rows(), Eigen::Index(gpt.layers()));
        QCOMPARE(drop.cols(), Eigen::Index(gpt.heads()));
        QCOMPARE(reported, gpt.layers() * gpt.heads());
        const double base = textLogProb(gpt, ids, all);
        RunControls off;
        off.offHeads = {{1, 3}};
        QVERIFY(std::abs(drop(1, 3) - (base - textLogProb(gpt, ids, all, off))) < 1e-4);
        QVERIFY(drop.cwiseAbs().maxCoeff() > 1e-3); // heads matter for this random model

        // BERT: the plain prediction at each [MASK]; without one, the text's own tokens but [CLS] / [SEP].
        const TextFolder bert = loadTextFolder(kData / "bert-mlm");
        const TextEncoding masked = bert.encode("The [MASK] sat on the [MASK].");
        const TextTargets atMasks = textTargets(bert, masked.ids);
        QCOMPARE(atMasks.tokens.size(), size_t(2));
        QCOMPARE(atMasks.tokens[0].first, bert.maskPositions(masked.ids)[0]);
        const TextTargets own = textTargets(bert, firstIds(kData / "bert-mlm"));
        QCOMPARE(own.tokens.size(), firstIds(kData / "bert-mlm").size() - 2);
        // BertModel (no LM head): the hidden state's relative change.
        const TextFolder plainBert = loadTextFolder(kData / "bert-cased");
        const std::vector<int> cased = firstIds(kData / "bert-cased");
        const TextTargets none = textTargets(plainBert, cased);
        QVERIFY(none.tokens.empty());
        const RowMatrix change = textHeadImportance(plainBert, cased, none);
        QVERIFY(change.minCoeff() >= 0 && change.maxCoeff() > 0);
        Callbacks cancel;
        cancel.cancelled = [] { return true; };
        QVERIFY_THROWS_EXCEPTION(Cancelled, textHeadImportance(plainBert, cased, none, cancel));
    }

    // The text capture's axis: the tokens, sinks [CLS] and [SEP] for BERT, the first token for GPT-2.
    void headStatsOfTheCapture() {
        const TextFolder bert = loadTextFolder(kData / "bert-mlm");
        const TextEncoding e = bert.encode("hello world");
        const AttentionCapture c = textCapture(bert, e.ids, bert.forward(e.ids).attentions);
        QCOMPARE(c.axes.size(), size_t(1));
        QCOMPARE(c.axes[0].sinks, (std::vector<int>{0, static_cast<int>(e.ids.size()) - 1}));
        QCOMPARE(c.axes[0].labels.front(), std::string("[CLS]"));
        QVERIFY(c.blocks.front().selfAttention());
        const TextFolder gpt = loadTextFolder(kData / "gpt2");
        const std::vector<int> ids = firstIds(kData / "gpt2");
        QCOMPARE(textCapture(gpt, ids, gpt.forward(ids).attentions).axes[0].sinks, std::vector<int>{0});
        QCOMPARE(textAttentionKind(gpt), AttentionKind::DecoderSelf);
        QCOMPARE(textAttentionKind(bert), AttentionKind::EncoderSelf);
        const HeadStats s = captureHeadStats(c, AttentionKind::EncoderSelf);
        QCOMPARE(s.layers(), bert.layers());
        QVERIFY(std::isnan(s.alignment(0, 0)));
        QVERIFY(s.sink(0, 0) >= 0 && s.sink(0, 0) <= 1);
    }
};

QTEST_GUILESS_MAIN(TestTextLenses)
#include "test_text_lenses.moc"
