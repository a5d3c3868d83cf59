// The logit lens beyond the text models (issue 42, core/analysis/model_lenses.h): on a Marian fixture written
// by transformers' save_pretrained and the built-in translator, the decoder's last row is the model's own
// logits (decodeForced) and its first the readout of the decoder's embeddings, at every position; on the
// grey ViT fixture and the built-in ViT the CLS token's last row is the model's own classification; bad
// positions, classes and a ViT without a classifier are one clear error; `attnlens-cli lens --logit-lens`
// takes both folders and prints the same numbers.

#include "core/analysis/model_lenses.h"
#include "core/io/json_file.h"
#include "core/models/marian_folder.h"
#include "core/util/error.h"
#include "support/cli_run.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;
const std::filesystem::path kModels = kData / "../../resources/models";

int argmaxOf(const float* row, int64_t n) {
    return int(std::max_element(row, row + n) - row);
}

} // namespace

class TestModelLenses : public QObject {
    Q_OBJECT
private slots:
    void marianDecoder_data() {
        QTest::addColumn<QString>("folder");
        QTest::newRow("fixture") << QString::fromStdString((kData / "marian/tiny-f32").string());
        QTest::newRow("built-in") << QString::fromStdString((kModels / "marian-de-en-tiny").string());
    }
    void marianDecoder() {
        QFETCH(QString, folder);
        const auto m = MarianModel::load(folder.toStdString());
        const int v = int(m->config().decoderVocabSize);
        const std::vector<int> source{5 % v, 17 % v, 33 % v, m->config().eosTokenId};
        const MarianEncoderOutput enc = m->encode(source, false);
        const std::vector<int> input{m->config().decoderStartTokenId, 7, 19, 4};
        const MarianForcedOutput forced = m->decodeForced(input, enc);
        const std::vector<int> positions{0, 1, 2, 3};
        const auto lenses = marianLogitLens(*m, enc, input, positions, {}, 3);
        const MarianEmbeddingParts parts = m->embeddingParts(input, MarianSide::Decoder);
        const RowMatrix first = m->readout(parts.tokens + parts.positions);
        for (size_t i = 0; i < positions.size(); ++i) {
            const LogitLens& lens = lenses[i];
            QCOMPARE(lens.position, positions[i]);
            QCOMPARE(int(lens.layers.size()), m->config().decoderLayers + 1);
            const float* logits = forced.logits.data() + int64_t(i) * v;
            QCOMPARE(lens.target, argmaxOf(logits, v));
            QCOMPARE(lens.layers.back().targetRank, 0);
            QVERIFY(std::abs(lens.layers.back().targetLogit - logits[lens.target]) < 1e-4);
            QVERIFY(std::abs(lens.layers.front().targetLogit - first(Eigen::Index(i), lens.target)) < 1e-4);
        }
        const std::vector<int> one{2};
        const std::vector<int> target{11};
        const auto followed = marianLogitLens(*m, enc, input, one, target, 3);
        QCOMPARE(followed[0].target, 11);
        QVERIFY(std::abs(followed[0].layers.back().targetLogit - forced.logits.data()[2 * v + 11]) < 1e-4);
        const std::vector<int> outside{4};
        QVERIFY_THROWS_EXCEPTION(Error, marianLogitLens(*m, enc, input, outside, {}, 3));
        const std::vector<int> badTarget{v};
        QVERIFY_THROWS_EXCEPTION(Error, marianLogitLens(*m, enc, input, one, badTarget, 3));
    }

    void vitClassifier_data() {
        QTest::addColumn<QString>("folder");
        QTest::newRow("fixture, grey") << QString::fromStdString((kData / "vit/grey").string());
        QTest::newRow("built-in") << QString::fromStdString((kModels / "vit-fashion-mnist").string());
    }
    void vitClassifier() {
        QFETCH(QString, folder);
        const auto m = VitModel::load(folder.toStdString());
        const auto input = preprocessImage(loadImage(kData / "vit/images/grey_13x9.png"), m->processor(),
                                           m->config().numChannels);
        VitRunOptions plain;
        plain.captureAttention = false;
        const VitOutput out = m->forward(input.pixels, plain);
        const LogitLens lens = vitLogitLens(*m, input.pixels, -1, 3);
        const int n = m->numLabels();
        QCOMPARE(int(lens.layers.size()), m->config().numLayers + 1);
        QCOMPARE(lens.position, 0);
        QCOMPARE(lens.target, argmaxOf(out.logits.data(), n));
        QVERIFY(std::abs(lens.layers.back().targetLogit - out.logits.data()[lens.target]) < 1e-4);
        QVERIFY(std::abs(lens.layers.back().targetProb - out.probabilities.data()[lens.target]) < 1e-5);
        const LogitLens other = vitLogitLens(*m, input.pixels, n - 1, 3);
        QCOMPARE(other.target, n - 1);
        QVERIFY(std::abs(other.layers.back().targetLogit - out.logits.data()[n - 1]) < 1e-4);
        QVERIFY_THROWS_EXCEPTION(Error, vitLogitLens(*m, input.pixels, n, 3));
        const auto bare = VitModel::load(kData / "vit/bare");
        QVERIFY_THROWS_EXCEPTION(Error, vitLogitLens(*bare, input.pixels, -1, 3));
    }

    void cli() {
        QTemporaryDir tmp;
        const QString json = tmp.filePath("lens.json");
        const QString marian = QString::fromStdString((kModels / "marian-de-en-tiny").string());
        auto r = clitest::run({"lens", "--logit-lens", "--model", marian, "--json", json, "Der Hund läuft."});
        QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith("translation: "), qPrintable(r.out));
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["lens"].size(), j["tokens"].size()); // every target position
        const QString vit = QString::fromStdString((kModels / "vit-fashion-mnist").string());
        const QString image = QString::fromStdString((kData / "vit/images/grey_13x9.png").string());
        r = clitest::run({"lens", "--logit-lens", "--model", vit, "--top", "2", "--json", json, image});
        QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("CLS"), qPrintable(r.out));
        const Json v = readJsonFile(json.toStdString());
        QCOMPARE(v["lens"][0]["layers"].back()["target_rank"].get<int>(), 0);
        QCOMPARE(v["lens"][0]["layers"][0]["top"].size(), size_t(2));
        clitest::expectError(clitest::run({"lens", "--contrib", "--model", vit, image}), "--logit-lens only");
        clitest::expectError(clitest::run({"lens", "--logit-lens", "--position", "1", "--model", vit, image}),
                             "CLS token only");
        clitest::expectError(
            clitest::run({"lens", "--logit-lens", "--target", "x", "--model", marian, "Hund"}),
            "--target-id");
    }
};

QTEST_GUILESS_MAIN(TestModelLenses)
#include "test_model_lenses.moc"
