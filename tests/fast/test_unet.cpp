// The diffusion engine against goldens from the independent PyTorch implementation
// (tools/golden/unet_reference.py via make_unet_fixtures.py): noise prediction and every attention
// layer at t = 0, 500, 999 on four diffusers-layout fixtures (bare / pipeline, F32 / F16, one head /
// attention_head_dim 8, class-conditional, center_input_sample + scale_shift), the DDIM and DDPM
// trajectories with injected noise, the schedulers, the Winograd convolution and both GEMM kernels,
// and bad folders. Runs under ASan + UBSan in CI (label fast).

#include "core/analysis/attention_captures.h"
#include "core/analysis/head_importance.h"
#include "core/analysis/neuron_view.h"
#include "core/diffusion/denoise_session.h"
#include "core/diffusion/unet_maps.h"
#include "core/io/npy_reader.h"
#include "core/ops/conv.h"
#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "core/util/random.h"
#include "support/error_of.h"
#include "support/unet_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace attnlens;
using unettest::maxAbsDiff;

namespace {

const char* kFixtures[] = {"bare-head8", "bare-head8-f16", "cond-pipeline", "center-scaleshift"};

Tensor chw(const Tensor& t) { // [1, C, H, W] → [C, H, W]
    return t.rank() == 4 ? t.reshaped({t.dim(1), t.dim(2), t.dim(3)}) : t;
}

std::filesystem::path editedCopy(const QTemporaryDir& tmp, const std::string& name,
                                 const std::function<void(Json&)>& edit) {
    return unettest::editedCopy(tmp.path().toStdString(), name, edit);
}

} // namespace

class TestUnet : public QObject {
    Q_OBJECT
private slots:
    void noisePredictionAndAttentionMatchReference_data() {
        QTest::addColumn<QString>("name");
        for (const char* f : kFixtures)
            QTest::newRow(f) << QString(f);
    }
    void noisePredictionAndAttentionMatchReference() {
        QFETCH(QString, name);
        const auto model = loadDiffusionModel(unettest::fixture(name.toStdString()));
        const auto g = unettest::golden(unettest::fixture(name.toStdString()) / "golden.safetensors");
        std::optional<int> cls;
        if (!g.meta["class_label"].is_null()) cls = g.meta["class_label"].get<int>();
        for (int t : g.meta["timesteps"].get<std::vector<int>>()) {
            const std::string p = "t" + std::to_string(t) + ".";
            const Tensor sample = g.file.load(p + "sample");
            const UNetOutput out = model.unet->forward(sample, static_cast<float>(t), cls);
            const Tensor expected = g.file.load(p + "noise_pred");
            QCOMPARE(shapeToString(out.noisePred.shape()), shapeToString(expected.shape()));
            QVERIFY2(maxAbsDiff(out.noisePred, expected) < 1e-4,
                     qPrintable(QString("t=%1 noise Δ %2").arg(t).arg(maxAbsDiff(out.noisePred, expected))));
            const auto& layers = g.meta["attentions"];
            QCOMPARE(out.attentions.size(), layers.size());
            for (size_t i = 0; i < layers.size(); ++i) {
                const auto& a = out.attentions[i];
                QCOMPARE(a.info.name, layers[i]["name"].get<std::string>());
                QCOMPARE(a.info.heads, layers[i]["heads"].get<int>());
                QCOMPARE(a.info.height, layers[i]["spatial"][0].get<int>());
                QCOMPARE(a.info.width, layers[i]["spatial"][1].get<int>());
                const Tensor e = g.file.load(p + "attn." + a.info.name);
                QCOMPARE(shapeToString(a.weights.shape()), shapeToString(e.shape()));
                QVERIFY2(maxAbsDiff(a.weights, e) < 1e-4, qPrintable(QString::fromStdString(a.info.name)));
            }
        }
    }

    void layersAreNamedAndPlacedOnTheU() {
        const auto model = loadDiffusionModel(unettest::fixture("cond-pipeline"));
        const auto layers = model.unet->attentionLayers(8, 8);
        QCOMPARE(layers.size(), size_t(7));
        QCOMPARE(layers.front().name, std::string("down_blocks.1.attentions.0"));
        QCOMPARE(layers.front().path, UNetPath::Contracting);
        QCOMPARE(layers[2].name, std::string("mid_block.attentions.0"));
        QCOMPARE(layers[2].path, UNetPath::Bottleneck);
        QCOMPARE(layers[2].height, 2);
        QCOMPARE(layers.back().name, std::string("up_blocks.1.attentions.1"));
        QCOMPARE(layers.back().path, UNetPath::Expansive);
        QCOMPARE(layers.back().height, 4);
        QCOMPARE(model.className(2), std::string("cross"));
        QCOMPARE(model.unet->config().numClassEmbeds, 3);
    }

    void queryMapsFollowTheQueryPixel() {
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto g = unettest::golden(unettest::fixture("bare-head8") / "golden.safetensors");
        const UNetOutput out = model.unet->forward(g.file.load("t500.sample"), 500.0f, std::nullopt);
        const UNetAttentionMap& layer = out.attentions.front(); // 4×4, 4 heads, on an 8×8 image
        const RowMatrix mean = unetQueryMap(layer, 5, 2, 8, 8, HeadSelection{});
        QCOMPARE(mean.rows(), 4);
        QCOMPARE(mean.cols(), 4);
        QVERIFY(std::abs(mean.sum() - 1.0f) < 1e-5);
        // image pixel (5, 2) is token (2, 1) of the 4×4 level: head 3's row 2·4 + 1
        const RowMatrix head3 = unetQueryMap(layer, 5, 2, 8, 8, HeadSelection{3, HeadFusion::Mean});
        for (int k = 0; k < 16; ++k)
            QCOMPARE(head3(k / 4, k % 4), layer.weights.at({3, 9, k}));
        QVERIFY(errorOf([&] { unetQueryMap(layer, 8, 0, 8, 8, HeadSelection{}); }).contains("outside"));
        QVERIFY(errorOf([&] {
                    unetQueryMap(layer, 0, 0, 8, 8, HeadSelection{4, HeadFusion::Mean});
                }).contains("head"));
        const ImageU8 big = enlargeNearest(sampleToImage(g.file.load("t500.sample")), 3);
        QCOMPARE(big.width, 24);
        QCOMPARE(big.at(5, 7, 1), big.at(3, 6, 1)); // pixel (1, 2) of the original, as a 3×3 block
    }

    void regionMapsAverageRowsAndKeySideSumsColumns() {
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto g = unettest::golden(unettest::fixture("bare-head8") / "golden.safetensors");
        const UNetOutput out = model.unet->forward(g.file.load("t500.sample"), 500.0f, std::nullopt);
        const UNetAttentionMap& layer = out.attentions.front(); // 4×4 tokens, 4 heads, on an 8×8 image
        // pixels rows 2..5, cols 0..3 → tokens rows 1..2, cols 0..1 of the 4×4 level
        const PixelRegion region{2, 0, 5, 3};
        const std::vector<int> tokens = unetRegionTokens(layer.info, region, 8, 8);
        QCOMPARE(tokens, (std::vector<int>{4, 5, 8, 9}));
        const RowMatrix q = unetRegionMap(layer, region, 8, 8, HeadSelection{1, HeadFusion::Mean});
        const RowMatrix k = unetRegionMap(layer, region, 8, 8, HeadSelection{1, HeadFusion::Mean}, true);
        for (int j = 0; j < 16; ++j) {
            float row = 0, col = 0;
            for (int t : tokens) {
                row += layer.weights.at({1, t, j}) / 4.0f;
                col += layer.weights.at({1, j, t});
            }
            QVERIFY(std::abs(q(j / 4, j % 4) - row) < 1e-6f);
            QVERIFY(std::abs(k(j / 4, j % 4) - col) < 1e-6f);
        }
        QVERIFY(std::abs(q.sum() - 1.0f) < 1e-5f);
        // one pixel is the query map; an inverted or outside region is refused
        QCOMPARE(unetRegionMap(layer, PixelRegion::pixel(5, 2), 8, 8, {}),
                 unetQueryMap(layer, 5, 2, 8, 8, {}));
        QVERIFY(errorOf([&] { unetRegionTokens(layer.info, {3, 3, 2, 2}, 8, 8); }).contains("inverted"));
        QVERIFY(errorOf([&] { unetRegionTokens(layer.info, {0, 0, 8, 2}, 8, 8); }).contains("outside"));
    }

    // Value-weighted maps (issue 42): each layer keeps ‖v_j · W_O,hᵀ‖ of its keys (the full product made here
    // from the probed inputs); a region's map weights each head's rows by them, renormalises, then fuses.
    void valueWeightedMapsUseTheValuesNorms() {
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto g = unettest::golden(unettest::fixture("bare-head8") / "golden.safetensors");
        AttentionInputs inputs;
        UNetRunOptions o;
        o.probe = &inputs;
        o.probeLayer = 0;
        const UNetOutput out = model.unet->forward(g.file.load("t500.sample"), 500.0f, std::nullopt, o);
        const UNetAttentionMap& layer = out.attentions.front(); // 4×4 tokens, 4 heads of 8
        QCOMPARE(layer.valueNorms.shape(), Shape({4, 16}));
        RowMatrix k, v, wo(inputs.attention->outWeights().outFeatures(), 32);
        inputs.attention->projectKeyValue(inputs.keyInput, k, v);
        for (Eigen::Index r = 0; r < wo.rows(); ++r)
            inputs.attention->outWeights().rowInto(r, wo.row(r).data());
        for (int h = 0; h < 4; ++h) {
            const RowMatrix sent = v.middleCols(h * 8, 8) * wo.middleCols(h * 8, 8).transpose();
            for (int j = 0; j < 16; ++j)
                QVERIFY(std::abs(layer.valueNorms.at({h, j}) - sent.row(j).norm()) < 1e-4f);
        }
        const PixelRegion region{2, 0, 5, 3}; // tokens 4, 5, 8, 9
        auto weightedRow = [&](int h, int t) {
            Eigen::RowVectorXf row(16);
            for (int j = 0; j < 16; ++j)
                row[j] = layer.weights.at({h, t, j}) * layer.valueNorms.at({h, j});
            return Eigen::RowVectorXf(row / row.sum());
        };
        const RowMatrix q = unetRegionMap(layer, region, 8, 8, {1, HeadFusion::Mean}, false, true);
        const RowMatrix m = unetRegionMap(layer, region, 8, 8, {-1, HeadFusion::Max}, false, true);
        const RowMatrix key = unetRegionMap(layer, region, 8, 8, {-1, HeadFusion::Mean}, true, true);
        for (int j = 0; j < 16; ++j) {
            float one = 0, max = 0, col = 0;
            for (int t : {4, 5, 8, 9}) {
                one += weightedRow(1, t)[j] / 4.0f;
                float best = 0;
                for (int h = 0; h < 4; ++h)
                    best = std::max(best, weightedRow(h, t)[j]);
                max += best / 4.0f;
            }
            for (int t : {4, 5, 8, 9})
                for (int h = 0; h < 4; ++h)
                    col +=
                        weightedRow(h, j)[t] / 4.0f; // how much query j draws on the region, heads averaged
            QVERIFY(std::abs(q(j / 4, j % 4) - one) < 1e-6f);
            QVERIFY(std::abs(m(j / 4, j % 4) - max) < 1e-6f);
            QVERIFY(std::abs(key(j / 4, j % 4) - col) < 1e-5f);
        }
        QVERIFY(std::abs(q.sum() - 1.0f) < 1e-5f);
        QVERIFY((q - unetRegionMap(layer, region, 8, 8, {1, HeadFusion::Mean})).cwiseAbs().maxCoeff() >
                1e-4f);
        UNetAttentionMap bare = layer;
        bare.valueNorms = Tensor();
        QVERIFY(errorOf([&] { unetRegionMap(bare, region, 8, 8, {}, false, true); }).contains("norms"));
    }

    void viewsDrawTheMapOverTheChosenImage() {
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto g = unettest::golden(unettest::fixture("bare-head8") / "golden.safetensors");
        const Tensor x = g.file.load("t500.sample");
        const UNetOutput out = model.unet->forward(x, 500.0f, std::nullopt);
        DenoiseStep step{500, x, out.noisePred, x.clone()};
        for (float& v : step.predOriginal.values())
            v = -v; // x̂0 ≠ x_t, so the two views differ
        UNetView view;
        view.query = PixelRegion::pixel(1, 6);
        view.options.opacity = 0.5f;
        view.minSide = 20; // 8 px → ×3
        const RgbImage over0 = renderUNetView(step, &out.attentions[0], view);
        QCOMPARE(over0.width, 24);
        const RowMatrix map = unetRegionMap(out.attentions[0], view.query, 8, 8, view.heads);
        OverlayOptions o = view.options;
        o.smooth = false;
        const RgbImage expected = renderOverlay(enlargeNearest(sampleToImage(step.predOriginal), 3), map, o);
        QCOMPARE(over0.pixels, expected.pixels);
        view.onNoisy = true;
        QVERIFY(renderUNetView(step, &out.attentions[0], view).pixels != over0.pixels);
        // without attention: the enlarged image alone, grey as RGB
        const RgbImage plain = renderUNetView(step, nullptr, view);
        const ImageU8 xt = sampleToImage(x);
        QCOMPARE(plain.pixel(7, 5).r, xt.at(2, 1, 0)); // pixel (2, 1) of the RGB x_t, as a 3×3 block
        QCOMPARE(plain.pixel(7, 5).b, xt.at(2, 1, 2));
        QCOMPARE(enlargeFactor(xt, 256), 32);
        QCOMPARE(enlargeFactor(xt, 1), 1);
    }

    void trajectoriesMatchReference() {
        const auto dir = unettest::fixture("cond-pipeline") / "trajectories";
        const auto g = unettest::golden(dir / "trajectories.safetensors");
        const auto model = loadDiffusionModel(unettest::fixture("cond-pipeline"));
        const int cls = g.meta["class_label"].get<int>();
        const auto noise = [dir](int step) {
            char name[32];
            std::snprintf(name, sizeof name, "step_%03d.npy", step);
            return readNpy(dir / "noise" / name);
        };
        struct Case {
            const char* key;
            SchedulerKind kind;
            int steps;
            float eta;
        };
        for (const Case c :
             {Case{"ddim20", SchedulerKind::Ddim, 20, 0.0f}, Case{"ddim10eta", SchedulerKind::Ddim, 10, 0.5f},
              Case{"ddpm10", SchedulerKind::Ddpm, 10, 0.0f}}) {
            DenoiseOptions o;
            o.scheduler = c.kind;
            o.steps = c.steps;
            o.eta = c.eta;
            o.classLabel = cls;
            o.initNoise = readNpy(dir / "init_noise.npy");
            o.stepNoise = noise;
            DenoiseSession s(model, o);
            s.run();
            QCOMPARE(s.timesteps(), g.meta[c.key]["timesteps"].get<std::vector<int>>());
            const double d = maxAbsDiff(s.finalSample(), chw(g.file.load(std::string(c.key) + ".final")));
            QVERIFY2(d < 1e-3, qPrintable(QString("%1: final sample Δ %2").arg(c.key).arg(d)));
            if (std::string(c.key) == "ddpm10") {
                QVERIFY(maxAbsDiff(s.stepAt(0).predOriginal, chw(g.file.load("ddpm10.x0.step0"))) < 1e-3);
                QVERIFY(maxAbsDiff(s.stepAt(9).predOriginal, chw(g.file.load("ddpm10.x0.step9"))) < 1e-3);
                QVERIFY(maxAbsDiff(s.stepAt(5).sample, chw(g.file.load("ddpm10.xt.step5"))) < 1e-3);
                // a step's attention recomputed on demand gives the same noise prediction
                const UNetOutput again = s.attentionAt(5);
                QCOMPARE(maxAbsDiff(again.noisePred, s.stepAt(5).noisePred), 0.0);
                QCOMPARE(again.attentions.size(), size_t(7));
            }
            if (std::string(c.key) == "ddim20") { // the pipelines' image conversion
                const ImageU8 img = sampleToImage(s.finalSample());
                const Tensor expected = g.file.load("ddim20.image"); // [H, W, C] 0..255
                int off = 0;
                for (int64_t i = 0; i < expected.numel(); ++i)
                    off += std::abs(int(img.pixels[size_t(i)]) - int(expected.data()[i])) > 1;
                QCOMPARE(off, 0);
            }
        }
    }

    void schedulerVariantsMatchReference() {
        // other prediction types, variances, beta schedules, spacings, steps_offset, set_alpha_to_one
        // and clipping, over the same U-Net and noise (make_unet_fixtures.py SCHEDULER_VARIANTS)
        const auto dir = unettest::fixture("cond-pipeline") / "trajectories";
        const auto g = unettest::golden(dir / "trajectories.safetensors");
        DiffusionModel model = loadDiffusionModel(unettest::fixture("cond-pipeline"));
        QVERIFY(g.meta["variants"].size() >= 4);
        for (const auto& [name, v] : g.meta["variants"].items()) {
            model.scheduler = SchedulerConfig::fromJson(JsonConfig(v["config"], name + ".json"));
            DenoiseOptions o;
            o.scheduler = v["kind"].get<std::string>() == "ddim" ? SchedulerKind::Ddim : SchedulerKind::Ddpm;
            o.steps = v["steps"].get<int>();
            o.eta = v["eta"].get<float>();
            o.classLabel = g.meta["class_label"].get<int>();
            o.initNoise = readNpy(dir / "init_noise.npy");
            o.stepNoise = [dir](int step) {
                char file[32];
                std::snprintf(file, sizeof file, "step_%03d.npy", step);
                return readNpy(dir / "noise" / file);
            };
            DenoiseSession s(model, o);
            s.run();
            QCOMPARE(s.timesteps(), v["timesteps"].get<std::vector<int>>());
            const double d = maxAbsDiff(s.finalSample(), chw(g.file.load("variant." + name + ".final")));
            QVERIFY2(d < 1e-3, qPrintable(QString::fromStdString(name) + QString(": Δ %1").arg(d)));
        }
    }

    void schedulersFollowDiffusers() {
        const auto make = [](const std::string& schedule, float start, float end) {
            return Scheduler(SchedulerKind::Ddpm,
                             SchedulerConfig::fromJson(JsonConfig(
                                 Json{{"beta_schedule", schedule}, {"beta_start", start}, {"beta_end", end}},
                                 "scheduler_config.json")));
        };
        // values from torch 1.13: torch.cumprod(1 - betas) as diffusers builds them (float32)
        const auto lin = make("linear", 0.0001f, 0.02f).alphasCumprod();
        QVERIFY(std::abs(lin[500] - 0.07779666036367416) < 1e-7 &&
                std::abs(lin[999] - 4.0358307160204276e-05) < 1e-9);
        const auto sl = make("scaled_linear", 0.00085f, 0.012f).alphasCumprod();
        QVERIFY(std::abs(sl[500] - 0.2763324975967407) < 1e-6 &&
                std::abs(sl[999] - 0.0046600960195064545) < 1e-8);
        const auto cos = make("squaredcos_cap_v2", 0.0001f, 0.02f).alphasCumprod();
        QVERIFY(std::abs(cos[500] - 0.4922850430011749) < 1e-6 &&
                std::abs(cos[0] - 0.9999586939811707) < 1e-7);

        const auto spaced = [](const std::string& spacing, int offset, int steps) {
            Scheduler s(
                SchedulerKind::Ddim,
                SchedulerConfig::fromJson(JsonConfig(
                    Json{{"timestep_spacing", spacing}, {"steps_offset", offset}}, "scheduler_config.json")));
            s.setTimesteps(steps);
            return s.timesteps();
        };
        QCOMPARE(spaced("linspace", 0, 10),
                 (std::vector<int>{999, 888, 777, 666, 555, 444, 333, 222, 111, 0}));
        QCOMPARE(spaced("trailing", 0, 10),
                 (std::vector<int>{999, 899, 799, 699, 599, 499, 399, 299, 199, 99}));
        QCOMPARE(spaced("trailing", 0, 3), (std::vector<int>{999, 666, 332}));
        QCOMPARE(spaced("leading", 1, 10),
                 (std::vector<int>{901, 801, 701, 601, 501, 401, 301, 201, 101, 1}));
        QCOMPARE(spaced("leading", 0, 50).front(), 980);

        QVERIFY(errorOf([] {
                    SchedulerConfig::fromJson(JsonConfig(Json{{"thresholding", true}}, "s.json"));
                }).contains("thresholding"));
        QVERIFY(errorOf([] {
                    SchedulerConfig::fromJson(JsonConfig(Json{{"variance_type", "learned_range"}}, "s.json"));
                }).contains("variance_type"));
        Scheduler s(SchedulerKind::Ddpm, SchedulerConfig::defaults());
        QVERIFY(errorOf([&] { s.setTimesteps(0); }).contains("steps"));
        QVERIFY(errorOf([&] { s.setTimesteps(1001); }).contains("1..1000"));
    }

    void winogradEqualsDirectConvolution() {
        NormalRng rng(7);
        const int sizes[][4] = {{4, 4, 3, 5},   {5, 7, 4, 4},     {8, 8, 16, 8},
                                {13, 9, 6, 11}, {16, 16, 32, 32}, {19, 6, 2, 3}};
        for (const auto& s : sizes) {
            const int h = s[0], w = s[1], cin = s[2], cout = s[3];
            FeatureMap x{RowMatrix(cin, int64_t{h} * w), h, w};
            for (int64_t i = 0; i < x.data.size(); ++i)
                x.data.data()[i] = rng.next();
            const Tensor weight = rng.tensor({cout, cin, 3, 3});
            const Tensor bias = rng.tensor({cout});
            const FeatureMap direct = conv2d(x, weight, bias, ConvGeometry::same(3));
            const FeatureMap wino = conv3x3Winograd(x, winogradWeights(weight), bias);
            QCOMPARE(wino.height, h);
            QCOMPARE(wino.width, w);
            const double d = (direct.data - wino.data).cwiseAbs().maxCoeff();
            QVERIFY2(d < 1e-4, qPrintable(QString("%1x%2: Δ %3").arg(h).arg(w).arg(d)));
            // in bands of tile rows (a big map's memory bound): 1, 2 and 3 tile rows. The same products over
            // fewer columns; Eigen's GEMM may block them otherwise (seen: 1.9e-6 apart at 13x9)
            for (int64_t rows : {1, 2, 3}) {
                const int64_t before = setWinogradBandFloats(rows * 16 * (cin + cout) * ((w + 1) / 2));
                const FeatureMap banded = conv3x3Winograd(x, winogradWeights(weight), bias);
                setWinogradBandFloats(before);
                const double bd = (banded.data - wino.data).cwiseAbs().maxCoeff();
                QVERIFY2(bd < 1e-4,
                         qPrintable(QString("%1x%2 in bands of %3: %4").arg(h).arg(w).arg(rows).arg(bd)));
            }
        }
    }

    void gemmKernelsAgree() {
        NormalRng rng(3);
        const Tensor a = rng.tensor({37, 53}), b = rng.tensor({53, 29}), bt = rng.tensor({29, 53});
        const GemmKernel before = activeGemmKernel();
        std::vector<Tensor> results;
        std::vector<GemmKernel> kernels{GemmKernel::Avx2};
        if (cpuSupportsAvx512()) kernels.push_back(GemmKernel::Avx512);
        for (GemmKernel k : kernels) {
            setGemmKernel(k);
            Tensor c({37, 29}), ct({37, 29});
            gemm(a.data(), b.data(), c.data(), 37, 29, 53);
            gemm(GemmArgs{a.data(), 53, bt.data(), 53, ct.data(), 29, 37, 29, 53, true, false});
            const RowMatrix ref = a.matrix() * b.matrix();
            const RowMatrix reft = a.matrix() * bt.matrix().transpose();
            QVERIFY((c.matrix() - ref).cwiseAbs().maxCoeff() < 1e-4);
            QVERIFY((ct.matrix() - reft).cwiseAbs().maxCoeff() < 1e-4);
            results.push_back(c);
        }
        setGemmKernel(before);
        if (!cpuSupportsAvx512())
            QVERIFY(errorOf([] { setGemmKernel(GemmKernel::Avx512); }).contains("AVX-512"));
        // the whole U-Net on the baseline kernel (what an AVX2-only CPU runs) still matches the golden
        setGemmKernel(GemmKernel::Avx2);
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto g = unettest::golden(unettest::fixture("bare-head8") / "golden.safetensors");
        const UNetOutput out = model.unet->forward(g.file.load("t500.sample"), 500.0f, std::nullopt);
        setGemmKernel(before);
        QVERIFY(maxAbsDiff(out.noisePred, g.file.load("t500.noise_pred")) < 1e-4);
    }

    // Head ablation equals the reference with transformers-style head masks
    // (tools/golden/make_unet_ablation_golden.py): noise prediction and every layer's attention, the off
    // heads' attention zero; no ablation is the plain pass bit for bit; bad pairs are errors naming the
    // layer's head count; predictAt re-predicts a step under the ablation.
    void headAblationMatchesHeadMask() {
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto file = TensorFile::open(unettest::fixture("bare-head8") / "golden_ablate.safetensors");
        const Tensor mask = file.load("head_mask");
        UNetRunOptions options;
        for (int l = 0; l < mask.dim(0); ++l)
            for (int h = 0; h < mask.dim(1); ++h)
                if (mask.at({l, h}) == 0.0f) options.offHeads.push_back({l, h});
        QCOMPARE(options.offHeads.size(), size_t(4));
        const Tensor sample = file.load("sample");
        const UNetOutput out = model.unet->forward(sample, 500.0f, std::nullopt, options);
        QVERIFY2(maxAbsDiff(out.noisePred, file.load("noise_pred")) < 1e-4, "ablated noise prediction");
        for (size_t i = 0; i < out.attentions.size(); ++i)
            QVERIFY2(maxAbsDiff(out.attentions[i].weights, file.load("attn." + std::to_string(i))) < 1e-4,
                     qPrintable(QString("ablated attention %1").arg(i)));
        for (const auto& [l, h] : options.offHeads)
            QCOMPARE(out.attentions[size_t(l)].weights.sub({h}).matrix().cwiseAbs().maxCoeff(), 0.0f);
        const UNetOutput plain = model.unet->forward(sample, 500.0f, std::nullopt);
        QVERIFY(maxAbsDiff(plain.noisePred, out.noisePred) > 1e-4); // the ablation matters
        const UNetOutput none = model.unet->forward(sample, 500.0f, std::nullopt, UNetRunOptions{});
        QCOMPARE(none.noisePred.toVector(), plain.noisePred.toVector());
        UNetRunOptions bad;
        bad.offHeads = {{4, 0}};
        QVERIFY(errorOf([&] {
                    model.unet->forward(sample, 500.0f, std::nullopt, bad);
                }).contains("4 attention layers"));
        bad.offHeads = {{1, 4}};
        QVERIFY(errorOf([&] {
                    model.unet->forward(sample, 500.0f, std::nullopt, bad);
                }).contains("has 4 head(s)"));

        // predictAt: the step's own prediction without ablation, another one with it, and x̂0 from the
        // scheduler.
        DenoiseOptions o;
        o.steps = 3;
        o.seed = 4;
        DenoiseSession session(model, o);
        session.run();
        const DenoiseSession::Prediction same = session.predictAt(1, UNetRunOptions{});
        QCOMPARE(same.unet.noisePred.toVector(), session.stepAt(1).noisePred.toVector());
        QVERIFY(maxAbsDiff(same.predOriginal, session.stepAt(1).predOriginal) < 1e-6);
        UNetRunOptions off;
        off.captureAttention = false;
        off.offHeads = options.offHeads;
        QVERIFY(maxAbsDiff(session.predictAt(1, off).predOriginal, session.stepAt(1).predOriginal) > 1e-4);
    }

    // The neuron view on a U-Net layer: q·k over the head's slice, ÷√d_k, softmax over every pixel equals the
    // captured attention weight; the products sum to the dot product; bad indices are errors.
    void neuronViewReproducesTheWeight() {
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto g = unettest::golden(unettest::fixture("bare-head8") / "golden.safetensors");
        const Tensor sample = g.file.load("t500.sample");
        for (int layer : {0, 2}) {
            AttentionInputs inputs;
            UNetRunOptions o;
            o.probe = &inputs;
            o.probeLayer = layer;
            const UNetOutput out = model.unet->forward(sample, 500.0f, std::nullopt, o);
            QVERIFY(inputs.attention);
            const Tensor& w = out.attentions[size_t(layer)].weights; // [heads, N, N]
            for (const auto& [head, query, key] :
                 {std::tuple{0, 0, 0}, {3, 5, 2}, {1, int(w.dim(1)) - 1, 7}}) {
                const NeuronTerms t = neuronTerms(inputs, head, query, key);
                QCOMPARE(t.headDim, 8);
                QVERIFY2(std::abs(t.weight - w.at({head, query, key})) < 1e-5,
                         qPrintable(QString("layer %1 head %2: %3 vs %4")
                                        .arg(layer)
                                        .arg(head)
                                        .arg(t.weight)
                                        .arg(w.at({head, query, key}))));
                double sum = 0, rowTotal = 0;
                for (float p : t.product)
                    sum += p;
                QVERIFY(std::abs(sum - t.dot) < 1e-4);
                QVERIFY(std::abs(t.scaled - t.dot / std::sqrt(8.0)) < 1e-9);
                for (double s : t.rowScores)
                    rowTotal += std::exp(s - t.rowMax) / t.partition;
                QVERIFY(std::abs(rowTotal - 1.0) < 1e-9);
                QCOMPARE(t.dimensionsByContribution().size(), size_t(8));
                QVERIFY(std::abs(t.topShare(8) - 1.0) < 1e-5);
            }
            QVERIFY(errorOf([&] { neuronTerms(inputs, 4, 0, 0); }).contains("4 heads"));
            QVERIFY(errorOf([&] { neuronTerms(inputs, 0, int(w.dim(1)), 0); }).contains("query"));
        }
    }

    // Head statistics of U-Net layers, by hand: a 2×2 level of a 4×4 image (pixel centres 2 px apart); a
    // layer that looks at itself and one that spreads evenly; a wider layer makes the grid [layers, 2] with
    // NaN for the head the first lacks; there are no sinks.
    void headStatisticsOfLayers() {
        UNetAttentionMap self, spread;
        self.info = {"a", UNetPath::Contracting, 1, 1, 2, 2};
        self.weights = Tensor({1, 4, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
        spread.info = {"b", UNetPath::Bottleneck, 1, 2, 2, 2};
        spread.weights = Tensor({2, 4, 4}, 0.25f);
        const HeadStats s = captureHeadStats(unetCapture({self, spread}, 4, 4), AttentionKind::EncoderSelf);
        QCOMPARE(s.layers(), 2);
        QCOMPARE(s.heads(), 2);
        QCOMPARE(s.entropy(0, 0), 0.0f);
        QCOMPARE(s.diagonal(0, 0), 1.0f);
        QCOMPARE(s.distance(0, 0), 0.0f);
        QVERIFY(std::isnan(s.entropy(0, 1)) && std::isnan(s.distance(0, 1)));
        QVERIFY(std::abs(s.entropy(1, 1) - 1.0f) < 1e-6);
        QVERIFY(std::abs(s.distance(1, 0) - float((0 + 2 + 2 + 2 * std::sqrt(2.0)) / 4)) < 1e-5);
        QVERIFY(std::abs(s.previous(1, 0) - 0.25f) < 1e-6);
        QVERIFY(s.sink.array().isNaN().all());
    }

    // The importance of a U-Net head is the relative change of the noise prediction with it alone off.
    void headImportanceIsTheNoiseChange() {
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const auto g = unettest::golden(unettest::fixture("bare-head8") / "golden.safetensors");
        const Tensor sample = g.file.load("t500.sample");
        int calls = 0;
        Callbacks cb;
        cb.progress = [&](double, const std::string&) { ++calls; };
        const RowMatrix imp = unetHeadImportance(*model.unet, sample, 500.0f, std::nullopt, cb);
        QCOMPARE(imp.rows(), Eigen::Index(4));
        QCOMPARE(imp.cols(), Eigen::Index(4));
        QCOMPARE(calls, 16);
        UNetRunOptions plain, off;
        plain.captureAttention = off.captureAttention = false;
        off.offHeads = {{2, 1}};
        const Tensor a = model.unet->forward(sample, 500.0f, std::nullopt, plain).noisePred;
        const Tensor b = model.unet->forward(sample, 500.0f, std::nullopt, off).noisePred;
        const double expected = (b.matrix() - a.matrix()).norm() / a.matrix().norm();
        QVERIFY(std::abs(imp(2, 1) - expected) < 1e-6);
        QVERIFY((imp.array() > 0).all());
    }

    void seededSessionsAreReproducible() {
        const auto model = loadDiffusionModel(unettest::fixture("cond-pipeline"));
        const auto run = [&](uint64_t seed, SchedulerKind kind) {
            DenoiseOptions o;
            o.scheduler = kind;
            o.steps = 4;
            o.classLabel = 0;
            o.seed = seed;
            DenoiseSession s(model, o);
            s.run();
            return s.finalSample().clone();
        };
        QCOMPARE(maxAbsDiff(run(1, SchedulerKind::Ddpm), run(1, SchedulerKind::Ddpm)), 0.0);
        QVERIFY(maxAbsDiff(run(1, SchedulerKind::Ddpm), run(2, SchedulerKind::Ddpm)) > 1e-3);
        QCOMPARE(maxAbsDiff(run(5, SchedulerKind::Ddim), run(5, SchedulerKind::Ddim)), 0.0);
    }

    void progressAndCancel() {
        const auto model = loadDiffusionModel(unettest::fixture("cond-pipeline"));
        DenoiseOptions o;
        o.steps = 6;
        o.classLabel = 1;
        DenoiseSession s(model, o);
        int reports = 0;
        Callbacks cb;
        cb.progress = [&](double, const std::string&) { ++reports; };
        cb.cancelled = [&] { return s.completedSteps() >= 3; };
        QVERIFY_THROWS_EXCEPTION(Cancelled, s.run(&cb));
        QCOMPARE(s.completedSteps(), 3);
        QCOMPARE(reports, 3);
        QVERIFY(!s.done());
        QVERIFY(errorOf([&] { s.finalSample(); }).contains("not finished"));
        cb.cancelled = nullptr;
        s.run(&cb); // resumes where it stopped
        QVERIFY(s.done());
        QCOMPARE(reports, 6);
    }

    void badFoldersAndInputsGiveClearErrors() {
        QTemporaryDir tmp;
        const auto wrongClass =
            editedCopy(tmp, "cond", [](Json& c) { c["_class_name"] = "UNet3DConditionModel"; });
        QVERIFY(errorOf([&] { loadDiffusionModel(wrongClass); }).contains("UNet3DConditionModel"));
        const auto block =
            editedCopy(tmp, "block", [](Json& c) { c["down_block_types"][1] = "CrossAttnDownBlock2D"; });
        QVERIFY(errorOf([&] { loadDiffusionModel(block); }).contains("down_block_types"));
        const auto fourier =
            editedCopy(tmp, "fourier", [](Json& c) { c["time_embedding_type"] = "fourier"; });
        QVERIFY(errorOf([&] { loadDiffusionModel(fourier); }).contains("time_embedding_type"));
        // a config that disagrees with the weights: every mismatch is listed, none crashes
        const auto shapes = editedCopy(tmp, "shapes", [](Json& c) {
            c["block_out_channels"] = Json::array({16, 64});
        });
        const QString e = errorOf([&] { loadDiffusionModel(shapes); });
        QVERIFY2(e.contains("weight problems") && e.contains("expected"), qPrintable(e));
        const auto noWeights = editedCopy(tmp, "noweights", [](Json&) {});
        std::filesystem::remove(noWeights / "diffusion_pytorch_model.safetensors");
        QVERIFY(
            errorOf([&] { loadDiffusionModel(noWeights); }).contains("diffusion_pytorch_model.safetensors"));

        const auto model = loadDiffusionModel(unettest::fixture("cond-pipeline"));
        DenoiseOptions o;
        QVERIFY(errorOf([&] { DenoiseSession(model, o); }).contains("class-conditional"));
        o.classLabel = 3;
        QVERIFY(errorOf([&] { DenoiseSession(model, o); }).contains("out of range"));
        o.classLabel = 0;
        o.steps = 0;
        QVERIFY(errorOf([&] { DenoiseSession(model, o); }).contains("steps"));
        o.steps = 5;
        o.initNoise = Tensor({1, 6, 6});
        QVERIFY(errorOf([&] { DenoiseSession(model, o); }).contains("divisible by 4"));
        const auto bare = loadDiffusionModel(unettest::fixture("bare-head8"));
        QVERIFY(errorOf([&] { bare.unet->forward(Tensor({3, 8, 8}), 1.0f, 0); }).contains("unconditional"));
        QVERIFY(errorOf([&] {
                    bare.unet->forward(Tensor({2, 8, 8}), 1.0f, std::nullopt);
                }).contains("channels"));
    }

    void legacyAttentionNamesLoad() {
        // Checkpoints saved before diffusers 0.15 (the google/ddpm-* ones) call the attention's parts
        // query / key / value / proj_attn; they must load and give the same result.
        QTemporaryDir tmp;
        const auto src = unettest::fixture("bare-head8");
        const auto dst = std::filesystem::path(tmp.path().toStdString());
        std::filesystem::copy_file(src / "config.json", dst / "config.json");
        const auto file = TensorFile::open(src / "diffusion_pytorch_model.safetensors");
        std::vector<TensorToWrite> renamed;
        for (const auto& t : file.tensors()) {
            std::string name = t.name;
            for (const auto& [from, to] : {std::pair{".to_q.", ".query."},
                                           {".to_k.", ".key."},
                                           {".to_v.", ".value."},
                                           {".to_out.0.", ".proj_attn."}})
                if (const auto pos = name.find(from); pos != std::string::npos)
                    name.replace(pos, std::string(from).size(), to);
            renamed.push_back({name, file.load(t), DType::F32});
        }
        writeSafeTensors(dst / "diffusion_pytorch_model.safetensors", renamed);
        const auto model = loadDiffusionModel(dst);
        const auto g = unettest::golden(src / "golden.safetensors");
        const UNetOutput out = model.unet->forward(g.file.load("t999.sample"), 999.0f, std::nullopt);
        QVERIFY(maxAbsDiff(out.noisePred, g.file.load("t999.noise_pred")) < 1e-4);
    }

    // Regression, found by tests/fuzz/fuzz_configs: "layers_per_block": 2.4e112 reached nlohmann's
    // get<int>(), a float-to-int conversion out of range (undefined behaviour), instead of a clear error;
    // likewise a float field past float's range and an integer past int's.
    void configNumbersOutOfRangeAreErrors() {
        auto config = [](const char* key, Json value) {
            Json j = {{"_class_name", "UNet2DModel"}};
            j[key] = std::move(value);
            return JsonConfig(j, "config.json");
        };
        QVERIFY(errorOf([&] {
                    UNet2DConfig::fromJson(config("layers_per_block", 2.4e112));
                }).contains("'layers_per_block' holds a number out of range"));
        QVERIFY(errorOf([&] {
                    UNet2DConfig::fromJson(config("layers_per_block", int64_t{1} << 40));
                }).contains("out of range"));
        QVERIFY(errorOf([&] { UNet2DConfig::fromJson(config("norm_eps", 1e300)); }).contains("'norm_eps'"));
        QVERIFY(errorOf([&] {
                    UNet2DConfig::fromJson(config("block_out_channels", Json::array({8, 1e20})));
                }).contains("'block_out_channels' holds a number out of range"));
        QVERIFY(errorOf([&] {
                    UNet2DConfig::fromJson(config("layers_per_block", 2.5));
                }).contains("out of range"));
        QCOMPARE(UNet2DConfig::fromJson(config("layers_per_block", 2.0)).layersPerBlock,
                 2); // integral float: fine
    }

    void npyReaderRefusesWhatItCannotRead() {
        QTemporaryDir tmp;
        const auto write = [&](const std::string& name, const std::string& header, size_t payload) {
            const auto path = tmp.filePath(QString::fromStdString(name)).toStdString();
            std::ofstream f(path, std::ios::binary);
            f.write("\x93NUMPY\x01\x00", 8);
            const uint16_t n = static_cast<uint16_t>(header.size());
            f.put(static_cast<char>(n & 0xff));
            f.put(static_cast<char>(n >> 8));
            f << header << std::string(payload, '\0');
            return path;
        };
        const Tensor ok =
            readNpy(write("ok.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }\n", 24));
        QCOMPARE(shapeToString(ok.shape()), std::string("[1, 2, 3]"));
        QVERIFY(errorOf([&] {
                    readNpy(
                        write("f8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", 16));
                }).contains("float32"));
        QVERIFY(errorOf([&] {
                    readNpy(write("short.npy",
                                  "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }\n", 8));
                }).contains("ends before"));
        QVERIFY(errorOf([&] {
                    readNpy(write("fortran.npy",
                                  "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", 16));
                }).contains("Fortran"));
        QVERIFY(errorOf([&] {
                    readNpy(write(
                        "huge.npy",
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000, 100000), }\n",
                        0));
                }).contains("more than"));
        QVERIFY(errorOf([&] { readNpy(tmp.filePath("missing.npy").toStdString()); }).contains("cannot open"));
    }
};

QTEST_GUILESS_MAIN(TestUnet)
#include "test_unet.moc"
