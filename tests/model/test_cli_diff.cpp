// attnlens-cli diff as a user runs it: two translations of sentences that differ by one word (rows and
// columns matched by token, the extra word listed, A − B equal to the exports' own matrices), a picture
// against itself (zero difference, by position), the PNG, and one error line for bad input.

#include "core/analysis/attention_maps.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "support/cli_run.h"

#include <QFloat16> // qCompare overloads: nlohmann::json conversions need qfloat16 complete
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnlens;

class TestCliDiff : public QObject {
    Q_OBJECT
private slots:
    void translationsMatchedByToken() {
        QTemporaryDir tmp;
        const QString a = tmp.filePath("a.json"), b = tmp.filePath("b.json"), out = tmp.filePath("d.json"),
                      png = tmp.filePath("d.png");
        QCOMPARE(clitest::run({"translate", "--json", a, "Das Haus ist klein."}).exitCode, 0);
        QCOMPARE(clitest::run({"translate", "--json", b, "Das Haus ist sehr klein."}).exitCode, 0);
        const auto r = clitest::run(
            {"diff", a, b, "--kind", "encoder", "--layer", "1", "--head", "2", "--json", out, "--out", png});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        QVERIFY2(r.out.contains("only in B: \u2581sehr"), qPrintable(r.out));
        const Json d = readJsonFile(out.toStdString());
        QCOMPARE(d["row_match"].get<std::string>(), std::string("token"));
        QCOMPARE(d["unmatched"]["rows_b"], Json(std::vector<std::string>{"\u2581sehr"}));
        QVERIFY(d["unmatched"]["rows_a"].empty());
        // A's matched cells are its export's encoder layer 1, head 2 (no row of A is dropped).
        const Json ja = readJsonFile(a.toStdString());
        const auto& enc = ja["attentions"]["encoder"][1][2];
        for (size_t r2 = 0; r2 < enc.size(); ++r2)
            for (size_t c = 0; c < enc[r2].size(); ++c) {
                QCOMPARE(d["a_values"][r2][c].get<float>(), enc[r2][c].get<float>());
                QVERIFY(std::abs(d["diff"][r2][c].get<float>() - (d["a_values"][r2][c].get<float>() -
                                                                  d["b_values"][r2][c].get<float>())) < 1e-6);
            }
        const double js = d["js_divergence"]["mean"].get<double>();
        QVERIFY(js > 0 && js < 1);
        QVERIFY(d["max_abs_diff"].get<double>() > 0);
        QVERIFY(!QImage(png).isNull());
    }

    void samePictureIsZeroByPosition() {
        QTemporaryDir tmp;
        const QString image = QString::fromStdString(
            (resourcesDir() / "samples" / "fashion-mnist" / "ankle_boot_1.png").string());
        const QString a = tmp.filePath("a.json"), out = tmp.filePath("d.json");
        QCOMPARE(clitest::run({"vision", "--json", a, image}).exitCode, 0);
        const auto r = clitest::run({"diff", a, a, "--layer", "0", "--json", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json d = readJsonFile(out.toStdString());
        QCOMPARE(d["row_match"].get<std::string>(), std::string("position"));
        QCOMPARE(d["max_abs_diff"].get<double>(), 0.0);
        QCOMPARE(d["js_divergence"]["mean"].get<double>(), 0.0);
        QCOMPARE(d["rows"][0].get<std::string>(), std::string("CLS"));
        clitest::expectError(clitest::run({"diff", a, a, "--kind", "cross"}),
                             "--kind applies to translations only");
        clitest::expectError(clitest::run({"diff", a, a, "--layer", "9"}), "--layer");
        clitest::expectError(clitest::run({"diff", a}), "two attention exports");
        clitest::expectError(clitest::run({"diff", a, image}), "error");
        clitest::expectError(clitest::run({"diff", a, a, "--out", tmp.filePath("d.gif")}), "--out");
    }
};

QTEST_GUILESS_MAIN(TestCliDiff)
#include "test_cli_diff.moc"
