// Model folders that hold only a PyTorch checkpoint (pytorch_model.bin / diffusion_pytorch_model.bin), as
// many hub downloads do: each .bin (written by torch.save in tools/golden/make_torch_checkpoints.py from a
// safetensors fixture's state dict, zip and legacy formats, F32 / F16 / BF16 storages, Marian's embeddings
// tied to one storage) is put beside that fixture's other files, and every output must equal the safetensors
// folder's exactly — and so match the goldens of the independent PyTorch references (checked here too).

#include "core/diffusion/diffusion_model.h"
#include "core/io/model_folder.h"
#include "core/io/tensor_file.h"
#include "core/models/marian_model.h"
#include "core/models/unet_model.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"
#include "marian_test_util.h"
#include "support/unet_fixtures.h"
#include "support/vit_fixtures.h"

#include <QTest>

#include <filesystem>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;

// Exactly equal, element for element (same weights, same arithmetic).
bool identical(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && a.numel() > 0 && a.toVector() == b.toVector();
}

} // namespace

class TestTorchCheckpointModels : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void marian_data();
    void marian();
    void vit_data();
    void vit();
    void unet_data();
    void unet();
    void safetensorsPreferredWhenBothExist();
    void damagedBinNamesTheFile();

private:
    // `source`'s files but its safetensors checkpoint, and `bin` as `binName`.
    std::filesystem::path binFolder(const std::filesystem::path& source, const std::string& bin,
                                    const std::string& binName) {
        const std::filesystem::path dir =
            std::filesystem::path(m_dir.path().toStdString()) / (bin + ".folder");
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        for (const auto& entry : std::filesystem::directory_iterator(source))
            if (entry.path().extension() != ".safetensors" ||
                entry.path().filename().string().rfind("golden", 0) == 0)
                std::filesystem::copy(entry.path(), dir / entry.path().filename());
        std::filesystem::copy_file(kData / "torch" / bin, dir / binName);
        return dir;
    }
    QTemporaryDir m_dir;
};

void TestTorchCheckpointModels::marian_data() {
    QTest::addColumn<QString>("bin");
    QTest::newRow("zip, tied embeddings") << "marian-tiny-f32.zip.bin";
    QTest::newRow("legacy, tied embeddings") << "marian-tiny-f32.legacy.bin";
}

void TestTorchCheckpointModels::marian() {
    QFETCH(QString, bin);
    const auto source = marian_test::variantDir("tiny-f32");
    const auto dir = binFolder(source, bin.toStdString(), "pytorch_model.bin");
    QCOMPARE(inspectModelFolder(dir).weights.filename().string(), std::string("pytorch_model.bin"));
    const auto fromBin = MarianModel::load(dir);
    const auto fromSafetensors = MarianModel::load(source);
    const Json g = marian_test::golden("tiny-f32")["cases"][0];
    const auto gt = marian_test::goldenTensors("tiny-f32");
    const auto src = marian_test::ids(g["source_ids"]);
    const auto a = fromBin->encode(src), b = fromSafetensors->encode(src);
    QVERIFY(identical(a.selfAttention, b.selfAttention));
    QVERIFY(marian_test::maxAbsDiff(a.selfAttention, gt.load("s0.encoder")) < 1e-4f);
    const auto greedy = marian_test::ids(g["greedy"]["ids"]);
    std::vector<int> decIn{fromBin->config().decoderStartTokenId};
    decIn.insert(decIn.end(), greedy.begin(), greedy.end() - 1);
    const auto fa = fromBin->decodeForced(decIn, a), fb = fromSafetensors->decodeForced(decIn, b);
    QVERIFY(identical(fa.logits, fb.logits));
    QVERIFY(identical(fa.selfAttention, fb.selfAttention));
    QVERIFY(identical(fa.crossAttention, fb.crossAttention));
    QVERIFY(marian_test::maxAbsDiff(fa.logits, gt.load("s0.logits")) < 1e-4f);
    QVERIFY(marian_test::maxAbsDiff(fa.crossAttention, gt.load("s0.cross")) < 1e-4f);
}

void TestTorchCheckpointModels::vit_data() {
    QTest::addColumn<QString>("bin");
    QTest::addColumn<QString>("model");
    QTest::newRow("zip, BF16 storages") << "vit-rgb-bf16.zip.bin"
                                        << "rgb-bf16";
    QTest::newRow("legacy, F32") << "vit-rgb.legacy.bin"
                                 << "rgb";
}

void TestTorchCheckpointModels::vit() {
    QFETCH(QString, bin);
    QFETCH(QString, model);
    const auto source = vittest::modelDir(model.toStdString());
    const auto dir = binFolder(source, bin.toStdString(), "pytorch_model.bin");
    const auto fromBin = VitModel::load(dir);
    const auto fromSafetensors = VitModel::load(source);
    const Tensor pixels = vittest::golden(model.toStdString(), "photo_97x61", "pixels");
    VitRunOptions options;
    const VitOutput a = fromBin->forward(pixels, options), b = fromSafetensors->forward(pixels, options);
    QVERIFY(identical(a.logits, b.logits));
    QVERIFY(identical(a.attentions, b.attentions));
    const Tensor golden = vittest::golden(model.toStdString(), "photo_97x61", "attentions");
    QVERIFY(vittest::maxAbsDiff(a.attentions.data(), golden.data(), golden.numel()) < 1e-4);
    const Tensor logits = vittest::golden(model.toStdString(), "photo_97x61", "logits");
    QVERIFY(vittest::maxAbsDiff(a.logits.data(), logits.data(), logits.numel()) < 1e-4);
}

void TestTorchCheckpointModels::unet_data() {
    QTest::addColumn<QString>("bin");
    QTest::addColumn<QString>("fixture");
    QTest::newRow("zip, F16 storages") << "unet-bare-head8-f16.zip.bin"
                                       << "bare-head8-f16";
    QTest::newRow("legacy, F32") << "unet-bare-head8.legacy.bin"
                                 << "bare-head8";
}

void TestTorchCheckpointModels::unet() {
    QFETCH(QString, bin);
    QFETCH(QString, fixture);
    const auto source = unettest::fixture(fixture.toStdString());
    const auto dir = binFolder(source, bin.toStdString(), "diffusion_pytorch_model.bin");
    const auto fromBin = loadDiffusionModel(dir);
    const auto fromSafetensors = loadDiffusionModel(source);
    const auto g = unettest::golden(source / "golden.safetensors");
    const Tensor sample = g.file.load("t500.sample");
    const UNetOutput a = fromBin.unet->forward(sample, 500.0f, std::nullopt);
    const UNetOutput b = fromSafetensors.unet->forward(sample, 500.0f, std::nullopt);
    QVERIFY(identical(a.noisePred, b.noisePred));
    QCOMPARE(a.attentions.size(), b.attentions.size());
    for (size_t i = 0; i < a.attentions.size(); ++i)
        QVERIFY(identical(a.attentions[i].weights, b.attentions[i].weights));
    QVERIFY(unettest::maxAbsDiff(a.noisePred, g.file.load("t500.noise_pred")) < 1e-4);
}

void TestTorchCheckpointModels::safetensorsPreferredWhenBothExist() {
    // As transformers does: model.safetensors wins. The .bin here is the BF16 ViT, which would give other
    // logits.
    const auto source = vittest::modelDir("rgb");
    const auto dir = binFolder(source, "vit-rgb-bf16.zip.bin", "pytorch_model.bin");
    std::filesystem::copy_file(source / "model.safetensors", dir / "model.safetensors");
    QCOMPARE(findWeightsFile(dir, "model").filename().string(), std::string("model.safetensors"));
    const Tensor pixels = vittest::golden("rgb", "photo_97x61", "pixels");
    QVERIFY(identical(VitModel::load(dir)->forward(pixels, {}).logits,
                      VitModel::load(source)->forward(pixels, {}).logits));
    std::filesystem::remove(dir / "model.safetensors");
    QVERIFY(!identical(VitModel::load(dir)->forward(pixels, {}).logits,
                       VitModel::load(source)->forward(pixels, {}).logits));
}

void TestTorchCheckpointModels::damagedBinNamesTheFile() {
    const auto dir = binFolder(marian_test::variantDir("tiny-f32"), "hostile.zip.bin", "pytorch_model.bin");
    try {
        MarianModel::load(dir);
        QFAIL("a hostile pytorch_model.bin was loaded");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("pytorch_model.bin") &&
                     QString(e.what()).contains("posix.system"),
                 e.what());
    }
}

QTEST_GUILESS_MAIN(TestTorchCheckpointModels)
#include "test_torch_checkpoint_models.moc"
