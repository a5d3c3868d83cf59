// VitModel on DINOv2 folders (issue 43) against transformers v4.50.3's own Dinov2Model,
// Dinov2WithRegistersModel, their ForImageClassification heads and BitImageProcessor
// (tools/golden/make_dinov2_fixtures.py → tests/data/dinov2): the resized picture, the pixels, every head's
// attention, the last hidden state, the pooled CLS and the logits within 1e-4 — at the processor's size (the
// 5×5 position table interpolated to 4×4), at the trained size, and non-square without the crop (4×6 / 6×4);
// plain and SwiGLU MLPs; registers between CLS and the patches; every layer's token norms (the stream before
// the final norm, from hidden_states); bad folders refused with one message.

#include "core/analysis/attention_captures.h"
#include "core/analysis/attention_maps.h"
#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"
#include "support/error_of.h"
#include "support/vit_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>

using namespace attnlens;

namespace {

constexpr double kTol = 1e-4;

std::filesystem::path dinoDir() {
    return std::filesystem::path(ATTNLENS_TEST_DATA) / "dinov2";
}

// The processor as each golden case ran it: the folder's own, the trained size, or non-square uncropped.
ImageProcessorConfig processorFor(const VitModel& model, const std::string& kase) {
    ImageProcessorConfig p = model.processor();
    if (kase == "trained") {
        p.shortestEdge = 23;
        p.cropHeight = p.cropWidth = 20;
    } else if (kase == "nonsquare") {
        p.shortestEdge = 16;
        p.doCenterCrop = false;
    }
    return p;
}

std::filesystem::path copyFolder(const QTemporaryDir& tmp, const std::string& name) {
    const std::filesystem::path dst = std::filesystem::path(tmp.path().toStdString()) / name;
    std::filesystem::copy(dinoDir() / name, dst, std::filesystem::copy_options::recursive);
    return dst;
}

} // namespace

class TestDinov2Model : public QObject {
    Q_OBJECT
private slots:
    void matchesTransformers_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("image");
        QTest::addColumn<QString>("kase");
        for (const char* model : {"dinov2", "dinov2-swiglu", "dinov2-reg", "dinov2-cls", "dinov2-reg-cls"})
            for (const char* image : {"photo_97x61", "portrait_45x71"})
                for (const char* kase : {"default", "trained", "nonsquare"})
                    QTest::addRow("%s %s %s", model, image, kase) << model << image << kase;
    }
    void matchesTransformers() {
        QFETCH(QString, model);
        QFETCH(QString, image);
        QFETCH(QString, kase);
        const std::string m = model.toStdString(), k = kase.toStdString();
        const TensorFile golden =
            TensorFile::open(dinoDir() / m / ("golden_" + image.toStdString() + "_" + k + ".safetensors"));
        const VitModel vit = *VitModel::load(dinoDir() / m);
        const ImageU8 picture = loadImage(dinoDir() / "images" / (image.toStdString() + ".png"));
        const PreprocessedImage in = preprocessImage(picture, processorFor(vit, k), 3);
        const Tensor resized = golden.load("resized"); // [H, W, C], the processor's uint8 values
        QCOMPARE(int64_t(in.resized.height), resized.dim(0));
        QCOMPARE(int64_t(in.resized.width), resized.dim(1));
        for (int64_t i = 0; i < resized.numel(); ++i)
            QCOMPARE(float(in.resized.pixels[size_t(i)]), resized.data()[i]);
        vittest::compareWithin(in.pixels, golden.load("pixels"), 1e-6, "pixels");

        const VitOutput out = vit.forward(in.pixels);
        vittest::compareWithin(out.attentions, golden.load("attentions"), kTol, "attentions");
        vittest::compareWithin(out.lastHidden, golden.load("hidden"), kTol, "hidden");
        vittest::compareWithin(out.pooled, golden.load("pooled"), kTol, "pooled");
        const Tensor norms = golden.load("token_norms"); // [L, T], the stream's scale: relative tolerance
        const float scale = std::max(1.0f, *std::max_element(norms.data(), norms.data() + norms.numel()));
        vittest::compareWithin(out.tokenNorms, norms, kTol * scale, "token norms");
        if (vit.hasClassifier()) // with registers: the head over the patches (transformers#37836)
            vittest::compareWithin(
                out.logits, golden.load(vit.config().numRegisterTokens ? "logits_patch_mean" : "logits"),
                kTol, "logits");
        const int prefix = vit.config().prefixTokens();
        QCOMPARE(out.attentions.dim(2), int64_t(prefix + out.gridRows * out.gridCols));
    }

    void configOfEachKind() {
        const VitConfig plain = VitModel::load(dinoDir() / "dinov2")->config();
        QVERIFY(plain.family == VitFamily::Dinov2 && !plain.swiglu && plain.numRegisterTokens == 0);
        QCOMPARE(plain.intermediateSize, 128); // hidden 32 × mlp_ratio 4
        QCOMPARE(plain.layerNormEps, 1e-6f);
        const VitConfig swiglu = VitModel::load(dinoDir() / "dinov2-swiglu")->config();
        QVERIFY(swiglu.swiglu && !swiglu.qkvBias);
        QCOMPARE(swiglu.intermediateSize, 88); // int(128 · 2 / 3) = 85, rounded up to a multiple of 8
        const VitConfig reg = VitModel::load(dinoDir() / "dinov2-reg")->config();
        QVERIFY(reg.family == VitFamily::Dinov2Registers);
        QCOMPARE(reg.numRegisterTokens, 4);
        QCOMPARE(reg.prefixTokens(), 5);
        const auto bit = VitModel::load(dinoDir() / "dinov2")->processor();
        QCOMPARE(bit.shortestEdge, 18);
        QVERIFY(bit.doCenterCrop);
        QCOMPARE(bit.resample, ResampleFilter::Bicubic);
    }

    // The registers sit between CLS and the patches: the grid, the maps and the capture skip them.
    void registersBesideTheGrid() {
        const auto vit = VitModel::load(dinoDir() / "dinov2-reg");
        const VitResult r = vit->run(loadImage(dinoDir() / "images" / "photo_97x61.png"));
        QCOMPARE(r.grid.prefixTokens(), 5);
        QCOMPARE(r.grid.registers(), 4);
        QCOMPARE(r.grid.tokenLabel(0), std::string("CLS"));
        QCOMPARE(r.grid.tokenLabel(1), std::string("reg0"));
        QCOMPARE(r.grid.tokenLabel(4), std::string("reg3"));
        QCOMPARE(r.grid.tokenLabel(5), std::string("r0c0"));
        QCOMPARE(r.grid.tokenOfPatch(0), 5);
        QCOMPARE(r.grid.patchOfToken(2), -3);
        // CLS's map over the patches: the attention row from token 5 on, laid out row-major.
        const RowMatrix a = layerAttention(r.output.attentions, 1, HeadSelection{});
        const RowMatrix grid = tokensToGrid(a.row(0).transpose(), r.grid.rows(), r.grid.cols(), 5);
        QCOMPARE(grid(0, 1), a(0, 6));
        const AttentionCapture capture = vitCapture(r, vit->config().patchSize);
        QCOMPARE(capture.axes[0].size(), 5 + r.grid.count());
        QCOMPARE(capture.axes[0].labels[2], std::string("reg1"));
        QCOMPARE(capture.axes[0].sinks, (std::vector<int>{0, 1, 2, 3, 4}));
    }

    void classifierHasNoPerTokenReadout() {
        const auto vit = VitModel::load(dinoDir() / "dinov2-cls");
        QCOMPARE(vit->numLabels(), 3);
        QVERIFY(errorOf([&] { vit->classify(RowMatrix::Zero(2, 32)); }).contains("mean of the patches"));
    }

    void badFoldersRefused() {
        QTemporaryDir tmp;
        const auto dir = copyFolder(tmp, "dinov2");
        JsonConfig config(dir / "config.json");
        Json json = config.json();
        json["mlp_ratio"] = -1;
        std::ofstream(dir / "config.json") << json.dump();
        QVERIFY(errorOf([&] { VitModel::load(dir); }).contains("mlp_ratio"));
        // A register folder whose checkpoint lacks the registers (a plain DINOv2 relabelled).
        const auto fake = copyFolder(tmp, "dinov2-reg");
        std::filesystem::copy_file(dinoDir() / "dinov2" / "model.safetensors", fake / "model.safetensors",
                                   std::filesystem::copy_options::overwrite_existing);
        QVERIFY(errorOf([&] { VitModel::load(fake); }).contains("register_tokens"));
    }
};

QTEST_GUILESS_MAIN(TestDinov2Model)
#include "test_dinov2_model.moc"
