// attnlens-cli translate / bench: exit codes, stdout, JSON shape (the CLI contract, docs/architecture.md),
// and agreement of the JSON with the reference goldens.

#include "core/analysis/attention_flow.h"
#include "core/ops/gemm.h"
#include "marian_test_util.h"
#include "support/waits.h"

#include <QDir>
#include <QFloat16> // qCompare overloads: nlohmann::json conversions need qfloat16 complete
#include <QImage>
#include <QProcess>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnlens;
using namespace marian_test;

namespace {

struct Run {
    int code = -1;
    QString out, err;
};

Run cli(const QStringList& args) {
    QProcess p;
    p.start(ATTNLENS_CLI_PATH, args);
    p.waitForFinished(attnlens::test::kHangMs);
    Run r;
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QString variant(const char* v) {
    return QString::fromStdString(variantDir(v).string());
}

} // namespace

class TestMarianCli : public QObject {
    Q_OBJECT
private slots:
    void translateJsonShape();
    void translateBeamMatchesGolden();
    void translateWithAblatedHeads();
    void translateThroughEncoderLayers();
    void badInputs_data();
    void badInputs();
    void heatmapExports();
    void nonUtf8Argument();
    void brokenFolders();
    void bench();
    void bf16Precision();
};

void TestMarianCli::translateJsonShape() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("t.json");
    const Json g = golden("tiny-f32")["cases"][0];
    const Run r = cli({"translate", "--model", variant("tiny-f32"), "--beam", "1", "--max-new-tokens", "20",
                       "--json", out, QString::fromStdString(g["source"].get<std::string>())});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.out.trimmed().toStdString(), g["greedy"]["translation"].get<std::string>());
    const Json j = readJsonFile(out.toStdString());
    for (const char* key : {"source", "source_tokens", "source_ids", "target_tokens", "target_ids",
                            "translation", "attentions"})
        QVERIFY2(j.contains(key), key);
    QCOMPARE(j["source"].get<std::string>(), g["source"].get<std::string>());
    QCOMPARE(ids(j["source_ids"]), ids(g["source_ids"]));
    QCOMPARE(j["source_tokens"], g["source_tokens"]);
    QCOMPARE(ids(j["target_ids"]), ids(g["greedy"]["ids"])); // no start token, final </s> kept
    QCOMPARE(j["target_tokens"].size(), j["target_ids"].size());
    const size_t S = j["source_ids"].size(), T = j["target_ids"].size();
    const Json& a = j["attentions"];
    QCOMPARE(a["encoder"].size(), size_t(2));
    QCOMPARE(a["encoder"][1].size(), size_t(4));
    QCOMPARE(a["encoder"][1][3].size(), S);
    QCOMPARE(a["encoder"][1][3][S - 1].size(), S);
    QCOMPARE(a["decoder"][0][0].size(), T);
    QCOMPARE(a["decoder"][0][0][0].size(), T);
    QCOMPARE(a["cross"][1][2].size(), T);
    QCOMPARE(a["cross"][1][2][T - 1].size(), S);
    // values equal the reference's teacher-forced pass (row t produced target_ids[t])
    const auto gt = goldenTensors("tiny-f32");
    const Tensor dec = gt.load("s0.decoder"), cross = gt.load("s0.cross"), enc = gt.load("s0.encoder");
    float d = 0;
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h)
            for (size_t q = 0; q < T; ++q) {
                for (size_t k = 0; k < T; ++k)
                    d = std::max(d, std::abs(a["decoder"][l][h][q][k].get<float>() -
                                             dec.at({l, h, int64_t(q), int64_t(k)})));
                for (size_t s = 0; s < S; ++s)
                    d = std::max(d, std::abs(a["cross"][l][h][q][s].get<float>() -
                                             cross.at({l, h, int64_t(q), int64_t(s)})));
            }
    for (size_t q = 0; q < S; ++q)
        for (size_t k = 0; k < S; ++k)
            d = std::max(
                d, std::abs(a["encoder"][1][2][q][k].get<float>() - enc.at({1, 2, int64_t(q), int64_t(k)})));
    QVERIFY2(d < 1e-4f, qPrintable(QString::number(d)));
}

void TestMarianCli::translateBeamMatchesGolden() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("b.json");
    const Json g = golden("tiny-unshared")["cases"][1];
    const Json b = g["beam"][0]; // num_beams 3, length_penalty 1, early_stopping false (generation defaults)
    const Run r = cli({"translate", "--model", variant("tiny-unshared"), "--beam",
                       QString::number(b["num_beams"].get<int>()), "--max-new-tokens",
                       QString::number(b["max_new_tokens"].get<int>()), "--json", out,
                       QString::fromStdString(g["source"].get<std::string>())});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(ids(readJsonFile(out.toStdString())["target_ids"]), ids(b["ids"]));
}

// --ablate: the output equals the reference's greedy decoding with those heads masked (golden), the JSON
// names the heads and the plain translation, and stderr says where the tokens part.
void TestMarianCli::translateWithAblatedHeads() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("a.json");
    const Json g = readJsonFile(std::filesystem::path(ATTNLENS_TEST_DATA) / "marian" / "golden" /
                                "ablate-tiny-f32.json");
    QStringList list;
    for (const Json& a : g["ablated"])
        list << QStringLiteral("%1:%2:%3")
                    .arg(QString::fromStdString(a[0].get<std::string>()))
                    .arg(a[1].get<int>())
                    .arg(a[2].get<int>());
    const Run r =
        cli({"translate", "--model", variant("tiny-f32"), "--beam", "1", "--max-new-tokens", "20", "--ablate",
             list.join(','), "--json", out, QString::fromStdString(g["source"].get<std::string>())});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("note: ablated 3 head(s):") && r.err.contains("part at target position"),
             qPrintable(r.err));
    const Json j = readJsonFile(out.toStdString());
    QCOMPARE(ids(j["target_ids"]), ids(g["greedy"]["ids"]));
    QCOMPARE(j["ablated"].size(), size_t(3));
    QCOMPARE(j["baseline_translation"].get<std::string>(),
             golden("tiny-f32")["cases"][0]["greedy"]["translation"].get<std::string>());
    // What changed: where the tokens part, p(plain token) with and without the heads, the top 5 there.
    const Json& c = j["change"];
    QVERIFY(c["parts_at"].is_number());
    QCOMPARE(c["position"].get<int>(), c["parts_at"].get<int>());
    const size_t at = size_t(c["position"].get<int>());
    QVERIFY(c["baseline_token_probs"][at].get<float>() > c["ablated_token_probs"][at].get<float>());
    QCOMPARE(c["top5_all_heads"].size(), size_t(5));
    QCOMPARE(c["top5_ablated"][0]["id"].get<int>(),
             j["target_ids"][at].get<int>()); // the ablated run's choice
}

// --through L: the encoder's rollout and attention flow through layers 0…L in the JSON, equal to core's on
// the encoder attention the same JSON holds.
void TestMarianCli::translateThroughEncoderLayers() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("t.json");
    const Run r = cli({"translate", "--model", variant("tiny-f32"), "--through", "1", "--json", out,
                       "Das Haus ist klein."});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const Json j = readJsonFile(out.toStdString());
    QCOMPARE(j["through_layer"].get<int>(), 1);
    const auto& enc = j["attentions"]["encoder"];
    const int L = int(enc.size()), H = int(enc[0].size()), S = int(enc[0][0].size());
    Tensor t({L, H, S, S});
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h)
            for (int q = 0; q < S; ++q)
                for (int k = 0; k < S; ++k)
                    t.data()[((int64_t(l) * H + h) * S + q) * S + k] = enc[l][h][q][k].get<float>();
    FlowOptions fo;
    fo.lastLayer = 1;
    RolloutOptions ro;
    ro.lastLayer = 1;
    const RowMatrix rollout = attentionRollout(t, ro);
    QCOMPARE(int(j["encoder_flow"].size()), S);
    for (int q = 0; q < S; ++q) {
        const std::vector<float> f = attentionFlow(t, q, fo);
        for (int k = 0; k < S; ++k) {
            QVERIFY(std::abs(j["encoder_flow"][q][k].get<float>() - f[size_t(k)]) < 1e-5);
            QVERIFY(std::abs(j["encoder_rollout"][q][k].get<float>() - rollout(q, k)) < 1e-5);
        }
    }
    const Run bad = cli({"translate", "--model", variant("tiny-f32"), "--through", "1", "Hallo"});
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("--json"));
}

void TestMarianCli::badInputs_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString m = variant("tiny-f32");
    QTest::newRow("no sentence") << QStringList{"translate", "--model", m} << "missing";
    QTest::newRow("two sentences") << QStringList{"translate", "--model", m, "a", "b"}
                                   << "unexpected argument";
    QTest::newRow("bad beam") << QStringList{"translate", "--model", m, "--beam", "0", "Hallo"} << "--beam";
    QTest::newRow("bad max-new-tokens")
        << QStringList{"translate", "--model", m, "--max-new-tokens", "x", "Hallo"} << "--max-new-tokens";
    QTest::newRow("missing folder") << QStringList{"translate", "--model", "/nonexistent/model", "Hallo"}
                                    << "not a model folder";
    QTest::newRow("too long") << QStringList{"translate", "--model", m, QString("Hund ").repeated(80)}
                              << "too long";
    QTest::newRow("unknown flag") << QStringList{"translate", "--model", m, "--foo", "Hallo"} << "--foo";
    QTest::newRow("bad precision") << QStringList{"translate", "--model", m, "--precision", "fp16", "Hallo"}
                                   << "--precision: expected fp32 or bf16";
    const QString png = QDir::temp().filePath("attnlens-never-written.png");
    QTest::newRow("heatmap extension")
        << QStringList{"translate", "--model", m, "--heatmap", "x.jpg", "Hallo"} << ".png or .svg";
    QTest::newRow("heatmap folder") << QStringList{"translate",          "--model", m, "--heatmap",
                                                   "/nonexistent/x.png", "Hallo"}
                                    << "does not exist";
    QTest::newRow("layer without heatmap")
        << QStringList{"translate", "--model", m, "--layer", "0", "Hallo"} << "only applies with --heatmap";
    QTest::newRow("heatmap kind") << QStringList{"translate", "--model", m,      "--heatmap",
                                                 png,         "--kind",  "self", "Hallo"}
                                  << "--kind";
    QTest::newRow("heatmap layer") << QStringList{"translate", "--model", m,    "--heatmap",
                                                  png,         "--layer", "99", "Hallo"}
                                   << "--layer";
    QTest::newRow("heatmap head") << QStringList{"translate", "--model", m,    "--heatmap",
                                                 png,         "--head",  "99", "Hallo"}
                                  << "--head";
    QTest::newRow("ablate kind") << QStringList{"translate", "--model", m, "--ablate", "self:0:0", "Hallo"}
                                 << "KIND encoder, decoder or cross";
    QTest::newRow("ablate range") << QStringList{"translate", "--model", m, "--ablate", "cross:2:0", "Hallo"}
                                  << "outside the 2 layers";
    QTest::newRow("ablate syntax") << QStringList{"translate", "--model", m, "--ablate", "encoder:0", "Hallo"}
                                   << "expected LAYER:HEAD";
    QTest::newRow("heatmap colormap")
        << QStringList{"translate", "--model", m, "--heatmap", png, "--colormap", "rainbow", "Hallo"}
        << "--colormap";
}

void TestMarianCli::badInputs() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run r = cli(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.startsWith("error: ") && r.err.contains(message), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
}

// Every kind as PNG and SVG: the files exist, the PNG is as large as the matrix at the chosen cell size
// and the SVG parses (the pixels are checked against the Translate page in test_translate_page).
void TestMarianCli::heatmapExports() {
    QTemporaryDir tmp;
    for (const char* kind : {"encoder", "decoder", "cross"}) {
        const QString png = tmp.filePath(QString("%1.png").arg(kind));
        const QString svg = tmp.filePath(QString("%1.svg").arg(kind));
        for (const QString& out : {png, svg}) {
            const Run r =
                cli({"translate", "--model", variant("tiny-f32"), "--max-new-tokens", "6", "--heatmap", out,
                     "--kind", kind, "--layer", "0", "--head", "max", "--cell", "10", "Guten Morgen"});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QVERIFY2(r.err.isEmpty(), qPrintable(r.err)); // no Qt chatter on stderr
        }
        const QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 60 && image.height() > 60);
        QSvgRenderer renderer(svg);
        QVERIFY(renderer.isValid());
        QCOMPARE(renderer.viewBox().size(), image.size());
    }
}

void TestMarianCli::nonUtf8Argument() {
    // QProcess cannot pass raw bytes; let the shell build the Latin-1 argument "Stra\xdfe".
    QProcess p;
    p.start("/bin/sh", {"-c", "exec \"$0\" translate --model \"$1\" \"$(printf 'Stra\\337e')\"",
                        ATTNLENS_CLI_PATH, variant("tiny-f32")});
    p.waitForFinished(attnlens::test::kHangMs);
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.startsWith("error: ") && err.contains("UTF-8"), qPrintable(err));
}

void TestMarianCli::brokenFolders() {
    QTemporaryDir tmp;
    const std::filesystem::path base = tmp.path().toStdString();
    const auto copy = [&](const char* name) {
        std::filesystem::copy(variantDir("tiny-f32"), base / name, std::filesystem::copy_options::recursive);
        return base / name;
    };
    const auto noSpm = copy("no_spm");
    std::filesystem::remove(noSpm / "target.spm");
    Run r = cli({"translate", "--model", QString::fromStdString(noSpm.string()), "Hallo"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("target.spm") && r.err.contains("missing"), qPrintable(r.err));

    const auto otherVocab = copy("other_vocab");
    Json vocab = readJsonFile(otherVocab / "vocab.json");
    vocab["extra_piece"] = int(vocab.size());
    writeJsonFile(otherVocab / "vocab.json", vocab);
    r = cli({"translate", "--model", QString::fromStdString(otherVocab.string()), "Hallo"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("vocab.json") && r.err.contains("does not belong"), qPrintable(r.err));

    const auto corrupt = copy("corrupt");
    std::filesystem::resize_file(corrupt / "model.safetensors", 100);
    r = cli({"translate", "--model", QString::fromStdString(corrupt.string()), "Hallo"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.startsWith("error: ") && r.err.contains("model.safetensors"), qPrintable(r.err));
}

void TestMarianCli::bench() {
    const Run r = cli({"bench", "--model", variant("tiny-f32"), "--src", "Der Hund läuft.", "--new-tokens",
                       "5", "--beam", "2", "--repeat", "3", "--warmup", "1", "--threads", "2"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const Json j = Json::parse(r.out.toStdString());
    QCOMPARE(j["task"].get<std::string>(), std::string("translation"));
    QCOMPARE(j["repeat"].get<int>(), 3);
    QCOMPARE(j["threads"].get<int>(), 2); // every subcommand's --threads, reported as used
    for (const char* key : {"median_ms", "min_ms", "max_ms", "encode_ms", "per_token_ms"})
        QVERIFY2(j[key].is_number(), key);
    QVERIFY(j["min_ms"].get<double>() <= j["median_ms"].get<double>());
    QVERIFY(j["median_ms"].get<double>() <= j["max_ms"].get<double>());
    QCOMPARE(j["precision"].get<std::string>(), std::string("fp32"));
    QVERIFY(!j.contains("parity"));
    const Run v = cli({"bench", "--image", "x.png"});
    QCOMPARE(v.code, 2);
    const Run both = cli({"bench", "--image", "x.png", "--src", "a"});
    QCOMPARE(both.code, 2);
}

// --precision bf16: where the CPU can, the run reports its measured difference from fp32 (small, not
// zero: the weights really are bfloat16); where it cannot, one error line naming what is missing.
void TestMarianCli::bf16Precision() {
    const QStringList args{
        "bench",    "--model", variant("tiny-f32"), "--src", "Der Hund läuft.", "--new-tokens", "4",
        "--repeat", "1",       "--warmup",          "0",     "--precision",     "bf16"};
    const Run r = cli(args);
    if (!attnlens::bf16Available()) {
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.startsWith("error: bf16 needs"), qPrintable(r.err));
        return;
    }
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const Json j = Json::parse(r.out.toStdString());
    QCOMPARE(j["precision"].get<std::string>(), std::string("bf16"));
    const double logits = j["parity"]["max_abs_logits"].get<double>();
    // (how large it is depends on the model: this tiny random one amplifies bf16's rounding far more
    // than real checkpoints; the kernel itself is checked against emulated bf16 in test_tensor_ops)
    const double scale = j["parity"]["fp32_max_abs_logits"].get<double>();
    QVERIFY2(logits > 0.0 && std::isfinite(logits) && scale > 0.0,
             qPrintable(QString("%1 of %2").arg(logits).arg(scale)));
    QVERIFY(j["parity"]["max_abs_attention"].get<double>() >= 0.0);
    QVERIFY(j["parity"]["same_result"].is_boolean());
    const Run t =
        cli({"translate", "--model", variant("tiny-f32"), "--precision", "bf16", "Der Hund läuft."});
    QVERIFY2(t.code == 0, qPrintable(t.err));
    QVERIFY2(t.err.startsWith("note: bf16 against fp32 on this input: max |Δ logits|"), qPrintable(t.err));
}

QTEST_GUILESS_MAIN(TestMarianCli)
#include "test_marian_cli.moc"
