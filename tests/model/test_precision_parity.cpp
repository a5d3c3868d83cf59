// bf16 "fast mode" beyond ViT and Marian (issue 45): the text families (float32 checkpoints packed in bf16,
// bfloat16 checkpoints multiplied where they lie) and the U-Net (convolutions and linear layers in bf16),
// each measured against float32 by core/analysis/precision_parity. A bf16 load changes the results a little
// and measurably; its float32 reference (Fp32ReferenceScope) is what an fp32 load computes; an fp32 load
// compares equal to itself.

#include "core/analysis/precision_parity.h"
#include "core/diffusion/diffusion_model.h"
#include "core/diffusion/t2i_pipeline.h"
#include "core/io/npy_reader.h"
#include "core/ops/gemm.h"
#include "core/ops/nn.h"
#include "support/lens_models.h"

#include <QTest>

#include <filesystem>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;

// Loads in bf16 (what the precision is read at), then puts float32 back for the rest of the suite.
struct Bf16Load {
    Bf16Load() { setLinearPrecision(LinearPrecision::Bf16); }
    ~Bf16Load() { setLinearPrecision(LinearPrecision::Fp32); }
};

double maxDiff(const RowMatrix& a, const RowMatrix& b) {
    return (a - b).cwiseAbs().maxCoeff();
}

} // namespace

class TestPrecisionParity : public QObject {
    Q_OBJECT
private slots:
    void textFamilies_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("storedBf16");
        QTest::newRow("GPT-2 (f32)") << "text/gpt2" << false;
        QTest::newRow("BERT, MLM head (f32)") << "text/bert-mlm" << false;
        QTest::newRow("BERT, no head (f32)") << "text/bert-cased" << false;
        QTest::newRow("Llama, tied (bf16 as stored)") << "llm/llama-mqa-tied-bf16" << true;
        QTest::newRow("Qwen2, bias (f32)") << "llm/qwen2-bias" << false;
    }
    void textFamilies() {
        QFETCH(QString, folder);
        QFETCH(bool, storedBf16);
        if (!bf16Available()) QSKIP("no bf16 kernel on this CPU (oneDNN with AVX-512)");
        const auto exact = lenstest::load(folder);
        std::shared_ptr<const TextModel> fast;
        {
            const Bf16Load bf16;
            fast = lenstest::load(folder);
        }
        // more than 8 rows: a bfloat16 checkpoint's prompt path (decoding steps stay exact)
        const auto ids = lenstest::sampleIds(*exact, std::min(24, exact->maxPositions()));
        const PrecisionParity p = textPrecisionParity(*fast, ids);
        const double scale = p.logitScale;
        QVERIFY2(p.maxAbsLogits > 1e-5 * scale,
                 qPrintable(QString("bf16 changed nothing: %1").arg(p.maxAbsLogits)));
        // random tiny fixtures have sharp attention, which amplifies bf16's rounding (measured: Δ logits
        // 0.5–7 % of their scale, Δ attention up to 0.09); what bf16 computes exactly is test_tensor_ops'
        // business
        QVERIFY2(p.maxAbsLogits < 0.1 * scale && p.maxAbsAttention > 0.0 && p.maxAbsAttention < 0.2,
                 qPrintable(QString::fromStdString(describeParity(p, textParityResult(*fast)))));
        QCOMPARE(p.quantity, std::string(exact->hasLmHead() ? "logits" : "hidden state"));
        QCOMPARE(p.reference.empty(), !exact->hasLmHead());

        // its float32 reference is the fp32 load's result (bit for bit where the weight is stored in bf16:
        // both multiply it on the same float32 kernel)
        const TextForward plain = exact->forward(ids, exact->hasLmHead());
        TextForward reference;
        {
            const Fp32ReferenceScope scope;
            reference = fast->forward(ids, exact->hasLmHead());
        }
        const RowMatrix& a = exact->hasLmHead() ? plain.logits : plain.hidden;
        const RowMatrix& b = exact->hasLmHead() ? reference.logits : reference.hidden;
        if (storedBf16)
            QVERIFY(a == b);
        else
            QVERIFY2(maxDiff(a, b) < 1e-4, qPrintable(QString::number(maxDiff(a, b))));
    }

    // An fp32 load against itself (no bf16 kernel needed): only the float32 kernels' summation order differs
    // (packed weight vs plain), the same result.
    void fp32AgainstItself_data() { textFamilies_data(); }
    void fp32AgainstItself() {
        QFETCH(QString, folder);
        const auto exact = lenstest::load(folder);
        const auto ids = lenstest::sampleIds(*exact, std::min(24, exact->maxPositions()));
        const PrecisionParity same = textPrecisionParity(*exact, ids);
        QVERIFY2(same.maxAbsLogits < 1e-5 * same.logitScale && same.attentionCompared &&
                     same.maxAbsAttention < 1e-5 && same.sameResult,
                 qPrintable(QString::fromStdString(describeParity(same, textParityResult(*exact)))));
        QCOMPARE(textParityResult(*exact),
                 std::string(exact->decoderOnly() ? "next token" : "top-1 at every position"));
    }

    // A bfloat16 checkpoint's decoding steps (≤ 8 rows) stay on the exact float32 kernel in bf16 mode.
    void bf16CheckpointDecodesExactly() {
        if (!bf16Available()) QSKIP("no bf16 kernel on this CPU (oneDNN with AVX-512)");
        const auto exact = lenstest::load("llm/llama-mqa-tied-bf16");
        std::shared_ptr<const TextModel> fast;
        {
            const Bf16Load bf16;
            fast = lenstest::load("llm/llama-mqa-tied-bf16");
        }
        const auto ids = lenstest::sampleIds(*exact, 6);
        QVERIFY(exact->forward(ids).logits == fast->forward(ids).logits);
    }

    void unet_data() {
        QTest::addColumn<QString>("folder");
        QTest::newRow("bare, 4 heads") << "bare-head8";
        QTest::newRow("class-conditional pipeline") << "cond-pipeline";
    }
    void unet() {
        QFETCH(QString, folder);
        if (!bf16Available()) QSKIP("no bf16 kernel on this CPU (oneDNN with AVX-512)");
        const auto dir = kData / "unet" / folder.toStdString();
        const DiffusionModel exact = loadDiffusionModel(dir);
        DiffusionModel fast;
        {
            const Bf16Load bf16;
            fast = loadDiffusionModel(dir);
        }
        Tensor sample = readNpy(dir / "sample_t500.npy");
        sample = sample.reshaped({sample.dim(1), sample.dim(2), sample.dim(3)});
        UNetConditioning conditioning;
        if (exact.unet->config().numClassEmbeds > 0) conditioning.classLabel = 2;
        const PrecisionParity p = unetPrecisionParity(*fast.unet, sample, 500.0f, conditioning);
        QCOMPARE(p.quantity, std::string("noise"));
        QVERIFY2(p.maxAbsLogits > 1e-5 * p.logitScale, qPrintable(QString::number(p.maxAbsLogits)));
        // measured: Δ noise 1.6–2 % of its scale, Δ attention up to 0.14 (sharp random maps, as above)
        QVERIFY2(p.maxAbsLogits < 0.05 * p.logitScale && p.maxAbsAttention > 0.0 && p.maxAbsAttention < 0.2,
                 qPrintable(QString::fromStdString(describeParity(p, ""))));
        QVERIFY(QString::fromStdString(describeParity(p, "")).startsWith("max |Δ noise| "));
        // the reference is the fp32 load's noise prediction
        const UNetOutput plain = exact.unet->forward(sample, 500.0f, conditioning);
        UNetOutput reference;
        {
            const Fp32ReferenceScope scope;
            reference = fast.unet->forward(sample, 500.0f, conditioning);
        }
        float worst = 0.0f;
        for (int64_t i = 0; i < plain.noisePred.numel(); ++i)
            worst = std::max(worst, std::abs(plain.noisePred.data()[i] - reference.noisePred.data()[i]));
        QVERIFY2(worst < 1e-4f, qPrintable(QString::number(worst)));
    }

    // A text-to-image pipeline: the prompt encoded and the U-Net run in each precision (the float32 side on
    // the float32 states), cross-attention compared.
    void textToImage() {
        if (!bf16Available()) QSKIP("no bf16 kernel on this CPU (oneDNN with AVX-512)");
        std::shared_ptr<const TextToImagePipeline> pipe;
        {
            const Bf16Load bf16;
            pipe = TextToImagePipeline::load(kData / "t2i" / "tiny-pipe");
        }
        PrecisionParity p;
        {
            const Bf16Load bf16; // the text encoder is read per run, in the precision of the moment
            p = t2iPrecisionParity(*pipe, "a red square");
        }
        qInfo("%s", describeParity(p, "").c_str());
        QCOMPARE(p.quantity, std::string("noise"));
        QVERIFY2(p.maxAbsLogits > 1e-6 * p.logitScale && p.maxAbsLogits < 0.05 * p.logitScale &&
                     p.maxAbsAttention > 0.0 && p.maxAbsAttention < 0.2,
                 qPrintable(QString::fromStdString(describeParity(p, ""))));
        // in float32 both sides are the same computation up to the kernels' summation order
        const auto exact = TextToImagePipeline::load(kData / "t2i" / "tiny-pipe");
        const PrecisionParity same = t2iPrecisionParity(*exact, "a red square");
        QVERIFY2(same.maxAbsLogits < 1e-4 * same.logitScale && same.maxAbsAttention < 1e-5,
                 qPrintable(QString::fromStdString(describeParity(same, ""))));
    }
};

QTEST_GUILESS_MAIN(TestPrecisionParity)
#include "test_precision_parity.moc"
