// MarianModel against the independent PyTorch reference (tools/golden/marian_reference.py):
// encoder/decoder/cross attention and logits of a teacher-forced pass to 1e-4, rows captured step by
// step equal the teacher-forced pass, loader errors.

#include "core/io/safetensors.h"
#include "core/models/marian_model.h"
#include "core/util/error.h"
#include "marian_test_util.h"

#include <QTest>

#include <fstream>

using namespace attnlens;
using namespace marian_test;

namespace {

// Tolerance: docs/architecture.md's 1e-4 absolute for float32 weights (both sides compute in float32).
constexpr float kTol = 1e-4f;

void copyFolder(const std::filesystem::path& from, const std::filesystem::path& to) {
    std::filesystem::remove_all(to);
    std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
}

} // namespace

class TestMarianModel : public QObject {
    Q_OBJECT
private slots:
    void config();
    void goldens_data();
    void goldens();
    void stepRowsEqualForcedPass_data();
    void stepRowsEqualForcedPass();
    void attentionRowsSumToOne();
    void missingAndMisshapedTensorsInOneError();
    void corruptSafetensors();
    void bf16Checkpoint();
    void tooLongInput();
    void badTokenIds();
};

void TestMarianModel::config() {
    const auto c = MarianConfig::fromFolder(variantDir("tiny-f32"));
    QCOMPARE(c.dModel, 32);
    QCOMPARE(c.encoderLayers, 2);
    QCOMPARE(c.decoderHeads, 4);
    QCOMPARE(c.activation, Activation::Silu);
    QVERIFY(c.scaleEmbedding);
    QCOMPARE(c.generation.numBeams, 3);
    QCOMPARE(c.generation.maxLength, 64);
    QCOMPARE(c.generation.forcedEosTokenId.value_or(-1), 0);
    QCOMPARE(c.generation.badWordsIds.size(), size_t(1));
    QCOMPARE(c.generation.decoderStartTokenId, int(c.vocabSize - 1));
}

void TestMarianModel::goldens_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<int>("sentence");
    for (const char* v : {"tiny-f32", "tiny-f16", "tiny-unshared"})
        for (int s = 0; s < 2; ++s)
            QTest::newRow((std::string(v) + "/s" + std::to_string(s)).c_str()) << v << s;
}

void TestMarianModel::goldens() {
    QFETCH(QString, variant);
    QFETCH(int, sentence);
    const std::string v = variant.toStdString();
    const auto model = MarianModel::load(variantDir(v));
    const Json g = golden(v)["cases"][sentence];
    const auto gt = goldenTensors(v);
    const std::string p = "s" + std::to_string(sentence) + ".";

    const auto src = ids(g["source_ids"]);
    const auto enc = model->encode(src);
    QCOMPARE(enc.selfAttention.shape(), (Shape{2, 4, int64_t(src.size()), int64_t(src.size())}));
    QVERIFY2(maxAbsDiff(enc.selfAttention, gt.load(p + "encoder")) < kTol, "encoder attention");

    const auto greedy = ids(g["greedy"]["ids"]);
    std::vector<int> decIn{model->config().decoderStartTokenId};
    decIn.insert(decIn.end(), greedy.begin(), greedy.end() - 1);
    const auto forced = model->decodeForced(decIn, enc);
    const float dl = maxAbsDiff(forced.logits, gt.load(p + "logits"));
    QVERIFY2(dl < kTol, qPrintable(QString("logits differ by %1").arg(dl)));
    QVERIFY2(maxAbsDiff(forced.selfAttention, gt.load(p + "decoder")) < kTol, "decoder self-attention");
    QVERIFY2(maxAbsDiff(forced.crossAttention, gt.load(p + "cross")) < kTol, "cross attention");
}

void TestMarianModel::stepRowsEqualForcedPass_data() {
    goldens_data();
}

void TestMarianModel::stepRowsEqualForcedPass() {
    QFETCH(QString, variant);
    QFETCH(int, sentence);
    const std::string v = variant.toStdString();
    const auto model = MarianModel::load(variantDir(v));
    const Json g = golden(v)["cases"][sentence];
    const auto src = ids(g["source_ids"]);
    const auto greedy = ids(g["greedy"]["ids"]);
    const auto enc = model->encode(src);
    std::vector<int> decIn{model->config().decoderStartTokenId};
    decIn.insert(decIn.end(), greedy.begin(), greedy.end() - 1);
    const auto forced = model->decodeForced(decIn, enc);
    auto cache = model->newCache();
    const int64_t T = int64_t(decIn.size()), S = int64_t(src.size()), V = model->config().decoderVocabSize;
    for (int64_t t = 0; t < T; ++t) {
        const auto out = model->decodeStep(decIn[t], enc, cache);
        QCOMPARE(cache.length(), t + 1);
        QCOMPARE(out.selfAttention.shape(), (Shape{2, 4, t + 1}));
        QCOMPARE(out.crossAttention.shape(), (Shape{2, 4, S}));
        QCOMPARE(int64_t(out.logits.size()), V);
        float d = 0;
        for (int64_t i = 0; i < V; ++i)
            d = std::max(d, std::abs(out.logits[i] - forced.logits.at({t, i})));
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h) {
                for (int64_t k = 0; k <= t; ++k)
                    d = std::max(
                        d, std::abs(out.selfAttention.at({l, h, k}) - forced.selfAttention.at({l, h, t, k})));
                for (int64_t k = t + 1; k < T; ++k)
                    QCOMPARE(forced.selfAttention.at({l, h, t, k}), 0.0f); // causal
                for (int64_t s = 0; s < S; ++s)
                    d = std::max(d, std::abs(out.crossAttention.at({l, h, s}) -
                                             forced.crossAttention.at({l, h, t, s})));
            }
        // Same math, different GEMM shapes ([1, D] vs [T, D]): only float32 rounding may differ.
        QVERIFY2(d < 5e-5f, qPrintable(QString("step %1 differs by %2").arg(t).arg(d)));
        // greedy golden: argmax of the step logits with pad banned is the next golden token
        std::vector<float> lg = out.logits;
        lg[V - 1] = -INFINITY;
        if (t + 1 < T) QCOMPARE(int(std::max_element(lg.begin(), lg.end()) - lg.begin()), greedy[t]);
    }
}

void TestMarianModel::attentionRowsSumToOne() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    const std::vector<int> src{9, 12, 85, 19, 5, 0};
    const auto enc = model->encode(src);
    const auto m = enc.selfAttention.matrix(); // [L*H*S, S]
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        QVERIFY(std::abs(m.row(r).sum() - 1.0f) < 1e-5f);
    auto cache = model->newCache();
    const auto out = model->decodeStep(model->config().decoderStartTokenId, enc, cache);
    const auto c = out.crossAttention.matrix();
    for (Eigen::Index r = 0; r < c.rows(); ++r)
        QVERIFY(std::abs(c.row(r).sum() - 1.0f) < 1e-5f);
    QCOMPARE(out.selfAttention.at({1, 3, 0}), 1.0f); // the first decoder position sees only itself
}

void TestMarianModel::missingAndMisshapedTensorsInOneError() {
    const auto dir = scratchDir("attnlens_marian_broken");
    copyFolder(variantDir("tiny-f32"), dir);
    const auto file = TensorFile::open(dir / "model.safetensors");
    std::vector<TensorToWrite> out;
    for (const auto& info : file.tensors()) {
        if (info.name == "model.encoder.layers.1.fc1.weight") continue;               // missing
        if (info.name == "model.decoder.layers.0.encoder_attn.k_proj.bias") continue; // missing
        Tensor t = file.load(info).clone();
        if (info.name == "model.decoder.layers.1.self_attn_layer_norm.weight") t = Tensor({31}); // mis-shaped
        out.push_back({info.name, t, DType::F32});
    }
    writeSafeTensors(dir / "model.safetensors.tmp", out);
    std::filesystem::rename(dir / "model.safetensors.tmp", dir / "model.safetensors");
    try {
        MarianModel::load(dir);
        QFAIL("expected an error");
    } catch (const Error& e) {
        const QString msg = e.what();
        QVERIFY2(msg.contains("3 weight problems"), qPrintable(msg));
        QVERIFY2(msg.contains("model.encoder.layers.1.fc1.weight' is missing"), qPrintable(msg));
        QVERIFY2(msg.contains("model.decoder.layers.0.encoder_attn.k_proj.bias' is missing"),
                 qPrintable(msg));
        QVERIFY2(msg.contains("self_attn_layer_norm.weight' has shape [31], expected [32]"), qPrintable(msg));
    }
    std::filesystem::remove_all(dir);
}

void TestMarianModel::corruptSafetensors() {
    const auto dir = scratchDir("attnlens_marian_corrupt");
    copyFolder(variantDir("tiny-f32"), dir);
    std::filesystem::resize_file(dir / "model.safetensors", 5000); // truncated
    try {
        MarianModel::load(dir);
        QFAIL("expected an error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("model.safetensors"), e.what());
    }
    std::filesystem::remove_all(dir);
}

void TestMarianModel::bf16Checkpoint() {
    // The BF16 path: the same weights stored as BF16 and as F32 (the BF16-rounded values) must give
    // identical results, and stay close to the original F32 model.
    const auto bf16Dir = scratchDir("attnlens_marian_bf16"),
               roundedDir = scratchDir("attnlens_marian_bf16_as_f32");
    copyFolder(variantDir("tiny-f32"), bf16Dir);
    copyFolder(variantDir("tiny-f32"), roundedDir);
    {
        const auto file = TensorFile::open(variantDir("tiny-f32") / "model.safetensors");
        std::vector<TensorToWrite> out;
        for (const auto& info : file.tensors())
            out.push_back({info.name, file.load(info).clone(), DType::BF16});
        writeSafeTensors(bf16Dir / "model.safetensors", out);
        const auto bf = TensorFile::open(bf16Dir / "model.safetensors");
        QCOMPARE(bf.tensors().front().dtype, DType::BF16);
        std::vector<TensorToWrite> rounded;
        for (const auto& info : bf.tensors())
            rounded.push_back({info.name, bf.load(info).clone(), DType::F32});
        writeSafeTensors(roundedDir / "model.safetensors", rounded);
    }
    const auto a = MarianModel::load(bf16Dir), b = MarianModel::load(roundedDir),
               f = MarianModel::load(variantDir("tiny-f32"));
    const std::vector<int> src{9, 12, 85, 19, 25, 4, 0};
    const std::vector<int> dec{a->config().decoderStartTokenId, 5, 7};
    const auto ea = a->encode(src), eb = b->encode(src), ef = f->encode(src);
    const auto fa = a->decodeForced(dec, ea), fb = b->decodeForced(dec, eb), ff = f->decodeForced(dec, ef);
    QCOMPARE(maxAbsDiff(fa.logits, fb.logits), 0.0f);
    QCOMPARE(maxAbsDiff(ea.selfAttention, eb.selfAttention), 0.0f);
    QVERIFY(maxAbsDiff(fa.logits, ff.logits) < 0.5f); // bf16 keeps 8 bits of mantissa
    QVERIFY(maxAbsDiff(fa.logits, ff.logits) > 0.0f); // and it did round something
    std::filesystem::remove_all(bf16Dir);
    std::filesystem::remove_all(roundedDir);
}

void TestMarianModel::tooLongInput() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    const std::vector<int> src(65, 5); // max_position_embeddings is 64
    try {
        model->encode(src);
        QFAIL("expected an error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("too long: 65 tokens") && QString(e.what()).contains("64"),
                 e.what());
    }
    QCOMPARE(model->encode(std::vector<int>(64, 5)).length, 64); // the limit itself is fine
}

void TestMarianModel::badTokenIds() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    QVERIFY_THROWS_EXCEPTION(Error, model->encode(std::vector<int>{5, 100000}));
    QVERIFY_THROWS_EXCEPTION(Error, model->encode(std::vector<int>{}));
}

QTEST_GUILESS_MAIN(TestMarianModel)
#include "test_marian_model.moc"
