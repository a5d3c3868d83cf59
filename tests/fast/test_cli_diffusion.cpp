// attnlens-cli unet / diffuse / inspect / bench on diffusers folders, as a user runs them (QProcess on
// ATTNLENS_CLI_PATH): JSON shape and values against the independent reference's goldens, the PNG, and
// exit status 2 with one "error:" line for every kind of bad input the diffusion issue lists.

#include "core/analysis/attention_captures.h"
#include "core/diffusion/unet_maps.h"
#include "core/io/json_file.h"
#include "core/io/npy_reader.h"
#include "core/io/safetensors.h"
#include "core/vision/image_io.h"
#include "support/cli_run.h"
#include "support/gif_read.h"
#include "support/json_compare.h"
#include "support/unet_fixtures.h"

#include <QFileInfo>
#include <QFloat16> // qCompare overloads: nlohmann::json conversions need qfloat16 complete
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace attnlens;
using clitest::run;
using jsontest::maxDiff;

namespace {

void expectError(const QStringList& args, const QString& fragment) {
    clitest::expectError(clitest::run(args), fragment);
}

QString fx(const std::string& name) {
    return QString::fromStdString(unettest::fixture(name).string());
}
QString sampleOf(const std::string& name) {
    return fx(name) + "/sample_t500.npy";
}

QString editedCopy(const QTemporaryDir& tmp, const char* name, const std::function<void(Json&)>& edit) {
    return QString::fromStdString(unettest::editedCopy(tmp.path().toStdString(), name, edit).string());
}

} // namespace

class TestCliDiffusion : public QObject {
    Q_OBJECT
private slots:
    void unetWritesNoiseAndEveryAttentionLayer() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("u.json");
        const auto r = run({"unet", "--model", fx("cond-pipeline"), "--sample", sampleOf("cond-pipeline"),
                            "--timestep", "500", "--class", "2", "--json", out});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        QVERIFY(r.out.contains("mid_block.attentions.0"));
        const Json j = readJsonFile(out.toStdString());
        const auto g = unettest::golden(unettest::fixture("cond-pipeline") / "golden.safetensors");
        QVERIFY(maxDiff(g.file.load("t500.noise_pred"), j["noise_pred"]) < 1e-4);
        QCOMPARE(j["attentions"].size(), g.meta["attentions"].size());
        for (const auto& a : j["attentions"]) {
            const std::string name = a["name"].get<std::string>();
            QVERIFY(a.contains("heads") && a.contains("spatial") && a.contains("path"));
            QVERIFY2(maxDiff(g.file.load("t500.attn." + name), a["weights"]) < 1e-4, name.c_str());
            QCOMPARE(a["value_norms"].size(), a["weights"].size()); // [heads][keys]
            QCOMPARE(a["value_norms"][0].size(), a["weights"][0][0].size());
            QVERIFY(a["value_norms"][0][0].get<double>() > 0);
        }
        // the class by its id2label name gives the same result
        const QString byName = tmp.filePath("n.json");
        QCOMPARE(run({"unet", "--model", fx("cond-pipeline"), "--sample", sampleOf("cond-pipeline"),
                      "--timestep", "500", "--class", "cross", "--json", byName})
                     .exitCode,
                 0);
        QCOMPARE(readJsonFile(byName.toStdString())["noise_pred"], j["noise_pred"]);
    }

    // A Stable-Diffusion-layout U-Net: --encoder-states feeds its cross-attention; the JSON holds every self-
    // and cross-attention layer as diffusers' own UNet2DConditionModel computes them (make_t2i_fixtures.py).
    void unetRunsATextConditionedUNet() {
        QTemporaryDir tmp;
        const auto dir = std::filesystem::path(ATTNLENS_TEST_DATA) / "t2i" / "tiny-pipe" / "unet";
        const QString model = QString::fromStdString(dir.string());
        const QString sample = model + "/sample_t500.npy", states = model + "/encoder_hidden_states.npy";
        const QString out = tmp.filePath("t.json");
        const auto r = run({"unet", "--model", model, "--sample", sample, "--timestep", "500",
                            "--encoder-states", states, "--json", out});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        QVERIFY(r.out.contains("attn2  contracting  8x8 -> 77 text tokens"));
        const Json j = readJsonFile(out.toStdString());
        const auto g = unettest::golden(dir / "golden.safetensors");
        QVERIFY(maxDiff(g.file.load("t500.noise_pred"), j["noise_pred"]) < 1e-4);
        QCOMPARE(j["attentions"].size(), size_t(22));
        for (const auto& a : j["attentions"]) {
            const std::string name = a["name"].get<std::string>();
            QCOMPARE(a["cross"].get<bool>(), name.ends_with("attn2"));
            QCOMPARE(a["weights"][0][0].size(),
                     size_t(a["cross"].get<bool>()
                                ? 77
                                : a["spatial"][0].get<int>() * a["spatial"][1].get<int>()));
            QVERIFY2(maxDiff(g.file.load("t500.attn." + name), a["weights"]) < 1e-4, name.c_str());
        }
        expectError({"unet", "--model", model, "--sample", sample, "--timestep", "500"}, "--encoder-states");
        const QString narrow = QString::fromStdString((std::filesystem::path(ATTNLENS_TEST_DATA) / "t2i" /
                                                       "unet-linear-fp16" / "encoder_hidden_states.npy")
                                                          .string());
        expectError(
            {"unet", "--model", model, "--sample", sample, "--timestep", "500", "--encoder-states", narrow},
            "cross_attention_dim is 32");
        expectError({"unet", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "5", "--encoder-states", states},
                    "not text-conditioned");
        expectError({"diffuse", "--model", model, "--scheduler", "ddim", "--steps", "2"}, "text-conditioned");
        expectError({"heads", "--model", model, "--sample", sample, "--timestep", "5"}, "text-conditioned");
    }

    // t2i on the tiny pipeline: the JSON's latents and image are diffusers' StableDiffusionPipeline's
    // (injected initial latents), per step every cross-attention layer of both guidance halves; --maps,
    // --out; bad input.
    void t2iRunsAStableDiffusionPipeline() {
        QTemporaryDir tmp;
        const auto pipeDir = std::filesystem::path(ATTNLENS_TEST_DATA) / "t2i" / "tiny-pipe";
        const QString pipe = QString::fromStdString(pipeDir.string());
        const auto g = unettest::golden(pipeDir / "golden" / "golden.safetensors");
        const Json& c = g.meta["cases"][1]; // euler4-wide: guided, 16x24, a negative prompt
        QCOMPARE(c["name"].get<std::string>(), std::string("euler4-wide"));
        const QString json = tmp.filePath("run.json"), png = tmp.filePath("img.png"),
                      npy = tmp.filePath("maps.npy");
        const auto r = run({"t2i",
                            "--model",
                            pipe,
                            "--prompt",
                            QString::fromStdString(c["prompt"].get<std::string>()),
                            "--negative",
                            "blurry",
                            "--steps",
                            "4",
                            "--guidance",
                            "3",
                            "--scheduler",
                            "euler",
                            "--init-latents",
                            pipe + "/golden/euler4-wide.init_latents.npy",
                            "--json",
                            json,
                            "--out",
                            png,
                            "--maps",
                            npy});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        QVERIFY2(r.out.contains("euler, 4 U-Net calls x 2 (guided): 16x24 image"), qPrintable(r.out));
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["timesteps"].get<std::vector<float>>(), c["timesteps"].get<std::vector<float>>());
        const Tensor latents = g.file.load("euler4-wide.latents");
        Tensor last({4, 8, 12});
        std::copy_n(latents.data() + 3 * last.numel(), last.numel(), last.data());
        QVERIFY(maxDiff(last, j["final_latents"]) < 1e-3);
        QVERIFY(maxDiff(g.file.load("euler4-wide.image"), j["image"]) < 1e-3);
        QCOMPARE(j["per_step"].size(), size_t(4));
        const Json& layer = j["per_step"][0]["cross_attention"][0];
        QCOMPARE(layer["name"].get<std::string>(),
                 std::string("down_blocks.0.attentions.0.transformer_blocks.0.attn2"));
        QCOMPARE(layer["cond"][0].size(), size_t(8 * 12));
        QCOMPARE(layer["cond"][0][0].size(), size_t(77));
        QVERIFY(layer.contains("uncond"));
        QCOMPARE(j["tokens"][0].get<std::string>(), std::string("<|startoftext|>"));
        QCOMPARE(readNpy(npy.toStdString()).shape(), (Shape{77, 16, 24}));
        QCOMPARE(loadImage(png.toStdString()).width, 24);
        // the long prompt: truncated at 77 and said so
        const auto longRun = run({"t2i", "--model", pipe, "--prompt",
                                  QString::fromStdString(g.meta["cases"][3]["prompt"].get<std::string>()),
                                  "--steps", "1", "--size", "16x16"});
        QVERIFY2(longRun.exitCode == 0, qPrintable(longRun.err));
        QVERIFY2(longRun.err.contains("truncated"), qPrintable(longRun.err));
        // --value-weighted: both halves' value-weighted maps beside the weights, rows distributions
        const QString weighted = tmp.filePath("w.json"), overlay = tmp.filePath("w.png");
        const auto w =
            run({"t2i", "--model", pipe, "--prompt", "a sneaker above a bag", "--steps", "1", "--size",
                 "16x16", "--value-weighted", "--json", weighted, "--overlay", overlay, "--word", "sneaker"});
        QVERIFY2(w.exitCode == 0, qPrintable(w.err));
        const Json wj = readJsonFile(weighted.toStdString());
        const Json& wl = wj["per_step"][0]["cross_attention"][0];
        QCOMPARE(wl["cond_value_weighted"][0].size(), wl["cond"][0].size());
        QVERIFY(wl.contains("uncond_value_weighted"));
        double sum = 0;
        for (const auto& v : wl["cond_value_weighted"][0][5])
            sum += v.get<double>();
        QVERIFY(std::abs(sum - 1.0) < 1e-4);
        QVERIFY(wl["cond_value_weighted"][0][5] != wl["cond"][0][5]);
        QVERIFY(QFileInfo(overlay).size() > 0);
        // bad input: one error line, exit 2
        expectError({"t2i", "--model", pipe, "--steps", "2"}, "--prompt");
        expectError({"t2i", "--model", pipe, "--prompt", "a cat", "--scheduler", "lms"}, "--scheduler");
        expectError({"t2i", "--model", pipe, "--prompt", "a cat", "--size", "12x16"}, "divisible by 8");
        expectError({"t2i", "--model", pipe + "/unet", "--prompt", "a cat"}, "model_index.json");
        expectError({"t2i", "--model", pipe, "--prompt", "a cat", "--init-latents", sampleOf("bare-head8")},
                    "initial latents");
    }

    // --ablate: the JSON is the ablated run (the reference's head-masked golden) and says how far the noise
    // moved; neuron: one score of a U-Net head rebuilt, equal to the captured weight; bad heads and tokens
    // are errors.
    void unetAblationAndNeuronView() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("a.json");
        const auto r = run({"unet", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"),
                            "--timestep", "500", "--ablate", "0:1,1:0,1:3,3:2", "--json", out});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        QVERIFY2(r.err.contains("ablated 4 head(s)"), qPrintable(r.err));
        const Json j = readJsonFile(out.toStdString());
        const auto file = TensorFile::open(unettest::fixture("bare-head8") / "golden_ablate.safetensors");
        QVERIFY(maxDiff(file.load("noise_pred"), j["noise_pred"]) < 1e-4);
        QVERIFY(maxDiff(file.load("attn.1"), j["attentions"][1]["weights"]) < 1e-4);
        QCOMPARE(j["ablated"].size(), size_t(4));
        QVERIFY(j["noise_pred_relative_change"].get<double>() > 0.0);
        expectError({"unet", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "500", "--ablate", "4:0"},
                    "--ablate");
        expectError({"unet", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "500", "--ablate", "0:9"},
                    "--ablate");

        const QString n = tmp.filePath("n.json");
        const QString png = tmp.filePath("n.png");
        const auto nr = run({"neuron", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"),
                             "--timestep", "500", "--layer", "1", "--head", "3", "--query", "2,3", "--key",
                             "argmax", "--json", n, "--png", png});
        QVERIFY2(nr.exitCode == 0 && !nr.crashed, qPrintable(nr.err));
        QVERIFY(nr.out.contains("mid_block.attentions.0"));
        const Json nj = readJsonFile(n.toStdString());
        QCOMPARE(nj["query"]["index"].get<int>(), 2 * 4 + 3);
        QCOMPARE(nj["head_dim"].get<int>(), 8);
        QVERIFY(std::abs(nj["weight"].get<double>() - nj["captured_weight"].get<double>()) < 1e-5);
        double sum = 0;
        for (const auto& v : nj["product"])
            sum += v.get<double>();
        QVERIFY(std::abs(sum - nj["dot"].get<double>()) < 1e-4);
        QCOMPARE(nj["row_scores"].size(), size_t(16));
        QVERIFY(!loadImage(png.toStdString()).empty());
        expectError({"neuron", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "500", "--layer", "1", "--head", "4", "--query", "0", "--key", "0"},
                    "--head");
        expectError({"neuron", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "500", "--layer", "1", "--head", "0", "--query", "16", "--key", "0"},
                    "--query");
        expectError({"neuron", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "500", "--layer", "7", "--head", "0", "--query", "0", "--key", "0"},
                    "--layer");
        expectError({"neuron", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "500", "--kind", "cross", "--layer", "0", "--head", "0", "--query", "0", "--key", "0"},
                    "--kind");
        expectError({"neuron", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--timestep",
                     "500", "--layer", "0", "--head", "0", "--query", "0"},
                    "--key");
    }

    // heads --sample: the statistics of every U-Net layer, as core computes them, with the layers' names.
    void headsDescribeUNetLayers() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("h.json");
        const auto r = run({"heads", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"),
                            "--timestep", "500", "--stat", "distance", "--json", out});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        QVERIFY(r.out.startsWith("unet distance"));
        const Json k = readJsonFile(out.toStdString())["kinds"]["unet"];
        QCOMPARE(k["layer_names"][1].get<std::string>(), std::string("mid_block.attentions.0"));
        const auto model = loadDiffusionModel(unettest::fixture("bare-head8"));
        const Tensor sample = readNpy(sampleOf("bare-head8").toStdString());
        const Tensor chw = sample.reshaped({sample.dim(1), sample.dim(2), sample.dim(3)});
        const HeadStats s =
            captureHeadStats(unetCapture(model.unet->forward(chw, 500.0f, std::nullopt).attentions, 8, 8),
                             AttentionKind::EncoderSelf);
        for (int l = 0; l < s.layers(); ++l)
            for (int h = 0; h < s.heads(); ++h) {
                QVERIFY(std::abs(k["entropy"][l][h].get<double>() - s.entropy(l, h)) < 1e-6);
                QVERIFY(std::abs(k["distance"][l][h].get<double>() - s.distance(l, h)) < 1e-5);
                QVERIFY(k["sink"][l][h].is_null());
            }
        expectError({"heads", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8")}, "--timestep");
    }

    void diffuseReproducesTheReferenceTrajectory() {
        QTemporaryDir tmp;
        const auto dir = unettest::fixture("cond-pipeline") / "trajectories";
        const auto g = unettest::golden(dir / "trajectories.safetensors");
        const QString json = tmp.filePath("d.json"), png = tmp.filePath("d.png");
        const auto r = run({"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddpm", "--steps", "10",
                            "--class", "1", "--init-noise",
                            QString::fromStdString((dir / "init_noise.npy").string()), "--noise-dir",
                            QString::fromStdString((dir / "noise").string()), "--json", json, "--out", png});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["timesteps"].get<std::vector<int>>(),
                 g.meta["ddpm10"]["timesteps"].get<std::vector<int>>());
        QVERIFY(maxDiff(g.file.load("ddpm10.final"), j["final_sample"]) < 1e-3);
        const ImageU8 img = loadImage(png.toStdString());
        QCOMPARE(img.width, 8);
        QCOMPARE(img.height, 8);
    }

    void seedsAreReproducible() {
        QTemporaryDir tmp;
        const auto generate = [&](const QString& seed, const QString& out) {
            return run({"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddim", "--steps", "5",
                        "--class", "0", "--seed", seed, "--json", out})
                .exitCode;
        };
        QCOMPARE(generate("7", tmp.filePath("a.json")), 0);
        QCOMPARE(generate("7", tmp.filePath("b.json")), 0);
        QCOMPARE(generate("8", tmp.filePath("c.json")), 0);
        const Json a = readJsonFile(tmp.filePath("a.json").toStdString());
        QCOMPARE(a["final_sample"], readJsonFile(tmp.filePath("b.json").toStdString())["final_sample"]);
        QVERIFY(a["final_sample"] != readJsonFile(tmp.filePath("c.json").toStdString())["final_sample"]);
    }

    void overlayDrawsAQueryPixelsMap() {
        QTemporaryDir tmp;
        const QString png = tmp.filePath("o.png");
        const QStringList base{
            "diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddim", "--steps", "4", "--class", "1"};
        const auto r =
            run(base + QStringList{"--overlay", png, "--layer", "mid_block.attentions.0", "--query", "7,0",
                                   "--step", "2", "--on", "xt", "--colormap", "viridis", "--opacity", "0.5"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("mid_block.attentions.0 (2x2)"));
        const ImageU8 img = loadImage(png.toStdString());
        QCOMPARE(img.width, 256); // 8×8 enlarged ×32 with crisp pixels
        QCOMPARE(img.height, 256);
        QCOMPARE(run(base + QStringList{"--overlay", png, "--layer", "6", "--head", "0"}).exitCode, 0);
        expectError(base + QStringList{"--overlay", png, "--layer", "7"}, "--layer");
        expectError(base + QStringList{"--overlay", png, "--layer", "mid_block.attentions.1"},
                    "no attention layer");
        expectError(base + QStringList{"--overlay", png, "--step", "4"}, "--step");
        expectError(base + QStringList{"--overlay", png, "--query", "8,0"}, "outside");
        expectError(base + QStringList{"--overlay", png, "--head", "1"}, "--head");
        expectError(base + QStringList{"--step", "1"}, "--overlay only");
        expectError(base + QStringList{"--query", "1,1"}, "--overlay and --gif only");
    }

    void gifAndRegionQueriesAndKeySide() {
        QTemporaryDir tmp;
        const QString gif = tmp.filePath("t.gif"), a = tmp.filePath("a.png"), b = tmp.filePath("b.png");
        const QStringList base{"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddim",
                               "--steps", "4",       "--class",           "1",           "--layer",
                               "0"};
        auto r = run(base + QStringList{"--gif", gif, "--delay", "250", "--query", "1,1:4,5", "--on", "xt"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("gif: 4 frames"));
        const giftest::Gif g = giftest::read(gif.toStdString());
        QVERIFY2(g.error.isEmpty(), qPrintable(g.error));
        QCOMPARE(static_cast<int>(g.frames.size()), 4); // one frame per step
        QCOMPARE(g.width, 256);
        QCOMPARE(g.frames[0].delay, 25);
        QVERIFY(g.loops);
        // a region and its key side draw different maps; a one-pixel region is the pixel query
        QCOMPARE(run(base + QStringList{"--overlay", a, "--query", "1,1:4,5"}).exitCode, 0);
        QCOMPARE(run(base + QStringList{"--overlay", b, "--query", "1,1:4,5", "--key-side"}).exitCode, 0);
        QVERIFY(loadImage(a.toStdString()).pixels != loadImage(b.toStdString()).pixels);
        QCOMPARE(run(base + QStringList{"--overlay", a, "--query", "3,2:3,2"}).exitCode, 0);
        QCOMPARE(run(base + QStringList{"--overlay", b, "--query", "3,2"}).exitCode, 0);
        QCOMPARE(loadImage(a.toStdString()).pixels, loadImage(b.toStdString()).pixels);
        // value-weighted: another map over the same image
        QCOMPARE(run(base + QStringList{"--overlay", b, "--query", "3,2", "--value-weighted"}).exitCode, 0);
        QVERIFY(loadImage(a.toStdString()).pixels != loadImage(b.toStdString()).pixels);
        expectError(QStringList{"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddim", "--steps",
                                "4", "--class", "1", "--value-weighted"},
                    "--overlay and --gif only");
        expectError(base + QStringList{"--overlay", a, "--query", "4,4:2,2"}, "--query");
        expectError(base + QStringList{"--overlay", a, "--query", "1,1:8,2"}, "outside");
        expectError(base + QStringList{"--gif", gif, "--step", "1"}, "--overlay only");
        expectError(base + QStringList{"--overlay", a, "--delay", "100"}, "--gif only");
        expectError(base + QStringList{"--gif", "/nonexistent-dir/t.gif"}, "/nonexistent-dir/t.gif");
        expectError(QStringList{"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddim", "--steps",
                                "4", "--class", "1", "--key-side"},
                    "--overlay and --gif only");
    }

    void inspectAndBenchDescribeDiffusionFolders() {
        const auto r = run({"inspect", "--model", fx("cond-pipeline")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("UNet2DModel") && r.out.contains("DDPMPipeline") &&
                r.out.contains("7 layers"));
        const auto b =
            run({"bench", "--model", fx("bare-head8"), "--sample", sampleOf("bare-head8"), "--repeat", "2"});
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        const Json j = Json::parse(b.out.toStdString());
        QCOMPARE(j["task"].get<std::string>(), std::string("unet"));
        QVERIFY(j["median_ms"].get<double>() > 0);
        QCOMPARE(j["attention_layers"].get<int>(), 4);
        // the form: only the folder (seeded noise of its sample_size)
        const auto b2 = run({"bench", "--model", fx("cond-pipeline"), "--repeat", "1"});
        QVERIFY2(b2.exitCode == 0, qPrintable(b2.err));
        QCOMPARE(Json::parse(b2.out.toStdString())["sample"], Json::array({1, 8, 8}));
        for (const char* cmd : {"unet", "diffuse"}) {
            const auto h = run({cmd, "--help"});
            QVERIFY2(h.exitCode == 0 && h.out.contains("usage"), cmd);
        }
    }

    void badInputEndsInOneErrorLine() {
        QTemporaryDir tmp;
        const QString wrongClass =
            editedCopy(tmp, "wrongclass", [](Json& c) { c["_class_name"] = "UNet3DConditionModel"; });
        expectError(QStringList({"unet", "--model", wrongClass, "--sample", sampleOf("bare-head8"),
                                 "--timestep", "1"}),
                    "UNet3DConditionModel");
        // a UNet2DModel's blocks under the text-conditioned class name
        const QString asText =
            editedCopy(tmp, "astext", [](Json& c) { c["_class_name"] = "UNet2DConditionModel"; });
        expectError(
            QStringList({"unet", "--model", asText, "--sample", sampleOf("bare-head8"), "--timestep", "1"}),
            "AttnDownBlock2D");
        const QString block =
            editedCopy(tmp, "block", [](Json& c) { c["up_block_types"][0] = "CrossAttnUpBlock2D"; });
        expectError(
            QStringList({"unet", "--model", block, "--sample", sampleOf("bare-head8"), "--timestep", "1"}),
            "up_block_types");
        const QString noWeights = editedCopy(tmp, "noweights", [](Json&) {});
        std::filesystem::remove(std::filesystem::path(noWeights.toStdString()) /
                                "diffusion_pytorch_model.safetensors");
        expectError(QStringList({"unet", "--model", noWeights, "--sample", sampleOf("bare-head8"),
                                 "--timestep", "1"}),
                    "diffusion_pytorch_model.safetensors");
        const QString shapes = editedCopy(tmp, "shapes", [](Json& c) { c["layers_per_block"] = 2; });
        expectError(
            QStringList({"unet", "--model", shapes, "--sample", sampleOf("bare-head8"), "--timestep", "1"}),
            "is missing");
        // a sample of the wrong shape, and one of the wrong dtype
        expectError(QStringList({"unet", "--model", fx("bare-head8"), "--sample", sampleOf("cond-pipeline"),
                                 "--timestep", "1"}),
                    "channels");
        const QString f8 = tmp.filePath("f8.npy");
        {
            std::ofstream f(f8.toStdString(), std::ios::binary);
            const std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3, 8, 8), }\n";
            f.write("\x93NUMPY\x01\x00", 8);
            f.put(static_cast<char>(header.size()));
            f.put(0);
            f << header << std::string(8 * 192, '\0');
        }
        expectError(QStringList({"unet", "--model", fx("bare-head8"), "--sample", f8, "--timestep", "1"}),
                    "float32");
        expectError(
            QStringList({"diffuse", "--model", fx("bare-head8"), "--scheduler", "ddim", "--steps", "0"}),
            "--steps");
        expectError(QStringList({"diffuse", "--model", fx("bare-head8"), "--scheduler", "ddim", "--steps",
                                 "5", "--class", "1"}),
                    "unconditional");
        expectError(
            QStringList({"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddim", "--steps", "5"}),
            "class-conditional");
        expectError(
            QStringList({"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "euler", "--steps", "5"}),
            "ddim or ddpm");
        expectError(QStringList({"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddpm", "--steps",
                                 "2000", "--class", "0"}),
                    "1..1000");
        expectError(QStringList({"diffuse", "--model", fx("cond-pipeline"), "--scheduler", "ddpm", "--steps",
                                 "3", "--class", "0", "--noise-dir", tmp.path()}),
                    "step_000.npy");
        expectError(QStringList({"unet", "--model", fx("cond-pipeline"), "--sample",
                                 sampleOf("cond-pipeline"), "--timestep", "5000", "--class", "0"}),
                    "--timestep");
    }
};

QTEST_GUILESS_MAIN(TestCliDiffusion)
#include "test_cli_diffusion.moc"
