// The parts of a Stable Diffusion pipeline besides the U-Net against diffusers v0.25's own classes
// (tools/golden/make_t2i_fixtures.py): the AutoencoderKL decoder, and the PNDM (PLMS) / DDIM / Euler /
// DPM-Solver schedulers built from SD 1.5's and SD 2.x's scheduler configs as from_config builds them, driven
// by a stand-in model through whole trajectories. Runs under ASan + UBSan in CI (label fast).

#include "core/diffusion/sampler.h"
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
