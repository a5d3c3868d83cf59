// BERT and GPT-2 folders in the hub layout (tests/data/text, tools/golden/make_text_fixtures.py) against the
// independent PyTorch reference (tools/golden/text_reference.py): ids identical, attention and logits (and
// BERT's pooler) within 1e-4, GPT-2's greedy continuation identical when decoded step by step through the KV
// cache; bad configs refused naming the field.

#include "core/io/json_file.h"
#include "core/io/tensor_file.h"
#include "core/models/text_folder.h"
#include "core/models/text_generation.h"
#include "core/models/text_models.h"
#include "core/text/text_tokenizers.h"
#include "core/util/error.h"
#include "support/on_demand_check.h"
#include "support/text_fixtures.h"

#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

using texttest::kData;
using texttest::kTol;
using texttest::maxDiff;

using texttest::argmax;

// A copy of fixture `model` with config.json's `key` set to `value`.
std::filesystem::path withConfig(const QTemporaryDir& tmp, const std::string& model, const std::string& key,
                                 const Json& value) {
    return texttest::withConfig(tmp, kData / model, key, value);
}

} // namespace

class TestTextModels : public QObject {
    Q_OBJECT
private slots:
    void bertMatchesReference_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("BertForMaskedLM, gelu") << "bert-mlm";
        QTest::newRow("BertModel with pooler, relu, gamma/beta") << "bert-cased";
    }
    void bertMatchesReference() {
        QFETCH(QString, model);
        const auto dir = kData / model.toStdString();
        const auto tok = WordPieceTokenizer::load(dir);
        const auto bert = BertModel::load(dir);
        const auto golden = TensorFile::open(dir / "golden.safetensors");
        const Json cases = readJsonFile(dir / "golden.json")["cases"];
        for (size_t i = 0; i < cases.size(); ++i) {
            const auto e = tok->encode(cases[i]["text"].get<std::string>());
            QCOMPARE(e.ids, cases[i]["ids"].get<std::vector<int>>());
            const TextForward f = bert->forward(e.ids);
            const std::string p = "t" + std::to_string(i) + ".";
            const Tensor att = golden.load(p + "attentions");
            QCOMPARE(shapeToString(f.attentions.shape()), shapeToString(att.shape()));
            QVERIFY2(maxDiff(f.attentions.data(), att.data(), att.numel()) < kTol,
                     qPrintable(QString("case %1 attention").arg(i)));
            if (golden.contains(p + "logits")) {
                const Tensor logits = golden.load(p + "logits");
                QCOMPARE(f.logits.size(), logits.numel());
                QVERIFY2(maxDiff(f.logits.data(), logits.data(), logits.numel()) < kTol,
                         qPrintable(QString("case %1 logits").arg(i)));
            }
            if (golden.contains(p + "pooled")) {
                const Tensor pooled = golden.load(p + "pooled");
                QVERIFY(maxDiff(f.pooled.data(), pooled.data(), pooled.numel()) < kTol);
            }
        }
        QCOMPARE(bert->hasLmHead(), golden.contains("t0.logits"));
    }
    // The generation loop the Text page and the CLI share (core/models/text_generation.h): the reference's
    // greedy continuation; the model's last position ends it; an encoder refuses.
    void greedyContinuationMatchesReference() {
        const TextFolder folder = loadTextFolder(kData / "gpt2");
        const Json cases = readJsonFile(kData / "gpt2" / "golden.json")["cases"];
        for (const Json& c : cases) {
            const auto ids = c["ids"].get<std::vector<int>>();
            TextCache cache = folder.gpt2->newCache();
            const TextForward prompt = folder.gpt2->extend(ids, cache, true, true);
            int seen = 0;
            const std::vector<int> greedy = greedyContinuation(
                folder, prompt.logits, cache, 6, {},
                [&](const TextStep& s) {
                    ++seen;
                    QCOMPARE(s.forward.attentions.dim(3), static_cast<int64_t>(ids.size()) + seen);
                },
                StopAt::Count);
            QCOMPARE(greedy, c["greedy"].get<std::vector<int>>());
            QCOMPARE(seen, 6);
            QCOMPARE(cache.length(), static_cast<int64_t>(ids.size() + 6));
        }
        TextCache cache = folder.gpt2->newCache();
        const TextForward full = folder.gpt2->extend(std::vector<int>(62, 10), cache, true, true);
        QCOMPARE(greedyContinuation(folder, full.logits, cache, 5).size(), size_t(2)); // 64 positions
        const TextFolder bert = loadTextFolder(kData / "bert-mlm");
        TextCache none;
        QVERIFY_THROWS_EXCEPTION(Error, greedyStep(bert, full.logits, none));
    }

    void onDemandEqualsCaptured_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("BERT") << "bert-mlm";
        QTest::newRow("GPT-2") << "gpt2";
        QTest::newRow("GPT-2, unscaled") << "gpt2-bare";
    }
    void onDemandEqualsCaptured() {
        QFETCH(QString, model);
        const auto dir = kData / model.toStdString();
        const auto m = model.startsWith("bert") ? std::shared_ptr<const TextModel>(BertModel::load(dir))
                                                : std::shared_ptr<const TextModel>(Gpt2Model::load(dir));
        const auto ids = readJsonFile(dir / "golden.json")["cases"][0]["ids"].get<std::vector<int>>();
        texttest::checkOnDemand(*m, ids, {{1, 0}});
    }

    void gpt2MatchesReference_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("GPT2LMHeadModel") << "gpt2";
        QTest::newRow("GPT2Model, no prefix, unscaled attention") << "gpt2-bare";
    }
    void gpt2MatchesReference() {
        QFETCH(QString, model);
        const auto dir = kData / model.toStdString();
        const auto tok = ByteBpeTokenizer::load(dir);
        const auto gpt = Gpt2Model::load(dir);
        const auto golden = TensorFile::open(dir / "golden.safetensors");
        const Json cases = readJsonFile(dir / "golden.json")["cases"];
        const int64_t vocab = gpt->config().vocabSize;
        for (size_t i = 0; i < cases.size(); ++i) {
            const auto e = tok->encode(cases[i]["text"].get<std::string>());
            QCOMPARE(e.ids, cases[i]["ids"].get<std::vector<int>>());
            const TextForward f = gpt->forward(e.ids);
            const std::string p = "t" + std::to_string(i) + ".";
            const Tensor att = golden.load(p + "attentions"), logits = golden.load(p + "logits");
            QCOMPARE(shapeToString(f.attentions.shape()), shapeToString(att.shape()));
            QVERIFY2(maxDiff(f.attentions.data(), att.data(), att.numel()) < kTol,
                     qPrintable(QString("case %1 attention").arg(i)));
            QVERIFY2(maxDiff(f.logits.data(), logits.data(), logits.numel()) < kTol,
                     qPrintable(QString("case %1 logits").arg(i)));
            // Greedy, one token at a time through the cache: the reference's continuation, and each new row
            // equal to the full pass's last row.
            TextCache cache = gpt->newCache();
            TextForward step = gpt->extend(e.ids, cache, true, true);
            std::vector<int> generated, all = e.ids;
            for (int s = 0; s < 6; ++s) {
                const int next = argmax(step.logits.data(), vocab);
                generated.push_back(next);
                all.push_back(next);
                step = gpt->extend(std::vector<int>{next}, cache, true, true);
                const TextForward full = gpt->forward(all);
                QVERIFY(maxDiff(step.logits.data(), full.logits.data() + (full.logits.rows() - 1) * vocab,
                                vocab) < 5e-5);
                const int64_t t = static_cast<int64_t>(all.size());
                QCOMPARE(step.attentions.dim(3), t);
                QVERIFY(maxDiff(step.attentions.slice2d({1, 2}).data(),
                                full.attentions.slice2d({1, 2}).data() + (t - 1) * t, t) < 5e-5);
            }
            QCOMPARE(generated, cases[i]["greedy"].get<std::vector<int>>());
        }
    }
    // The Embeddings tab's parts (issue 38): GPT-2's token and position rows are the checkpoint's wte / wpe
    // rows, the input their sum; BERT's input is what its forward runs on (its goldens cover that).
    void embeddingParts() {
        const auto dir = kData / "gpt2";
        const auto gpt = Gpt2Model::load(dir);
        const std::vector<int> ids = {5, 17, 5, 2};
        const TextEmbeddingParts p = gpt->embeddingParts(ids);
        const auto weights = TensorFile::open(dir / "model.safetensors");
        const RowMatrix wte = weights.load("transformer.wte.weight").matrix(),
                        wpe = weights.load("transformer.wpe.weight").matrix();
        QCOMPARE(p.tokens.rows(), Eigen::Index(4));
        for (Eigen::Index i = 0; i < 4; ++i) {
            QVERIFY(p.tokens.row(i) == wte.row(ids[size_t(i)]));
            QVERIFY(p.positions.row(i) == wpe.row(i));
        }
        QVERIFY(p.input == p.tokens + p.positions);
        QVERIFY_THROWS_EXCEPTION(Error, gpt->embeddingParts(std::vector<int>{gpt->vocabSize()}));
        const auto bert = BertModel::load(kData / "bert-mlm");
        const TextEmbeddingParts b = bert->embeddingParts(ids);
        QCOMPARE(b.input.rows(), Eigen::Index(4));
        QVERIFY(b.tokens.row(0) == b.tokens.row(2)); // the same id
        QVERIFY(b.positions.row(0) != b.positions.row(2));
    }

    void badConfigsAndInputs() {
        QTemporaryDir tmp;
        auto refused = [](const std::function<void()>& load, const char* words) {
            try {
                load();
                return QString("accepted");
            } catch (const Error& e) {
                return QString(e.what()).contains(words) ? QString() : QString(e.what());
            }
        };
        QCOMPARE(refused([&] { Gpt2Model::load(withConfig(tmp, "gpt2", "add_cross_attention", true)); },
                         "add_cross_attention"),
                 QString());
        QCOMPARE(refused(
                     [&] {
                         BertModel::load(
                             withConfig(tmp, "bert-mlm", "position_embedding_type", "relative_key"));
                     },
                     "position_embedding_type"),
                 QString());
        QCOMPARE(refused([&] { BertModel::load(kData / "gpt2"); }, "model_type is 'gpt2', expected 'bert'"),
                 QString());
        QCOMPARE(refused([&] { Gpt2Model::load(withConfig(tmp, "gpt2", "n_layer", 3)); },
                         "transformer.h.2.ln_1.weight"),
                 QString());
        const auto gpt = Gpt2Model::load(kData / "gpt2");
        QCOMPARE(
            refused([&] { gpt->forward(std::vector<int>(65, 10)); }, "too long: 65 tokens, the model has 64"),
            QString());
        const auto bert = BertModel::load(kData / "bert-mlm");
        QCOMPARE(refused(
                     [&] {
                         bert->forward(std::vector<int>{2, 100000, 3});
                     },
                     "outside the vocabulary"),
                 QString());
        // scale_attn_by_inverse_layer_idx is supported: layer l's scores are divided by l + 1 as well.
        const auto inverse =
            Gpt2Model::load(withConfig(tmp, "gpt2", "scale_attn_by_inverse_layer_idx", true));
        const std::vector<int> ids{10, 20, 30};
        QVERIFY(inverse->forward(ids).logits != gpt->forward(ids).logits);
    }
};

QTEST_GUILESS_MAIN(TestTextModels)
#include "test_text_models.moc"
