// The parts of a Stable Diffusion pipeline besides the U-Net against diffusers v0.25's own classes
// (tools/golden/make_t2i_fixtures.py): the AutoencoderKL decoder, and the PNDM (PLMS) / DDIM / Euler /
// DPM-Solver schedulers built from SD 1.5's and SD 2.x's scheduler configs as from_config builds them, driven
// by a stand-in model through whole trajectories. Runs under ASan + UBSan in CI (label fast).

#include "core/diffusion/sampler.h"
#include "core/diffusion/t2i_pipeline.h"
#include "core/io/npy_reader.h"
#include "core/models/vae_decoder.h"
#include "core/util/error.h"
#include "support/error_of.h"
#include "support/unet_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

using namespace attnlens;
using unettest::maxAbsDiff;

namespace {

std::filesystem::path t2iData(const std::string& name) {
    return std::filesystem::path(ATTNLENS_TEST_DATA) / "t2i" / name;
}

float maxAbs(const Tensor& t) {
    float m = 0;
    for (int64_t i = 0; i < t.numel(); ++i)
        m = std::max(m, std::abs(t.data()[i]));
    return m;
}

} // namespace

class TestT2i : public QObject {
    Q_OBJECT
private slots:
    void vaeDecoderMatchesDiffusers() {
        const auto vae = AutoencoderKLDecoder::load(t2iData("tiny-pipe/vae"));
        QCOMPARE(vae->config().scaleFactor(), 2);
        QCOMPARE(vae->config().scalingFactor, 0.18215f);
        const auto g = unettest::golden(t2iData("tiny-pipe/vae") / "golden.safetensors");
        for (const char* c : {"case0", "case1"}) {
            const Tensor decoded = vae->decode(g.file.load(std::string(c) + ".latents"));
            const Tensor expected = g.file.load(std::string(c) + ".decoded");
            QCOMPARE(shapeToString(decoded.shape()), shapeToString(expected.shape()));
            const double diff = maxAbsDiff(decoded, expected);
            qInfo("%s %s: max |Δ| %.2e", c, shapeToString(decoded.shape()).c_str(), diff);
            QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
        }
        QVERIFY(errorOf([&] { vae->decode(Tensor({3, 8, 8})); }).contains("[4, height, width]"));
    }

    void vaeConfigsRefusedByName() {
        QTemporaryDir tmp;
        const auto dst = std::filesystem::path(tmp.path().toStdString()) / "vae";
        std::filesystem::copy(t2iData("tiny-pipe/vae"), dst);
        Json cfg = readJsonFile(dst / "config.json");
        cfg["shift_factor"] = 0.1159;
        writeJsonFile(dst / "config.json", cfg, 1);
        QVERIFY(errorOf([&] { AutoencoderKLDecoder::load(dst); }).contains("shift_factor"));
        cfg.erase("shift_factor");
        cfg["_class_name"] = "AutoencoderTiny";
        writeJsonFile(dst / "config.json", cfg, 1);
        QVERIFY(errorOf([&] { AutoencoderKLDecoder::load(dst); }).contains("AutoencoderTiny"));
        cfg["_class_name"] = "AutoencoderKL";
        cfg["latent_channels"] = 8;
        writeJsonFile(dst / "config.json", cfg, 1);
        QVERIFY(errorOf([&] { AutoencoderKLDecoder::load(dst); }).contains("post_quant_conv.weight"));
    }

    void schedulersFollowDiffusersTrajectories() {
        const auto g = unettest::golden(t2iData("schedulers") / "golden.safetensors");
        const Tensor noise = g.file.load("noise");
        const Tensor x0 = g.file.load("x0");
        const int64_t n = x0.numel();
        for (const auto& c : g.meta["cases"]) {
            const std::string name = c["name"].get<std::string>();
            Json config = readJsonFile(t2iData("schedulers") / c["config"].get<std::string>());
            for (const auto& [k, v] : c["extra"].items())
                config[k] = v;
            const auto kind = samplerOfClass(c["class"].get<std::string>());
            QVERIFY(kind);
            Sampler s(*kind, JsonConfig(config, "scheduler_config.json"));
            s.setTimesteps(c["steps"].get<int>());
            QCOMPARE(s.timesteps(), c["timesteps"].get<std::vector<float>>());
            QVERIFY2(std::abs(s.initNoiseSigma() - c["init_noise_sigma"].get<float>()) <=
                         1e-6f * c["init_noise_sigma"].get<float>(),
                     name.c_str());
            const Tensor expected = g.file.load(name + ".samples"); // [calls + 1, 4, 4, 4]
            Tensor x(x0.shape());
            for (int64_t i = 0; i < n; ++i)
                x.data()[i] = x0.data()[i] * s.initNoiseSigma();
            double worst = 0;
            for (size_t i = 0; i < s.timesteps().size(); ++i) {
                const Tensor in = s.scaleModelInput(x, i);
                Tensor out(x.shape());
                for (int64_t e = 0; e < n; ++e)
                    out.data()[e] = 0.3f * in.data()[e] + 0.7f * noise.data()[int64_t(i) * n + e];
                x = s.step(out, i, x);
                Tensor want({4, 4, 4});
                std::copy_n(expected.data() + int64_t(i + 1) * n, n, want.data());
                worst = std::max(worst, maxAbsDiff(x, want) / std::max(1.0f, maxAbs(want)));
            }
            qInfo("%s: %zu calls, relative max |Δ| %.2e", name.c_str(), s.timesteps().size(), worst);
            QVERIFY2(worst < 1e-5, name.c_str());
        }
    }

    // StableDiffusionPipeline.__call__ with injected initial latents: every step's latents and the image
    // within 1e-3, the ids, the timesteps, and the last call's cross-attention maps of both guidance halves,
    // per head.
    void pipelineFollowsDiffusers() {
        const auto pipe = TextToImagePipeline::load(t2iData("tiny-pipe"));
        QCOMPARE(pipe->defaultSize(), 16);
        QCOMPARE(pipe->folderSampler(), std::optional<SamplerKind>(SamplerKind::Pndm));
        const auto g = unettest::golden(t2iData("tiny-pipe/golden/golden.safetensors"));
        for (const auto& c : g.meta["cases"]) {
            const std::string name = c["name"].get<std::string>();
            T2iRequest r;
            r.prompt = c["prompt"].get<std::string>();
            r.negative = c["negative"].get<std::string>();
            r.steps = c["steps"].get<int>();
            r.guidance = c["guidance"].get<float>();
            r.height = c["height"].get<int>();
            r.width = c["width"].get<int>();
            r.sampler = samplerOfClass(c["scheduler"].get<std::string>());
            r.allHeads = true;
            Tensor init = readNpy(t2iData("tiny-pipe/golden") / (name + ".init_latents.npy"));
            r.initLatents = init.reshaped({init.dim(1), init.dim(2), init.dim(3)});
            const T2iResult out = runTextToImage(*pipe, r, nullptr);
            QCOMPARE(out.ids, c["ids"].get<std::vector<int>>());
            QCOMPARE(out.timesteps, c["timesteps"].get<std::vector<float>>());
            const Tensor latents = g.file.load(name + ".latents");
            QCOMPARE(int64_t(out.steps.size()), latents.dim(0));
            double worstLatent = 0;
            const int64_t per = out.finalLatents.numel();
            for (size_t i = 0; i < out.steps.size(); ++i) {
                Tensor want(out.finalLatents.shape());
                std::copy_n(latents.data() + int64_t(i) * per, per, want.data());
                worstLatent = std::max(worstLatent, maxAbsDiff(out.steps[i].latents, want));
            }
            const Tensor image = g.file.load(name + ".image"); // [H, W, 3]
            double worstImage = 0;
            const int64_t plane = image.dim(0) * image.dim(1);
            QCOMPARE(out.image.dim(1), image.dim(0));
            QCOMPARE(out.image.dim(2), image.dim(1));
            for (int64_t p = 0; p < plane; ++p)
                for (int ch = 0; ch < 3; ++ch)
                    worstImage = std::max(worstImage, double(std::abs(out.image.data()[ch * plane + p] -
                                                                      image.data()[p * 3 + ch])));
            double worstMap = 0;
            const bool guided = r.guidance > 1.0f;
            QCOMPARE(int(out.steps.back().maps.size()), c["cross_layers"].get<int>());
            for (const T2iCrossMap& m : out.steps.back().maps) {
                const Tensor want = g.file.load(name + ".last." + m.layer.name); // [2|1, heads, q, 77]
                QCOMPARE(want.dim(0), int64_t(guided ? 2 : 1));
                const int64_t n = m.cond.numel();
                QCOMPARE(want.numel(), n * want.dim(0));
                Tensor cond(m.cond.shape()), uncond(m.cond.shape());
                std::copy_n(want.data() + (guided ? n : 0), n, cond.data());
                worstMap = std::max(worstMap, maxAbsDiff(m.cond, cond));
                if (guided) {
                    std::copy_n(want.data(), n, uncond.data());
                    worstMap = std::max(worstMap, maxAbsDiff(m.uncond, uncond));
                } else {
                    QVERIFY(m.uncond.empty());
                }
            }
            qInfo("%s: %zu calls, latents %.2e, image %.2e, maps %.2e", name.c_str(), out.steps.size(),
                  worstLatent, worstImage, worstMap);
            QVERIFY2(worstLatent < 1e-3 && worstImage < 1e-3 && worstMap < 1e-4, name.c_str());
            QCOMPARE(out.truncated, name == "ddim3-long");
        }
    }

    void wordMapsAggregateOverStepsAndLayers() {
        const auto pipe = TextToImagePipeline::load(t2iData("tiny-pipe"));
        T2iRequest r;
        r.prompt = "a sneaker above a bag";
        r.steps = 2;
        r.height = 16;
        r.width = 24;
        const T2iResult out = runTextToImage(*pipe, r, nullptr);
        QCOMPARE(out.steps.size(), size_t(3));                       // PLMS: steps + 1 calls
        QCOMPARE(out.steps[0].maps.front().cond.dim(0), int64_t(1)); // mean over heads
        const Tensor maps = aggregateWordMaps(out, 16, 24);
        QCOMPARE(shapeToString(maps.shape()), std::string("[77, 16, 24]"));
        // each pixel's row of every map sums to 1 over the 77 tokens, and so does their mean (bicubic keeps
        // constants)
        for (int64_t p = 0; p < 16 * 24; p += 37) {
            float sum = 0;
            for (int64_t k = 0; k < 77; ++k)
                sum += maps.data()[k * 16 * 24 + p];
            QVERIFY2(std::abs(sum - 1.0f) < 1e-3f, qPrintable(QString::number(sum)));
        }
        // the same seed, the same run; another seed, another image
        QVERIFY(maxAbsDiff(runTextToImage(*pipe, r, nullptr).image, out.image) == 0);
        r.seed = 7;
        QVERIFY(maxAbsDiff(runTextToImage(*pipe, r, nullptr).image, out.image) > 1e-3);
    }

    void badPipelinesAndRequestsAreNamed() {
        QTemporaryDir tmp;
        const auto copy = [&](const std::string& name, const std::function<void(Json&)>& edit) {
            const auto dst = std::filesystem::path(tmp.path().toStdString()) / name;
            std::filesystem::copy(t2iData("tiny-pipe"), dst, std::filesystem::copy_options::recursive);
            Json index = readJsonFile(dst / "model_index.json");
            edit(index);
            writeJsonFile(dst / "model_index.json", index, 1);
            return dst;
        };
        const auto sdxl = copy("sdxl", [](Json& j) {
            j["text_encoder_2"] = {"transformers", "CLIPTextModelWithProjection"};
        });
        QVERIFY(errorOf([&] { TextToImagePipeline::load(sdxl); }).contains("two text encoders"));
        const auto sd3 = copy("sd3", [](Json& j) {
            j["transformer"] = {"diffusers", "SD3Transformer2DModel"};
        });
        QVERIFY(errorOf([&] { TextToImagePipeline::load(sd3); }).contains("MMDiT"));
        const auto unknown = copy("unknown", [](Json& j) {
            j["unet"] = {"diffusers", "UNet3DConditionModel"};
        });
        QVERIFY(errorOf([&] { TextToImagePipeline::load(unknown); }).contains("UNet3DConditionModel"));
        const auto noVae = copy("novae", [](Json&) {});
        std::filesystem::remove_all(noVae / "vae");
        QVERIFY(errorOf([&] { TextToImagePipeline::load(noVae); }).contains("vae/"));
        const auto wide = copy("wide", [](Json&) {}); // a U-Net that reads 48-wide text states
        Json cfg = readJsonFile(wide / "unet" / "config.json");
        cfg["cross_attention_dim"] = 48;
        writeJsonFile(wide / "unet" / "config.json", cfg, 1);
        QVERIFY(
            errorOf([&] { TextToImagePipeline::load(wide); }).contains("cross_attention_dim (48) differs"));
        const auto pipe = TextToImagePipeline::load(t2iData("tiny-pipe"));
        T2iRequest r;
        r.prompt = "a cat";
        r.steps = 1;
        r.height = 12;
        QVERIFY(errorOf([&] { runTextToImage(*pipe, r, nullptr); }).contains("divisible by 8"));
        r.height = 16;
        r.initLatents = Tensor({4, 4, 4}, 0.0f);
        QVERIFY(errorOf([&] { runTextToImage(*pipe, r, nullptr); }).contains("initial latents"));
    }

    void samplerNamesAndRefusals() {
        QCOMPARE(parseSamplerName("euler"), std::optional<SamplerKind>(SamplerKind::Euler));
        QVERIFY(!parseSamplerName("lms"));
        QVERIFY(!samplerOfClass("LMSDiscreteScheduler"));
        Json config = readJsonFile(t2iData("schedulers") / "PNDMScheduler.json");
        const auto refused = [&](SamplerKind kind, const char* key, Json value) {
            Json c = config;
            c[key] = std::move(value);
            return errorOf([&] { Sampler(kind, JsonConfig(c, "scheduler_config.json")); });
        };
        QVERIFY(refused(SamplerKind::Pndm, "skip_prk_steps", false).contains("Runge-Kutta"));
        QVERIFY(refused(SamplerKind::Euler, "use_karras_sigmas", true).contains("use_karras_sigmas"));
        QVERIFY(refused(SamplerKind::DpmSolver, "solver_order", 3).contains("solver_order"));
        QVERIFY(
            refused(SamplerKind::DpmSolver, "algorithm_type", "sde-dpmsolver++").contains("sde-dpmsolver++"));
        Sampler s(SamplerKind::DpmSolver, JsonConfig(config, "scheduler_config.json"));
        QVERIFY(errorOf([&] { s.step(Tensor({1}), 0, Tensor({1})); }).contains("setTimesteps"));
        s.setTimesteps(3);
        QVERIFY(errorOf([&] { s.step(Tensor({1}), 1, Tensor({1})); }).contains("out of order"));
        QVERIFY(errorOf([&] { s.setTimesteps(0); }).contains("1..1000"));
    }
};

QTEST_GUILESS_MAIN(TestT2i)
#include "test_t2i.moc"
