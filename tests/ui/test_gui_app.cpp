// The attnlens binary as a README script runs it (QProcess, offscreen): --screenshot on every page waits
// for the page's own readiness signals and writes the PNG; the options share one grammar with the CLI
// (from 0, --head mean|max|N, --query) and every bad value ends in one "error:" line and status 2.

#include "support/waits.h"

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QString err;
};

Run runGui(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", QDir::tempPath() + "/attnlens-gui-test-config"); // no user settings
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(ATTNLENS_GUI_PATH), args);
    if (!p.waitForFinished(attnlens::test::kHangMs)) {
        p.kill();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardError())};
}

} // namespace

class TestGuiApp : public QObject {
    Q_OBJECT
private slots:
    void screenshotsOfEveryPage() {
        QTemporaryDir tmp;
        const QList<QStringList> cases{
            {"--page", "0"},
            {"--page", "1", "--layer", "0", "--head", "1", "--kind", "cross"},
            {"--page", "2", "--query", "3,4", "--layer", "1", "--head", "max"},
            {"--page", "3", "--class", "Sneaker", "--seed", "2", "--steps", "20", "--step", "10", "--query",
             "4,4:9,12", "--layer", "2", "--key-side", "--dark"},
            {"--page", "4", "--input", "The cat sat.", "--layer", "1", "--head", "2", "--wait", "120"},
            {"--page", "5", "--model", QStringLiteral(ATTNLENS_TEST_DATA "/t2i/tiny-pipe"), "--input",
             "a sneaker above a bag"},
        };
        for (const QStringList& c : cases) {
            const QString out = tmp.filePath(QStringLiteral("page%1.png").arg(c[1]));
            const Run r = runGui(c + QStringList{"--size", "1200x800", "--screenshot", out});
            QVERIFY2(r.exitCode == 0, qPrintable(c.join(' ') + ": " + r.err));
            QVERIFY2(!r.err.contains("warning"),
                     qPrintable(r.err)); // ready by signal, not by the 60 s watchdog
            const QImage img(out);
            QVERIFY(!img.isNull());
            QVERIFY(img.width() >= 1200);
        }
        // --model: a diffusers folder opens on the Diffusion page instead of the built-in model; the
        // screenshot keeps the requested size
        const QString pipe = tmp.filePath("pipe.png");
        const Run m =
            runGui({"--page", "3", "--model", QStringLiteral(ATTNLENS_TEST_DATA "/unet/cond-pipeline"),
                    "--class", "cross", "--steps", "8", "--size", "1400x800", "--screenshot", pipe});
        QVERIFY2(m.exitCode == 0, qPrintable(m.err)); // "cross" exists only in cond-pipeline's id2label
        QCOMPARE(QImage(pipe).size(), QSize(1400, 800));
        // --grab one widget
        const QString u = tmp.filePath("u.png");
        QCOMPARE(runGui({"--page", "3", "--steps", "10", "--grab", "uView", "--screenshot", u}).exitCode, 0);
        QVERIFY(QImage(u).width() < 1000);
    }

    void badOptionsEndInOneError() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("x.png");
        const QList<QPair<QStringList, QString>> cases{
            {{"--page", "6"}, "--page"},
            {{"--size", "big"}, "--size"},
            {{"--page", "1", "--head", "middle"}, "head"},
            {{"--page", "1", "--kind", "sideways"}, "--kind"},
            {{"--page", "2", "--query", "9,9", "--screenshot", out}, "--query"},
            {{"--page", "2", "--head", "7", "--screenshot", out}, "head"},
            {{"--page", "3", "--steps", "5", "--query", "1,1:40,2", "--screenshot", out}, "--query"},
            {{"--page", "3", "--steps", "5", "--class", "Unicorn", "--screenshot", out}, "--class"},
            {{"--page", "3", "--steps", "5", "--layer", "9", "--screenshot", out}, "--layer"},
            {{"--page", "0", "--grab", "noSuchWidget", "--screenshot", out}, "--grab"},
            {{"--page", "4", "--input", "Hi.", "--layer", "9", "--screenshot", out}, "--layer"},
            {{"--page", "4", "--input", "Hi.", "--head", "99", "--screenshot", out}, "--head"},
            {{"--page", "4", "--wait", "0", "--screenshot", out}, "--wait"},
        };
        for (const auto& [args, fragment] : cases) {
            const Run r = runGui(args);
            QVERIFY2(r.exitCode == 2,
                     qPrintable(args.join(' ') + " -> " + QString::number(r.exitCode) + ": " + r.err));
            QVERIFY2(r.err.contains("error:") && r.err.contains(fragment),
                     qPrintable(args.join(' ') + ": " + r.err));
        }
        QCOMPARE(runGui({"--version"}).exitCode, 0);
        QCOMPARE(runGui({"--help"}).exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(TestGuiApp)
#include "test_gui_app.moc"
