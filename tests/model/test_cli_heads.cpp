// attnlens-cli heads as a user runs it (QProcess): tables on stdout, the documented JSON, a batch equal to
// the row-weighted mean of its inputs, the vision variant, and exit 2 with one "error:" line for bad usage.

#include "core/analysis/head_stats.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/marian_folder.h"
#include "support/cli_run.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

using namespace attnlens;

namespace {

clitest::Run cli(const QStringList& args) {
    return clitest::run(args);
}

Json runJson(const QStringList& args, const QString& json) {
    const clitest::Run r = cli(args + QStringList{"--json", json});
    if (r.exitCode != 0) qWarning() << r.err;
    return readJsonFile(json.toStdString());
}

} // namespace

class TestCliHeads : public QObject {
    Q_OBJECT
private slots:
    void textTablesAndJson() {
        QTemporaryDir tmp;
        const clitest::Run r = cli({"heads", "--src", "Wie geht es dir?", "--stat", "sink"});
        QCOMPARE(r.exitCode, 0);
        for (const char* kind : {"encoder sink", "decoder sink", "cross sink"})
            QVERIFY2(r.out.contains(kind), qPrintable(r.out));

        const Json j = runJson({"heads", "--src", "Wie geht es dir?"}, tmp.filePath("one.json"));
        QCOMPARE(j["inputs"].get<int>(), 1);
        QCOMPARE(j["model"].get<std::string>(), std::string("marian-de-en-tiny"));
        for (const char* kind : {"encoder", "decoder", "cross"}) {
            const Json& k = j["kinds"][kind];
            const int L = k["layers"].get<int>(), H = k["heads"].get<int>();
            QVERIFY(L > 0 && H > 0 && k["rows"].get<int>() > 0);
            for (const char* stat : {"entropy", "sink"})
                for (int l = 0; l < L; ++l)
                    for (int h = 0; h < H; ++h) {
                        const double v = k[stat][l][h].get<double>();
                        QVERIFY2(v >= 0 && v <= 1 + 1e-6, stat);
                    }
            // Cross-attention has no diagonal; self-attention has.
            QCOMPARE(k["diagonal"][0][0].is_null(), std::string(kind) == "cross");
            QVERIFY(k["alignment"][0][0].is_null());
        }
    }

    // --align / --align-file: the cross-attention's alignment statistic from a Pharaoh word alignment, as
    // core computes it on the same translation; a pair outside the sentence or a line count that differs is
    // an error.
    void wordAlignmentAgreement() {
        QTemporaryDir tmp;
        const QString sentence = QStringLiteral("Das Haus ist klein.");
        const QString align = QStringLiteral("0-0 1-1 2-2 3-3 4-4");
        const Json j = runJson({"heads", "--src", sentence, "--align", align}, tmp.filePath("a.json"));
        const Json& cross = j["kinds"]["cross"];
        QVERIFY(cross["aligned_rows"].get<int>() > 0);
        const MarianFolder folder = loadMarianFolder(builtinModelDir("marian-de-en-tiny"));
        DecodeSession session(folder.model, folder.tokenizer, sentence.toStdString(), {});
        session.run();
        const auto trace = session.trace();
        HeadStatsOptions o; // written out: </s> (the last source piece) is the sink; not self-attention
        o.sinkKeys = {static_cast<int>(trace->sourceTokens.size()) - 1};
        o.selfAttention = false;
        o.alignment = pieceAlignment(*trace, align.toStdString());
        const HeadStats s = computeHeadStats(trace->crossAttention, o);
        for (int l = 0; l < s.layers(); ++l)
            for (int h = 0; h < s.heads(); ++h)
                QVERIFY(std::abs(cross["alignment"][l][h].get<double>() - s.alignment(l, h)) < 1e-6);
        QVERIFY(j["kinds"]["encoder"]["alignment"][0][0].is_null());
        {
            std::ofstream f(tmp.filePath("src.txt").toStdString());
            f << sentence.toStdString() << "\n" << sentence.toStdString() << "\n";
            std::ofstream a(tmp.filePath("align.txt").toStdString());
            a << align.toStdString() << "\n";
        }
        clitest::expectError(
            cli({"heads", "--src-file", tmp.filePath("src.txt"), "--align-file", tmp.filePath("align.txt")}),
            "1 lines for 2 sentences");
        clitest::expectError(cli({"heads", "--src", sentence, "--align", "0-9"}), "outside");
        clitest::expectError(cli({"heads", "--src", sentence, "--align", "zero-one"}), "SOURCE-TARGET");
        clitest::expectError(cli({"heads", "--src-file", tmp.filePath("src.txt"), "--align", align}),
                             "--align goes with");
    }

    // A batch is the mean of its sentences, each weighted by its rows (pieces).
    void batchIsTheRowWeightedMean() {
        QTemporaryDir tmp;
        const QStringList sentences = {"Wie geht es dir?", "Das Haus ist sehr groß und alt."};
        {
            std::ofstream f(tmp.filePath("src.txt").toStdString());
            f << sentences[0].toStdString() << "\n\n" << sentences[1].toStdString() << "\r\n";
        }
        const Json batch =
            runJson({"heads", "--src-file", tmp.filePath("src.txt")}, tmp.filePath("batch.json"));
        QCOMPARE(batch["inputs"].get<int>(), 2);
        const Json a = runJson({"heads", "--src", sentences[0]}, tmp.filePath("a.json"));
        const Json b = runJson({"heads", "--src", sentences[1]}, tmp.filePath("b.json"));
        for (const char* kind : {"encoder", "cross"}) {
            const double ra = a["kinds"][kind]["rows"].get<int>(), rb = b["kinds"][kind]["rows"].get<int>();
            QCOMPARE(batch["kinds"][kind]["rows"].get<int>(), int(ra + rb));
            for (int l = 0; l < batch["kinds"][kind]["layers"].get<int>(); ++l)
                for (int h = 0; h < batch["kinds"][kind]["heads"].get<int>(); ++h) {
                    const double expected = (ra * a["kinds"][kind]["entropy"][l][h].get<double>() +
                                             rb * b["kinds"][kind]["entropy"][l][h].get<double>()) /
                                            (ra + rb);
                    QVERIFY(std::abs(batch["kinds"][kind]["entropy"][l][h].get<double>() - expected) < 1e-5);
                }
        }
    }

    void visionFolder() {
        QTemporaryDir tmp;
        const QString samples = QStringLiteral(ATTNLENS_TEST_DATA "/../../resources/samples/fashion-mnist");
        const Json j =
            runJson({"heads", "--image-dir", samples, "--stat", "distance"}, tmp.filePath("v.json"));
        QVERIFY(j["inputs"].get<int>() >= 10);
        const Json& k = j["kinds"]["vit"];
        // 28 × 28 input: a patch-to-patch distance is between 0 and the diagonal, 28·√2.
        const double d = k["distance"][0][0].get<double>();
        QVERIFY2(d > 0 && d < 28 * std::sqrt(2.0), qPrintable(QString::number(d)));
        QVERIFY(k["sink"][0][0].get<double>() >= 0);
    }

    void badUsage() {
        clitest::expectError(cli({"heads"}), "exactly one of");
        clitest::expectError(cli({"heads", "--src", "x", "--image", "y.png"}), "exactly one of");
        clitest::expectError(cli({"heads", "--src", "x", "--stat", "nope"}), "unknown statistic");
        clitest::expectError(cli({"heads", "--src-file", "/nonexistent/src.txt"}), "cannot read");
        clitest::expectError(
            cli({"heads", "--image", QStringLiteral(ATTNLENS_TEST_DATA "/vit/images/photo_97x61.png"),
                 "--model", QStringLiteral(ATTNLENS_TEST_DATA "/../../resources/models/marian-de-en-tiny")}),
            "need a ViT model");
        QTemporaryDir tmp;
        clitest::expectError(cli({"heads", "--image-dir", tmp.path()}), "no pictures");
    }
};

QTEST_GUILESS_MAIN(TestCliHeads)
#include "test_cli_heads.moc"
