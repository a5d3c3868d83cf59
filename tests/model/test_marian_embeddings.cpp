// MarianModel::embeddingParts (the Translate page's embeddings view): token rows × embed scale and
// the sinusoidal rows, checked against the checkpoint's own embedding table and the position formula
// written out here; word merge on a real fixture tokenization keeps attention rows summing to 1.

#include "core/analysis/word_merge.h"
#include "core/io/safetensors.h"
#include "core/models/marian_folder.h"
#include "core/util/error.h"
#include "marian_test_util.h"

#include <QTest>

#include <cmath>

using namespace attnlens;

class TestMarianEmbeddings : public QObject {
    Q_OBJECT
private slots:
    void partsMatchCheckpoint() {
        const auto dir = marian_test::variantDir("tiny-f32");
        const MarianFolder m = loadMarianFolder(dir);
        const auto& cfg = m.model->config();
        QVERIFY(cfg.scaleEmbedding);
        QCOMPARE(m.model->embedScale(), std::sqrt(static_cast<float>(cfg.dModel)));
        const std::vector<int> ids = {5, 17, 0};
        const MarianEmbeddingParts p = m.model->embeddingParts(ids, MarianSide::Encoder, 0);
        QCOMPARE(p.tokens.rows(), Eigen::Index(3));
        QCOMPARE(p.tokens.cols(), Eigen::Index(cfg.dModel));
        QCOMPARE(p.positions.rows(), Eigen::Index(3));
        const Tensor table =
            TensorFile::open(dir / "model.safetensors").load("model.shared.weight"); // [V, D]
        const int64_t D = cfg.dModel;
        for (size_t i = 0; i < ids.size(); ++i) {
            for (int64_t d = 0; d < D; ++d) {
                const float expected = table.at({ids[i], d}) * m.model->embedScale();
                QVERIFY(std::abs(p.tokens(Eigen::Index(i), d) - expected) < 1e-5f);
                // HF Marian sinusoid: column j < D/2 is sin(pos / 10000^(2j/D)), column D/2 + j the cos.
                const int64_t j = d < D / 2 ? d : d - D / 2;
                const double angle = double(i) / std::pow(10000.0, 2.0 * double(j) / double(D));
                const double pe = d < D / 2 ? std::sin(angle) : std::cos(angle);
                QVERIFY(std::abs(p.positions(Eigen::Index(i), d) - pe) < 1e-5);
            }
        }
        // Decoder side, shifted positions: row 0 is position 2.
        const MarianEmbeddingParts q = m.model->embeddingParts(std::vector<int>{5}, MarianSide::Decoder, 2);
        QVERIFY(std::abs(q.positions(0, 0) - std::sin(2.0)) < 1e-5);
        QVERIFY_THROWS_EXCEPTION(
            Error, m.model->embeddingParts(std::vector<int>{int(cfg.vocabSize)}, MarianSide::Encoder));
        QVERIFY_THROWS_EXCEPTION(Error,
                                 m.model->embeddingParts(ids, MarianSide::Encoder, cfg.maxPositions - 1));
    }

    void wordMergeOnFixtureTokens() {
        const MarianFolder m = loadMarianFolder(marian_test::variantDir("tiny-f32"));
        const MarianEncoding enc = m.tokenizer->encode("Wie geht es dir?");
        const WordGroups g = groupPieces(enc.pieces);
        QVERIFY(g.count() >= 2);
        QVERIFY(g.count() <= static_cast<int>(enc.pieces.size()));
        QCOMPARE(g.words.back(), std::string("</s>"));
        const MarianEncoderOutput out = m.model->encode(enc.ids);
        const RowMatrix merged = mergeToWords(out.selfAttention.slice2d({0, 0}), g, g); // [W, W]
        QCOMPARE(merged.rows(), Eigen::Index(g.count()));
        for (Eigen::Index r = 0; r < merged.rows(); ++r)
            QVERIFY(std::abs(merged.row(r).sum() - 1.0f) < 1e-5f);
    }
};

QTEST_GUILESS_MAIN(TestMarianEmbeddings)
#include "test_marian_embeddings.moc"
