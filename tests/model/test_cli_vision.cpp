// attnlens-cli vision / vision-eval as a user runs them (QProcess on ATTNLENS_CLI_PATH): stdout format,
// JSON shape and values, overlays, and exit status 2 with one "error:" line for bad input.

#include "core/io/json_file.h"
#include "core/vision/image_io.h"
#include "support/cli_run.h"
#include "support/vit_fixtures.h"

#include <QFloat16> // qCompare overloads: nlohmann::json conversions need qfloat16 complete
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

using namespace attnlens;

namespace {

using clitest::Run;

Run cli(const QStringList& args) {
    return clitest::run(args);
}

QString model(const char* name) {
    return QString::fromStdString(vittest::modelDir(name).string());
}
QString image(const char* name) {
    return QString::fromStdString(vittest::imagePath(name).string());
}

// Exit 2, no crash, exactly one stderr line starting "error:" and mentioning `fragment`.
void expectUsageError(const QStringList& args, const QString& fragment) {
    clitest::expectError(cli(args), fragment);
}

} // namespace

class TestCliVision : public QObject {
    Q_OBJECT
private slots:
    // The built-in Fashion-MNIST model (no --model): a colour photo gets a note on stderr and the reasons in
    // the JSON; a Fashion-MNIST sample gets neither.
    void builtinModelSaysWhenThePictureIsUnlikeItsData() {
        QTemporaryDir tmp;
        const QString json = tmp.filePath("photo.json");
        Run r = cli({"vision", "--json", json, image("photo_97x61.png")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(
            r.err.contains("note: not like the built-in model's Fashion-MNIST training pictures: in colour"),
            qPrintable(r.err));
        Json j = readJsonFile(json.toStdString());
        QVERIFY(j.contains("domain_mismatch"));
        QCOMPARE(j["domain_mismatch"][0].get<std::string>(), std::string("in colour"));

        const QString sample =
            QStringLiteral(ATTNLENS_TEST_DATA "/../../resources/samples/fashion-mnist/ankle_boot_1.png");
        r = cli({"vision", "--json", json, sample});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(!r.err.contains("note:"), qPrintable(r.err));
        j = readJsonFile(json.toStdString());
        QVERIFY(!j.contains("domain_mismatch"));
    }

    // --ablate: the JSON is the ablated run (equal to the reference's head_mask golden), with the heads and
    // the plain run's top-5; stderr says how the top class changed; bad lists exit 2.
    void ablateHeads() {
        QTemporaryDir tmp;
        const QString json = tmp.filePath("ablated.json");
        const clitest::Run r = cli({"vision", "--model", model("rgb"), "--ablate", "0:1,1:0,1:3", "--json",
                                    json, image("photo_97x61.png")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains("note: ablated 3 head(s): top class"), qPrintable(r.err));
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["ablated"], Json({{0, 1}, {1, 0}, {1, 3}}));
        QCOMPARE(j["baseline_top"].size(), size_t(5));
        const Tensor golden = vittest::golden("rgb", "ablate_photo_97x61", "logits");
        for (int i = 0; i < golden.dim(0); ++i)
            QVERIFY(std::abs(j["logits"][i].get<double>() - golden.at({i})) < 1e-4);
        clitest::expectError(
            cli({"vision", "--model", model("rgb"), "--ablate", "2:0", image("photo_97x61.png")}),
            "outside the 2 layers");
        clitest::expectError(
            cli({"vision", "--model", model("rgb"), "--ablate", "0-1", image("photo_97x61.png")}),
            "expected LAYER:HEAD");
    }

    void topFiveAndJson() {
        QTemporaryDir tmp;
        const QString json = tmp.filePath("out.json");
        const Run r = cli({"vision", "--model", model("rgb"), "--json", json, image("photo_97x61.png")});
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 5);
        double sum = 0, previous = 2;
        for (const QString& line : lines) {
            const QStringList parts = line.split('\t');
            QCOMPARE(parts.size(), 2);
            const double p = parts[1].toDouble();
            QVERIFY(p <= previous);
            previous = p;
            sum += p;
        }
        QVERIFY(std::abs(sum - 1.0) < 1e-4); // 5 classes: the top 5 are all of them

        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["image"].get<std::string>(), image("photo_97x61.png").toStdString());
        QCOMPARE(j["input_size"], Json({16, 16}));
        QCOMPARE(j["patch"].get<int>(), 4);
        QCOMPARE(j["grid"], Json({4, 4}));
        QCOMPARE(j["top"].size(), size_t(5));
        QCOMPARE(j["top"][0]["label"].get<std::string>(), lines[0].split('\t')[0].toStdString());
        const Tensor logits = vittest::golden("rgb", "photo_97x61", "logits");
        QCOMPARE(j["logits"].size(), size_t(logits.numel()));
        for (int64_t i = 0; i < logits.numel(); ++i)
            QVERIFY(std::abs(j["logits"][i].get<double>() - logits.data()[i]) < 1e-4);
        const Tensor att = vittest::golden("rgb", "photo_97x61", "attentions"); // [2, 4, 17, 17]
        const Json& a = j["attentions"];
        QCOMPARE(a.size(), size_t(2));
        QCOMPARE(a[0].size(), size_t(4));
        QCOMPARE(a[0][0].size(), size_t(17));
        QCOMPARE(a[1][3][16].size(), size_t(17));
        double worst = 0;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h)
                for (int q = 0; q < 17; ++q)
                    for (int k = 0; k < 17; ++k)
                        worst = std::max(worst, std::abs(a[l][h][q][k].get<double>() - att.at({l, h, q, k})));
        QVERIFY(worst < 1e-4);
    }

    void overlays_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::newRow("cls default") << QStringList{};
        QTest::newRow("patch head 0 layer 0") << QStringList{"--layer", "0", "--head", "0", "--query", "1,2"};
        QTest::newRow("rollout") << QStringList{"--query", "rollout"};
        QTest::newRow("flow") << QStringList{"--query", "flow", "--layer", "1"};
        QTest::newRow("max magma") << QStringList{"--head", "max", "--colormap", "magma", "--opacity", "0.3"};
    }
    void overlays() {
        QFETCH(QStringList, extra);
        QTemporaryDir tmp;
        const QString png = tmp.filePath("o.png");
        const Run r = cli(QStringList{"vision", "--model", model("rgb"), "--overlay", png} + extra +
                          QStringList{image("photo_97x61.png")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const ImageU8 o = loadImage(png.toStdString());
        QCOMPARE(o.width, 97); // the overlay is drawn on the original image
        QCOMPARE(o.height, 61);
        QCOMPARE(o.channels, 3);
    }

    // DINOv2 with registers (issue 43): the JSON counts them; the overlay of a patch query skips them.
    void dinov2Registers() {
        const QString dir =
            QString::fromStdString((std::filesystem::path(ATTNLENS_TEST_DATA) / "dinov2").string());
        QTemporaryDir tmp;
        const QString json = tmp.filePath("reg.json"), png = tmp.filePath("reg.png");
        const Run r = cli({"vision", "--model", dir + "/dinov2-reg", "--json", json, "--query", "1,2",
                           "--overlay", png, dir + "/images/portrait_45x71.png"});
        QCOMPARE(r.exitCode, 0);
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["registers"].get<int>(), 4);
        QCOMPARE(j["grid"][0].get<int>() * j["grid"][1].get<int>() + 5, int(j["attentions"][0][0].size()));
        QCOMPARE(loadImage(png.toStdString()).width, 45);
        QCOMPARE(j["token_norms"].size(), j["attentions"].size()); // [L][T]
        QCOMPARE(j["token_norms"][0].size(), j["attentions"][0][0].size());
        QCOMPARE(cli({"vision", "--model", dir + "/dinov2-reg", "--query", "norms", "--overlay", png,
                      dir + "/images/portrait_45x71.png"})
                     .exitCode,
                 0);
        // A register's row as the overlay; reg4 does not exist.
        QCOMPARE(cli({"vision", "--model", dir + "/dinov2-reg", "--query", "reg3", "--overlay", png,
                      dir + "/images/portrait_45x71.png"})
                     .exitCode,
                 0);
        const Run none = cli({"vision", "--model", dir + "/dinov2-reg", "--query", "reg4", "--overlay", png,
                              dir + "/images/portrait_45x71.png"});
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains("4 register(s)"), qPrintable(none.err));
    }

    // CLIP: the texts' zero-shot probabilities on stdout (most probable first), "clip" in the JSON with each
    // text's maps, a text's relevance as the overlay; --texts refused where there is no text tower.
    void clipTexts() {
        const std::filesystem::path dir = std::filesystem::path(ATTNLENS_TEST_DATA) / "clip";
        const QString clip = QString::fromStdString((dir / "clip").string()),
                      picture = QString::fromStdString((dir / "images" / "photo_97x61.png").string());
        QTemporaryDir tmp;
        const QString json = tmp.filePath("clip.json"), png = tmp.filePath("text.png");
        const Run r = cli({"vision", "--model", clip, "--texts", "a red chair | a photo of a cat", "--json",
                           json, "--overlay", png, "--query", "text:1", picture});
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        const Json j = readJsonFile(json.toStdString());
        const Json& texts = j["clip"]["texts"];
        QCOMPARE(texts.size(), size_t(2));
        QCOMPARE(texts[0]["text"].get<std::string>(), std::string("a red chair"));
        const float p0 = texts[0]["prob"].get<float>(), p1 = texts[1]["prob"].get<float>();
        QVERIFY(std::abs(p0 + p1 - 1.0f) < 1e-5f);
        QVERIFY(lines[0].startsWith(p0 >= p1 ? "a red chair\t" : "a photo of a cat\t"));
        QCOMPARE(texts[1]["relevance"].size(), size_t(4)); // [rows][cols] of the 4×4 grid
        QVERIFY(std::abs(j["clip"]["logit_scale"].get<float>() - std::exp(2.3f)) < 1e-3f);
        QCOMPARE(loadImage(png.toStdString()).width, 97);
        const Run noTower = cli({"vision", "--model", QString::fromStdString((dir / "clip-vision").string()),
                                 "--texts", "a cat", picture});
        QCOMPARE(noTower.exitCode, 2);
        QVERIFY2(noTower.err.contains("--texts needs a CLIPModel or SiglipModel folder"),
                 qPrintable(noTower.err));
        const Run badIndex = cli({"vision", "--model", clip, "--texts", "a cat", "--overlay", png, "--query",
                                  "relevance:3", picture});
        QCOMPARE(badIndex.exitCode, 2);
        QVERIFY2(badIndex.err.contains("numbered 0..0"), qPrintable(badIndex.err));
        QCOMPARE(cli({"vision", "--model", clip, "--texts", " | ", picture}).exitCode, 2);
    }

    // SigLIP: no CLS (the JSON says so), the probe's attention per head, sigmoid scores; --query cls means
    // the probe there, flow (which starts from CLS) is refused, and a model with CLS has no probe.
    void siglipTexts() {
        const std::filesystem::path dir = std::filesystem::path(ATTNLENS_TEST_DATA) / "siglip";
        const QString siglip = QString::fromStdString((dir / "siglip").string()),
                      picture = QString::fromStdString((dir / "images" / "photo_97x61.png").string());
        QTemporaryDir tmp;
        const QString json = tmp.filePath("siglip.json"), probe = tmp.filePath("probe.png"),
                      cls = tmp.filePath("cls.png");
        const Run r = cli({"vision", "--model", siglip, "--texts", "a red chair | a cat", "--json", json,
                           "--overlay", probe, "--query", "probe", "--head", "2", picture});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out.trimmed().split('\n').size(), 2);
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["cls"].get<bool>(), false);
        QCOMPARE(j["probe_attention"].size(), size_t(4));     // heads
        QCOMPARE(j["probe_attention"][0].size(), size_t(16)); // patches
        QCOMPARE(j["attentions"][0][0].size(), size_t(16));   // no CLS row
        QCOMPARE(j["clip"]["scores"].get<std::string>(), std::string("sigmoid"));
        QVERIFY(std::abs(j["clip"]["logit_bias"].get<float>() + 1.7f) < 1e-5f);
        for (const Json& t : j["clip"]["texts"]) {
            const float logit = t["logit"].get<float>(), prob = t["prob"].get<float>();
            QVERIFY(std::abs(prob - 1 / (1 + std::exp(-logit))) < 1e-5f);
            QCOMPARE(t["ids"].size(), size_t(64)); // padded as SigLIP was trained
        }
        QCOMPARE(cli({"vision", "--model", siglip, "--overlay", cls, picture}).exitCode, 0); // cls: the probe
        QCOMPARE(loadImage(cls.toStdString()).width, 97);
        const Run flow = cli({"vision", "--model", siglip, "--overlay", cls, "--query", "flow", picture});
        QCOMPARE(flow.exitCode, 2);
        QVERIFY2(flow.err.contains("SigLIP has not"), qPrintable(flow.err));
        const Run noProbe = cli({"vision", "--model", model("bare"), "--overlay", cls, "--query", "probe",
                                 image("photo_97x61.png")});
        QCOMPARE(noProbe.exitCode, 2);
        QVERIFY2(noProbe.err.contains("only SigLIP has a pooling probe"), qPrintable(noProbe.err));
    }

    void bareModelPrintsNothing() {
        const Run r = cli({"vision", "--model", model("bare"), image("small_11x7.png")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.isEmpty());
    }

    void badInput() {
        QTemporaryDir tmp;
        const QString truncated = tmp.filePath("t.png");
        {
            std::ifstream in(vittest::imagePath("photo_97x61.png"), std::ios::binary);
            std::string bytes{std::istreambuf_iterator<char>(in), {}};
            std::ofstream(truncated.toStdString(), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        }
        // Decoders' own diagnostics (libpng, OpenCV's logger) must not add stderr lines.
        const QString corrupt = tmp.filePath("c.png"), shortBmp = tmp.filePath("s.bmp");
        {
            std::ifstream in(vittest::imagePath("photo_97x61.png"), std::ios::binary);
            std::string bytes{std::istreambuf_iterator<char>(in), {}};
            const auto idat = bytes.find("IDAT");
            for (size_t i = idat + 20; i < idat + 60; ++i)
                bytes[i] = 0; // chunks intact, deflate data broken
            std::ofstream(corrupt.toStdString(), std::ios::binary) << bytes;
            std::ifstream bmp(vittest::imagePath("small_11x7.bmp"), std::ios::binary);
            std::string b{std::istreambuf_iterator<char>(bmp), {}};
            std::ofstream(shortBmp.toStdString(), std::ios::binary) << b.substr(0, 120);
        }
        expectUsageError({"vision", "--model", model("rgb"), corrupt}, "cannot decode image");
        expectUsageError({"vision", "--model", model("rgb"), shortBmp}, "cannot decode image");
        expectUsageError({"vision", "--model", model("rgb"), tmp.filePath("missing.png")}, "not found");
        expectUsageError({"vision", "--model", model("rgb"), truncated}, "truncated PNG");
        expectUsageError({"vision", "--model", model("rgb")}, "missing IMAGE");
        expectUsageError({"vision", "--model", model("rgb"), "--layer", "0", image("small_11x7.png")},
                         "only applies with --overlay");
        expectUsageError({"vision", "--model", model("rgb"), "--overlay", tmp.filePath("o.png"), "--layer",
                          "2", image("small_11x7.png")},
                         "out of range");
        expectUsageError({"vision", "--model", model("rgb"), "--overlay", tmp.filePath("o.png"), "--head",
                          "4", image("small_11x7.png")},
                         "out of range");
        expectUsageError({"vision", "--model", model("rgb"), "--overlay", tmp.filePath("o.png"), "--query",
                          "4,0", image("small_11x7.png")},
                         "outside the 4×4 grid");
        expectUsageError({"vision", "--model", model("rgb"), "--overlay", tmp.filePath("o.png"), "--query",
                          "middle", image("small_11x7.png")},
                         "expected cls, probe, regK, rollout, flow, norms, text:K, relevance:K or ROW,COL");
        expectUsageError({"vision", "--model", model("rgb-interp"), image("small_11x7.png")}, "image_size");
        expectUsageError({"vision", "--model", tmp.path(), image("small_11x7.png")},
                         "config.json is missing");
        expectUsageError({"vision", "--model", model("rgb"), "--overlay", tmp.filePath("no/dir/o.png"),
                          image("small_11x7.png")},
                         "cannot write PNG");
        // Interpolation makes the 24×32 processor size usable.
        QCOMPARE(cli({"vision", "--model", model("rgb-interp"), "--interpolate-pos", image("small_11x7.png")})
                     .exitCode,
                 0);
    }

    void evalOverList() {
        QTemporaryDir tmp;
        // The golden top class of photo_97x61 under "rgb", once right (by name), once wrong (by index).
        const Tensor logits = vittest::golden("rgb", "photo_97x61", "logits");
        const int best = int(std::max_element(logits.data(), logits.data() + 5) - logits.data());
        const char* names[] = {"cat", "dog", "bird", "fish", "frog"};
        const QString list = tmp.filePath("list.tsv");
        std::ofstream(list.toStdString())
            << "# path<TAB>label\n"
            << vittest::imagePath("photo_97x61.png").string() << "\t" << names[best] << "\n"
            << vittest::imagePath("photo_97x61.png").string() << "\t" << (best + 1) % 5 << "\n"
            << vittest::imagePath("small_11x7.png").string() << "\n";
        const QString json = tmp.filePath("eval.json");
        const Run r =
            cli({"vision-eval", "--model", model("rgb"), "--list", list, "--capture", "--json", json});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("images\t3\n"));
        QVERIFY(r.out.contains("labelled\t2\n"));
        QVERIFY(r.out.contains("correct\t1\n"));
        QVERIFY(r.out.contains("accuracy\t0.5000\n"));
        QVERIFY(r.out.contains("ms_per_image\t"));
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["confusion"][best][best].get<int>(), 1);
        QCOMPARE(j["per_class"][best]["count"].get<int>(), 1);

        std::ofstream(list.toStdString()) << vittest::imagePath("photo_97x61.png").string() << "\tzebra\n";
        expectUsageError({"vision-eval", "--model", model("rgb"), "--list", list}, "unknown label 'zebra'");
        expectUsageError({"vision-eval", "--model", model("rgb")}, "give either --list");
    }

    void evalOverIdx() {
        // A 3-image IDX pair written here (uncompressed; gzip'd files are read the same way).
        QTemporaryDir tmp;
        const std::string images = tmp.filePath("img.idx").toStdString(),
                          labels = tmp.filePath("lab.idx").toStdString();
        {
            std::ofstream out(images, std::ios::binary);
            const unsigned char head[] = {0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 16, 0, 0, 0, 16};
            out.write(reinterpret_cast<const char*>(head), sizeof head);
            for (int i = 0; i < 3 * 256; ++i)
                out.put(static_cast<char>((i * 37) % 256));
            std::ofstream lab(labels, std::ios::binary);
            const unsigned char lhead[] = {0, 0, 8, 1, 0, 0, 0, 3, 0, 1, 2};
            lab.write(reinterpret_cast<const char*>(lhead), sizeof lhead);
        }
        const Run r = cli({"vision-eval", "--model", model("grey"), "--idx-images",
                           QString::fromStdString(images), "--idx-labels", QString::fromStdString(labels)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("images\t3\n"));
        QVERIFY(r.out.contains("labelled\t3\n"));
        std::ofstream(labels, std::ios::binary) << "garbage";
        expectUsageError({"vision-eval", "--model", model("grey"), "--idx-images",
                          QString::fromStdString(images), "--idx-labels", QString::fromStdString(labels)},
                         "IDX");
    }
};

QTEST_GUILESS_MAIN(TestCliVision)
#include "test_cli_vision.moc"
