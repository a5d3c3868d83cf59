// Text-conditioned U-Nets (diffusers' UNet2DConditionModel, issue 41) against goldens from diffusers v0.25's
// own class (tools/golden/make_t2i_fixtures.py): noise prediction and every self- and cross-attention layer
// at t = 1, 500, 981 on an SD 1.x-layout U-Net (1×1 conv projections, float32) and an SD 2.x-layout one
// (Linear projections, two transformer layers per block, per-block layer counts, no mid block, float16
// weights); the layer list, heads switched off, the neuron view's probe of a cross-attention layer, bad
// encoder states and bad configs. Runs under ASan + UBSan in CI (label fast).

#include "core/diffusion/diffusion_model.h"
#include "core/util/error.h"
#include "support/error_of.h"
#include "support/unet_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

using namespace attnlens;
using unettest::maxAbsDiff;

namespace {

std::filesystem::path t2iFixture(const std::string& name) {
    return std::filesystem::path(ATTNLENS_TEST_DATA) / "t2i" / name;
}

UNetConditioning textOf(const unettest::Golden& g) {
    UNetConditioning c;
    c.encoderHiddenStates = g.file.load("encoder_hidden_states");
    return c;
}

// A copy of tiny-pipe/unet with its config.json changed by `edit`.
std::filesystem::path editedUnet(const QTemporaryDir& tmp, const std::string& name,
                                 const std::function<void(Json&)>& edit) {
    const auto dst = std::filesystem::path(tmp.path().toStdString()) / name;
    std::filesystem::create_directories(dst);
    for (const char* f : {"config.json", "diffusion_pytorch_model.safetensors"})
        std::filesystem::copy(t2iFixture("tiny-pipe/unet") / f, dst / f);
    Json cfg = readJsonFile(dst / "config.json");
    edit(cfg);
    writeJsonFile(dst / "config.json", cfg, 1);
    return dst;
}

} // namespace

class TestUnetText : public QObject {
    Q_OBJECT
private slots:
    void noisePredictionAndEveryAttentionMatchDiffusers_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("sd1-conv-proj") << "tiny-pipe/unet";
        QTest::newRow("sd2-linear-fp16") << "unet-linear-fp16";
    }
    void noisePredictionAndEveryAttentionMatchDiffusers() {
        QFETCH(QString, name);
        const auto dir = t2iFixture(name.toStdString());
        const auto unet = UNet2DModel::load(dir);
        QVERIFY(unet->textConditioned());
        const auto g = unettest::golden(dir / "golden.safetensors");
        const UNetConditioning text = textOf(g);
        double worstNoise = 0, worstAttention = 0;
        for (int t : g.meta["timesteps"].get<std::vector<int>>()) {
            const std::string p = "t" + std::to_string(t) + ".";
            const UNetOutput out = unet->forward(g.file.load(p + "sample"), static_cast<float>(t), text);
            const Tensor expected = g.file.load(p + "noise_pred");
            QCOMPARE(shapeToString(out.noisePred.shape()), shapeToString(expected.shape()));
            worstNoise = std::max(worstNoise, maxAbsDiff(out.noisePred, expected));
            const auto& layers = g.meta["attentions"];
            QCOMPARE(out.attentions.size(), layers.size());
            for (size_t i = 0; i < layers.size(); ++i) {
                const auto& a = out.attentions[i];
                QCOMPARE(a.info.name, layers[i]["name"].get<std::string>());
                QCOMPARE(a.info.heads, layers[i]["heads"].get<int>());
                QCOMPARE(a.info.height, layers[i]["spatial"][0].get<int>());
                QCOMPARE(a.info.cross, layers[i]["cross"].get<bool>());
                QCOMPARE(a.info.keys(), a.info.cross ? int64_t{77} : a.info.tokens());
                const Tensor e = g.file.load(p + "attn." + a.info.name);
                QCOMPARE(shapeToString(a.weights.shape()), shapeToString(e.shape()));
                worstAttention = std::max(worstAttention, maxAbsDiff(a.weights, e));
                if (qEnvironmentVariableIsSet("UNET_TEXT_VERBOSE"))
                    qInfo("t=%d %s %.2e", t, a.info.name.c_str(), maxAbsDiff(a.weights, e));
            }
        }
        qInfo("%s: noise prediction max |Δ| %.2e, attention %.2e", qPrintable(name), worstNoise,
              worstAttention);
        QVERIFY2(worstNoise < 1e-4, qPrintable(QString::number(worstNoise)));
        QVERIFY2(worstAttention < 1e-4, qPrintable(QString::number(worstAttention)));
    }

    void layerListMatchesTheRunAndNamesDiffusersModules() {
        const auto unet = UNet2DModel::load(t2iFixture("tiny-pipe/unet"));
        const auto layers = unet->attentionLayers(16, 24, 77);
        // 2 down blocks × 2 resnets + mid + 2 up blocks × 3 resnets, each one transformer layer: attn1, attn2
        QCOMPARE(layers.size(), size_t(22));
        QCOMPARE(layers[0].name, std::string("down_blocks.0.attentions.0.transformer_blocks.0.attn1"));
        QVERIFY(!layers[0].cross);
        QCOMPARE(layers[1].name, std::string("down_blocks.0.attentions.0.transformer_blocks.0.attn2"));
        QVERIFY(layers[1].cross);
        QCOMPARE(layers[1].keys(), int64_t{77});
        QCOMPARE(layers[1].tokens(), int64_t{16 * 24});
        QCOMPARE(layers[8].name, std::string("mid_block.attentions.0.transformer_blocks.0.attn1"));
        QCOMPARE(layers[8].path, UNetPath::Bottleneck);
        QCOMPARE(layers[8].height, 4);
        QCOMPARE(layers[8].heads, 4);
        QCOMPARE(layers.back().name, std::string("up_blocks.2.attentions.2.transformer_blocks.0.attn2"));
        QCOMPARE(layers.back().heads, 2);
        QCOMPARE(layers.back().path, UNetPath::Expansive);
        QCOMPARE(unet->captureBytes(16, 24, 77) > 0, true);

        const auto sd2 = UNet2DModel::load(t2iFixture("unet-linear-fp16"));
        const auto l2 = sd2->attentionLayers(8, 8, 5);
        QCOMPARE(l2.size(), size_t(12)); // 1 + 3 transformers of two layers, no mid block
        QCOMPARE(l2[3].name, std::string("down_blocks.0.attentions.0.transformer_blocks.1.attn2"));
        QCOMPARE(l2[3].keys(), int64_t{5});
    }

    void shorterTextAndBatchedStatesRun() {
        const auto unet = UNet2DModel::load(t2iFixture("tiny-pipe/unet"));
        const auto g = unettest::golden(t2iFixture("tiny-pipe/unet") / "golden.safetensors");
        const Tensor full = g.file.load("encoder_hidden_states");
        UNetConditioning text;
        text.encoderHiddenStates = full.reshaped({1, 77, 32}); // [1, tokens, D] as a .npy holds it
        const Tensor sample = g.file.load("t500.sample");
        const UNetOutput batched = unet->forward(sample, 500.0f, text);
        QVERIFY(maxAbsDiff(batched.noisePred, g.file.load("t500.noise_pred")) < 1e-4);
        Tensor few({3, 32});
        std::copy(full.data(), full.data() + 3 * 32, few.data());
        text.encoderHiddenStates = few;
        const UNetOutput out = unet->forward(sample, 500.0f, text);
        QCOMPARE(out.attentions[1].weights.dim(2), int64_t{3});
        QCOMPARE(out.attentions[1].info.textTokens, 3);
    }

    void headsSwitchedOffAndProbeOfACrossLayer() {
        const auto unet = UNet2DModel::load(t2iFixture("tiny-pipe/unet"));
        const auto g = unettest::golden(t2iFixture("tiny-pipe/unet") / "golden.safetensors");
        const Tensor sample = g.file.load("t500.sample");
        UNetRunOptions run;
        run.offHeads = {{1, 0}}; // the first cross-attention layer's head 0
        AttentionInputs probe;
        run.probe = &probe;
        run.probeLayer = 1;
        const UNetOutput out = unet->forward(sample, 500.0f, textOf(g), run);
        const Tensor& w = out.attentions[1].weights;
        float head0 = 0, head1 = 0;
        for (int64_t q = 0; q < w.dim(1); ++q)
            for (int64_t k = 0; k < w.dim(2); ++k) {
                head0 += w.at({0, q, k});
                head1 += w.at({1, q, k});
            }
        QCOMPARE(head0, 0.0f);
        QVERIFY(std::abs(head1 - float(w.dim(1))) < 1e-3f);
        QVERIFY(maxAbsDiff(out.noisePred, g.file.load("t500.noise_pred")) > 1e-3);
        QCOMPARE(probe.queryInput.rows(), int64_t{64});
        QCOMPARE(probe.keyInput.rows(), int64_t{77});
        QCOMPARE(probe.keyInput.cols(), int64_t{32});
        QCOMPARE(probe.attention->heads(), 2);
    }

    void badEncoderStatesAreNamed() {
        const auto unet = UNet2DModel::load(t2iFixture("tiny-pipe/unet"));
        const auto g = unettest::golden(t2iFixture("tiny-pipe/unet") / "golden.safetensors");
        const Tensor sample = g.file.load("t500.sample");
        QVERIFY(
            errorOf([&] { unet->forward(sample, 500.0f, UNetConditioning{}); }).contains("text-conditioned"));
        UNetConditioning wide;
        wide.encoderHiddenStates = Tensor({77, 24}, 0.0f);
        QVERIFY(errorOf([&] { unet->forward(sample, 500.0f, wide); }).contains("cross_attention_dim is 32"));
        UNetConditioning bad;
        Tensor nan({2, 32}, 0.0f);
        nan.data()[5] = std::nanf("");
        bad.encoderHiddenStates = nan;
        QVERIFY(errorOf([&] { unet->forward(sample, 500.0f, bad); }).contains("non-finite"));
        UNetConditioning withClass = textOf(g);
        withClass.classLabel = 1;
        QVERIFY(errorOf([&] { unet->forward(sample, 500.0f, withClass); }).contains("no class embedding"));
    }

    void unsupportedConfigsAreRefusedByName_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value"); // JSON
        QTest::addColumn<QString>("message");
        QTest::newRow("sdxl") << "addition_embed_type"
                              << "\"text_time\""
                              << "addition_embed_type";
        QTest::newRow("num_attention_heads") << "num_attention_heads"
                                             << "8"
                                             << "num_attention_heads";
        QTest::newRow("heads not dividing") << "attention_head_dim"
                                            << "3"
                                            << "must divide block 0";
        QTest::newRow("cross only") << "only_cross_attention"
                                    << "true"
                                    << "only_cross_attention";
        QTest::newRow("mid block") << "mid_block_type"
                                   << "\"UNetMidBlock2DSimpleCrossAttn\""
                                   << "mid_block_type";
        QTest::newRow("block type")
            << "down_block_types"
            << "[\"SimpleCrossAttnDownBlock2D\", \"CrossAttnDownBlock2D\", \"DownBlock2D\"]"
            << "SimpleCrossAttnDownBlock2D";
        QTest::newRow("nested layers") << "transformer_layers_per_block"
                                       << "[[1, 2], 1, 1]"
                                       << "nested";
        QTest::newRow("cross dim vs weights") << "cross_attention_dim"
                                              << "48"
                                              << "attn2.to_k.weight";
        QTest::newRow("class table") << "num_class_embeds"
                                     << "10"
                                     << "num_class_embeds";
    }
    void unsupportedConfigsAreRefusedByName() {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        const auto dir = editedUnet(
            tmp, "edited", [&](Json& cfg) { cfg[key.toStdString()] = Json::parse(value.toStdString()); });
        const QString error = errorOf([&] { UNet2DModel::load(dir); });
        QVERIFY2(error.contains(message), qPrintable(error));
    }

    void bareFolderLoadsAsADiffusionModel() {
        const DiffusionModel model = loadDiffusionModel(t2iFixture("tiny-pipe/unet"));
        QVERIFY(model.unet->textConditioned());
        QCOMPARE(model.unet->config().crossAttentionDim, 32);
        QCOMPARE(model.unet->config().headsPerLevel, (std::vector<int>{2, 4, 4}));
    }
};

QTEST_GUILESS_MAIN(TestUnetText)
#include "test_unet_text.moc"
