// VitModel against the independent PyTorch reference (tools/golden/vit_reference.py) on tiny seeded
// checkpoints: logits, every head's attention, hidden states, pooler, F16/BF16 storage, position
// interpolation, rollout; and checkpoint/config mismatches reported as one clear error.
//
// Tolerances: 1e-4 absolute on logits and attention (docs/architecture.md); float32 matmul order differs
// between Eigen and PyTorch, which on these sizes gives ~1e-6.

#include "core/analysis/attention_maps.h"
#include "core/io/json_file.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"
#include "support/error_of.h"
#include "support/vit_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

using namespace attnlens;

namespace {

constexpr double kTol = 1e-4;

void compareTensor(const Tensor& got, const Tensor& want, double tol, const char* what) {
    VIT_COMPARE_SHAPE(got, want);
    const double diff = vittest::maxAbsDiff(got.data(), want.data(), want.numel());
    qInfo("%s: max abs diff %.3g", what, diff);
    QVERIFY2(diff <= tol, what);
}

std::filesystem::path copyModel(const QTemporaryDir& tmp, const std::string& name) {
    const std::filesystem::path dst = std::filesystem::path(tmp.path().toStdString()) / name;
    std::filesystem::copy(vittest::modelDir(name), dst, std::filesystem::copy_options::recursive);
    return dst;
}

} // namespace

class TestVitModel : public QObject {
    Q_OBJECT
private slots:
    void matchesReference_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("image");
        QTest::addColumn<bool>("interpolate");
        QTest::newRow("rgb photo") << "rgb"
                                   << "photo_97x61" << false;
        QTest::newRow("rgb small") << "rgb"
                                   << "small_11x7" << false;
        QTest::newRow("grey photo") << "grey"
                                    << "photo_97x61" << false;
        QTest::newRow("grey file") << "grey"
                                   << "grey_13x9" << false;
        QTest::newRow("bare+pooler photo") << "bare"
                                           << "photo_97x61" << false;
        QTest::newRow("bare+pooler small") << "bare"
                                           << "small_11x7" << false;
        QTest::newRow("f16 weights") << "rgb-f16"
                                     << "photo_97x61" << false;
        QTest::newRow("bf16 weights") << "rgb-bf16"
                                      << "photo_97x61" << false;
        QTest::newRow("interpolated positions 24x32") << "rgb-interp"
                                                      << "photo_97x61" << true;
        QTest::newRow("DeiT processor: resize 19, crop 16") << "rgb-deit"
                                                            << "photo_97x61" << false;
        QTest::newRow("DeiT processor: crop pads rows") << "rgb-deit-pad"
                                                        << "photo_97x61" << false;
    }

    void centreCropGeometry() {
        // DeiT defaults apply where the file is silent; the crop window maps back onto the picture.
        const VitModel vit = *VitModel::load(vittest::modelDir("rgb-deit-pad"));
        const ImageU8 photo = loadImage(vittest::imagePath("photo_97x61.png"));
        const VitResult r = vit.run(photo, {});
        QCOMPARE(r.input.resized.width, 16);
        QCOMPARE(r.input.resized.height, 16);
        // Resized to 21×11, then the 16×16 window at (left, top) = ((21-16)//2, (11-16)//2) = (2, -3).
        const double sx = 97.0 / 21, sy = 61.0 / 11;
        const RectF region = r.grid.region();
        QVERIFY(r.grid.cropped());
        QVERIFY(std::abs(region.x - 2 * sx) < 1e-9 && std::abs(region.y + 3 * sy) < 1e-9);
        QVERIFY(std::abs(region.width - 16 * sx) < 1e-9 && std::abs(region.height - 16 * sy) < 1e-9);
        // The padded rows are zeros before normalisation: (0 - mean) / std on every channel.
        const float* px = r.input.pixels.data();
        QVERIFY(std::abs(px[0] - (0.0f - 0.485f) / 0.229f) < 1e-6f);
        // Patch (0, 0) starts at the region's corner; a point in the picture finds its patch back.
        const RectF first = r.grid.imageRect(0);
        QVERIFY(std::abs(first.x - region.x) < 1e-9 && std::abs(first.y - region.y) < 1e-9);
        const RectF mid = r.grid.imageRect(r.grid.index(2, 1));
        QCOMPARE(r.grid.patchAt(mid.x + mid.width / 2, mid.y + mid.height / 2), r.grid.index(2, 1));
        QCOMPARE(r.grid.patchAt(1.0, 1.0), -1); // left of the crop window
        const RectF frac = r.grid.regionFraction();
        QVERIFY(std::abs(frac.x - 2.0 / 21) < 1e-9 && std::abs(frac.height - 16.0 / 11) < 1e-9);
        // Without a crop the region is the whole picture.
        const VitResult plain = VitModel::load(vittest::modelDir("rgb"))->run(photo, {});
        QVERIFY(!plain.grid.cropped());
        QCOMPARE(plain.grid.regionFraction().width, 0.0);
    }
    void matchesReference() {
        QFETCH(QString, model);
        QFETCH(QString, image);
        QFETCH(bool, interpolate);
        const std::string m = model.toStdString(), img = image.toStdString();
        const VitModel vit = *VitModel::load(vittest::modelDir(m));
        VitRunOptions options;
        options.interpolatePositions = interpolate;
        // The whole pipeline from the PNG file.
        const VitResult r = vit.run(loadImage(vittest::imagePath(img + ".png")), options);
        const Tensor att = vittest::golden(m, img, "attentions"); // [L, H, T, T]
        compareTensor(r.output.attentions, att, kTol, "attentions");
        compareTensor(r.output.lastHidden, vittest::golden(m, img, "hidden"), kTol, "hidden");
        if (vit.hasClassifier()) {
            compareTensor(r.output.logits, vittest::golden(m, img, "logits"), kTol, "logits");
            QCOMPARE(r.output.probabilities.numel(), r.output.logits.numel());
        } else {
            QVERIFY(r.output.logits.empty());
            QVERIFY(vit.topK(r.output, 5).empty());
        }
        if (vit.hasPooler())
            compareTensor(r.output.pooled, vittest::golden(m, img, "pooled"), kTol, "pooled");
        // Every attention row is a probability distribution.
        const auto& s = att.shape();
        for (int64_t l = 0; l < s[0]; ++l)
            for (int64_t h = 0; h < s[1]; ++h) {
                const auto a = r.output.attentions.slice2d({l, h});
                QVERIFY((a.rowwise().sum().array() - 1.0f).abs().maxCoeff() < 1e-5f);
                QVERIFY(a.minCoeff() >= 0.0f);
            }
        QCOMPARE(r.grid.rows() * r.grid.cols() + 1, int(s[2]));
        QCOMPARE(r.output.gridRows, r.grid.rows());
        // The same from the golden pixel tensor directly (isolates the network from preprocessing).
        const VitOutput direct = vit.forward(vittest::golden(m, img, "pixels"), options);
        compareTensor(direct.attentions, att, kTol, "attentions (golden pixels)");
        // Rollout (mean, discard 0.3, max fusion) against the reference formula.
        compareTensor(Tensor::fromMatrix(attentionRollout(r.output.attentions)),
                      vittest::golden(m, img, "rollout"), 1e-5, "rollout");
        RolloutOptions discard;
        discard.discardRatio = 0.3f;
        compareTensor(Tensor::fromMatrix(attentionRollout(r.output.attentions, discard)),
                      vittest::golden(m, img, "rollout_discard"), 1e-5, "rollout discard 0.3");
        RolloutOptions maxFusion;
        maxFusion.fusion = HeadFusion::Max;
        compareTensor(Tensor::fromMatrix(attentionRollout(r.output.attentions, maxFusion)),
                      vittest::golden(m, img, "rollout_max"), 1e-5, "rollout max");
    }

    void configAndLabels() {
        const VitModel vit = *VitModel::load(vittest::modelDir("rgb"));
        QCOMPARE(vit.config().hiddenSize, 32);
        QCOMPARE(vit.config().numLayers, 2);
        QCOMPARE(vit.config().numHeads, 4);
        QCOMPARE(vit.numLabels(), 5);
        QCOMPARE(vit.label(2), std::string("bird"));
        QCOMPARE(vit.label(7), std::string("LABEL_7"));
        QVERIFY(!vit.hasPooler());
        const VitResult r = vit.run(loadImage(vittest::imagePath("photo_97x61.png")));
        const auto top = vit.topK(r.output, 3);
        QCOMPARE(top.size(), size_t(3));
        QVERIFY(top[0].probability >= top[1].probability && top[1].probability >= top[2].probability);
        const Tensor logits = vittest::golden("rgb", "photo_97x61", "logits");
        const auto best = std::max_element(logits.data(), logits.data() + logits.numel()) - logits.data();
        QCOMPARE(top[0].index, int(best));
        QCOMPARE(top[0].label, vit.label(int(best)));
        float sum = 0;
        for (const auto& p : vit.topK(r.output, 10))
            sum += p.probability;
        QVERIFY(std::abs(sum - 1.0f) < 1e-5f);
        const VitModel bare = *VitModel::load(vittest::modelDir("bare"));
        QVERIFY(bare.hasPooler());
        QVERIFY(!bare.hasClassifier());
        QVERIFY(!bare.config().qkvBias);
        QCOMPARE(bare.config().layerNormEps, 1e-6f);
    }

    void noCaptureAndCancel() {
        const VitModel vit = *VitModel::load(vittest::modelDir("rgb"));
        const Tensor pixels = vittest::golden("rgb", "photo_97x61", "pixels");
        VitRunOptions off;
        off.captureAttention = false;
        const VitOutput o = vit.forward(pixels, off);
        QVERIFY(o.attentions.empty());
        compareTensor(o.logits, vittest::golden("rgb", "photo_97x61", "logits"), kTol,
                      "logits without capture");
        Callbacks cb;
        int progressCalls = 0;
        cb.progress = [&](double, const std::string&) { ++progressCalls; };
        cb.cancelled = [&] { return progressCalls >= 1; }; // after layer 0 has started
        QVERIFY_THROWS_EXCEPTION(Cancelled, vit.forward(pixels, {}, cb));
    }

    // Head ablation equals the reference's transformers-style head_mask (probabilities × 0) on logits and
    // every head's attention; with no head ablated the output is bit-identical to the plain pass; bad pairs
    // throw.
    void headAblationMatchesHeadMask() {
        const VitModel vit = *VitModel::load(vittest::modelDir("rgb"));
        const Tensor pixels = vittest::golden("rgb", "photo_97x61", "pixels");
        const Tensor mask = vittest::golden("rgb", "ablate_photo_97x61", "head_mask"); // [L, H], 0 = ablated
        VitRunOptions options;
        for (int l = 0; l < mask.dim(0); ++l)
            for (int h = 0; h < mask.dim(1); ++h)
                if (mask.at({l, h}) == 0.0f) options.offHeads.push_back({l, h});
        QCOMPARE(options.offHeads.size(), size_t(3));
        const VitOutput ablated = vit.forward(pixels, options);
        compareTensor(ablated.logits, vittest::golden("rgb", "ablate_photo_97x61", "logits"), kTol,
                      "ablated logits");
        compareTensor(ablated.attentions, vittest::golden("rgb", "ablate_photo_97x61", "attentions"), kTol,
                      "ablated attentions");
        for (const auto& [l, h] : options.offHeads)
            QCOMPARE(ablated.attentions.sub({l, h}).matrix().cwiseAbs().maxCoeff(), 0.0f);
        // The ablation changes the prediction of this fixture (top class 3 → 2 in the reference).
        const VitOutput plain = vit.forward(pixels, {});
        QVERIFY(ablated.logits.toVector() != plain.logits.toVector());
        // Nothing ablated (an ablation list of a head twice is one ablation; an empty one the plain pass).
        VitRunOptions none;
        const VitOutput again = vit.forward(pixels, none);
        QCOMPARE(again.logits.toVector(), plain.logits.toVector());
        QCOMPARE(again.attentions.toVector(), plain.attentions.toVector());
        options.offHeads.push_back(options.offHeads.front());
        QCOMPARE(vit.forward(pixels, options).logits.toVector(), ablated.logits.toVector());
        VitRunOptions bad;
        bad.offHeads = {{2, 0}};
        QVERIFY_THROWS_EXCEPTION(Error, vit.forward(pixels, bad));
        bad.offHeads = {{0, 4}};
        QVERIFY_THROWS_EXCEPTION(Error, vit.forward(pixels, bad));
    }

    void badInputs() {
        const VitModel vit = *VitModel::load(vittest::modelDir("rgb"));
        // Wrong channel count, wrong size without interpolation, wrong rank.
        QVERIFY(errorOf([&] {
                    vit.forward(Tensor({1, 16, 16}));
                }).contains("1 channel(s), the model expects 3"));
        QVERIFY(errorOf([&] {
                    vit.forward(Tensor({3, 24, 32}));
                }).contains("doesn't match the model's image_size"));
        QVERIFY(!errorOf([&] { vit.forward(Tensor({16, 16})); }).isEmpty());
        // Bounded memory: a capture that would exceed the limit is refused before allocating it.
        VitRunOptions small;
        small.maxCaptureBytes = 2 * 4 * 17 * 17 * 4 - 1;
        QVERIFY(errorOf([&] { vit.forward(Tensor({3, 16, 16}), small); }).contains("more than the limit"));
        VitRunOptions huge;
        huge.interpolatePositions = true;
        QVERIFY(errorOf([&] { vit.forward(Tensor({3, 4 * 130, 4 * 130}), huge); }).contains("at most 16384"));
        QVERIFY(!errorOf([&] { VitModel::load(vittest::modelDir("does-not-exist")); }).isEmpty());
        // rgb-interp's processor resizes to 32×24: without interpolation that is an error, as in HF.
        const VitModel interp = *VitModel::load(vittest::modelDir("rgb-interp"));
        QVERIFY(errorOf([&] {
                    interp.run(loadImage(vittest::imagePath("photo_97x61.png")));
                }).contains("image_size"));
    }

    void mismatchesReportedTogether() {
        QTemporaryDir tmp;
        const auto dir = copyModel(tmp, "rgb");
        Json config = readJsonFile(dir / "config.json");
        config["intermediate_size"] = 80; // 2 layers × 2 MLP tensors × (weight + bias) shapes disagree
        writeJsonFile(dir / "config.json", config, 2);
        const QString msg = errorOf([&] { VitModel::load(dir); });
        qInfo("%s", qPrintable(msg));
        QVERIFY(msg.contains("does not match config.json"));
        QVERIFY(msg.contains("6 weight problems"));
        QVERIFY(msg.contains("vit.encoder.layer.1.output.dense.weight"));
        QVERIFY(msg.contains("[32, 64]"));

        config["intermediate_size"] = 64;
        config["num_hidden_layers"] = 3;
        writeJsonFile(dir / "config.json", config, 2);
        QVERIFY(errorOf([&] {
                    VitModel::load(dir);
                }).contains("'vit.encoder.layer.2.layernorm_before.weight' is missing"));
        config["num_hidden_layers"] = 1;
        writeJsonFile(dir / "config.json", config, 2);
        QVERIFY(errorOf([&] { VitModel::load(dir); }).contains("more than num_hidden_layers"));
        config["num_hidden_layers"] = 2;
        config["num_channels"] = 1; // checkpoint's patch kernel is for 3 channels
        writeJsonFile(dir / "config.json", config, 2);
        QVERIFY(errorOf([&] { VitModel::load(dir); }).contains("patch_embeddings.projection.weight"));
        config["num_channels"] = 3;
        config["id2label"] = {{"0", "a"}, {"1", "b"}};
        writeJsonFile(dir / "config.json", config, 2);
        QVERIFY(
            errorOf([&] { VitModel::load(dir); }).contains("classifier has 5 classes but id2label names 2"));
        config["id2label"] = {{"0", "a"}, {"2", "b"}};
        writeJsonFile(dir / "config.json", config, 2);
        QVERIFY(errorOf([&] { VitModel::load(dir); }).contains("without gaps"));
        config.erase("id2label");
        config["model_type"] = "bert";
        writeJsonFile(dir / "config.json", config, 2);
        QVERIFY(errorOf([&] { VitModel::load(dir); }).contains("expected 'vit'"));
        config["model_type"] = "vit";
        config["num_attention_heads"] = 5;
        writeJsonFile(dir / "config.json", config, 2);
        QVERIFY(errorOf([&] { VitModel::load(dir); }).contains("not divisible"));
    }

    void missingTensorAndForeignCheckpoint() {
        QTemporaryDir tmp;
        const auto dir = copyModel(tmp, "rgb");
        auto file = TensorFile::open(vittest::modelDir("rgb") / "model.safetensors");
        std::vector<TensorToWrite> keep;
        for (const auto& info : file.tensors())
            if (info.name != "vit.layernorm.bias" &&
                info.name != "vit.encoder.layer.0.attention.attention.key.weight")
                keep.push_back({info.name, file.load(info), DType::F32});
        writeSafeTensors(dir / "model.safetensors", keep);
        const QString msg = errorOf([&] { VitModel::load(dir); });
        QVERIFY(msg.contains("2 weight problems"));
        QVERIFY(msg.contains("'vit.layernorm.bias' is missing"));
        writeSafeTensors(dir / "model.safetensors", {{"model.shared.weight", Tensor({4, 4}), DType::F32}});
        QVERIFY(errorOf([&] { VitModel::load(dir); }).contains("not a ViT checkpoint"));
    }
};

QTEST_GUILESS_MAIN(TestVitModel)
#include "test_vit_model.moc"
