// The chrome every page shares, offscreen: JobStatus appears while its worker runs a job and Cancel
// cancels it; PageMessage shows errors and notices in palette-derived colours and restyles (once, no
// loop) when the palette changes; mute() follows the palette; View → Dark mode switches the app's
// palette and remembers it.

#include "core/util/error.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/shell/theme.h"
#include "ui/vision/sample_gallery.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>

using namespace attnlens;
using namespace attnlens::ui;

class TestPageChrome : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AttentionLensTests");
        QCoreApplication::setApplicationName("test_page_chrome");
    }
    void cleanupTestCase() {
        QSettings().clear();
        applyTheme(Theme::Light);
    }

    void jobStatusShowsWhileAJobRunsAndCancels() {
        QWidget page;
        InferenceWorker worker;
        auto* status = new JobStatus(&worker, &page);
        page.show();
        QVERIFY(!status->isVisible());
        std::atomic<bool> started{false};
        QSignalSpy cancelled(&worker, &InferenceWorker::cancelled);
        worker.run<int>(
            "Working",
            [&started](const Callbacks& cb) {
                started = true;
                cb.report(0.5, "half");
                for (int i = 0; i < 1000; ++i) {
                    cb.checkCancel();
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
                return 1;
            },
            {});
        QTRY_VERIFY(status->isVisible());
        QTRY_COMPARE(status->progressBar()->value(), 500);
        QCOMPARE(status->progressBar()->toolTip(), QStringLiteral("half"));
        QTest::mouseClick(status->cancelButton(), Qt::LeftButton);
        QVERIFY(cancelled.count() > 0 || cancelled.wait(5000));
        QTRY_VERIFY(!status->isVisible());
    }

    void pageMessageColoursComeFromThePalette() {
        QWidget page;
        auto* message = new PageMessage(&page);
        page.show();
        QCOMPARE(message->message(), QString());
        message->showError("the folder is corrupt");
        QCOMPARE(message->message(), QStringLiteral("the folder is corrupt"));
        QCOMPARE(message->kind(), PageMessage::Kind::Error);
        const QString lightStyle = message->styleSheet();
        QVERIFY(lightStyle.contains(page.palette().color(QPalette::WindowText).name()));
        page.setPalette(darkPalette()); // restyles from the new palette, once
        QVERIFY(message->styleSheet() != lightStyle);
        QVERIFY(message->styleSheet().contains(darkPalette().color(QPalette::WindowText).name()));
        message->showNotice("saved");
        QCOMPARE(message->kind(), PageMessage::Kind::Notice);
        message->dismiss();
        QCOMPARE(message->message(), QString());
        QVERIFY(isDark(darkPalette()));
        QVERIFY(errorColor(darkPalette()).lightnessF() > errorColor(QPalette(Qt::white)).lightnessF());
    }

    void mutedTextFollowsThePalette() {
        QLabel label("secondary");
        mute(&label);
        QCOMPARE(label.foregroundRole(), QPalette::PlaceholderText);
        QCOMPARE(hint("a hint", nullptr)->foregroundRole(), QPalette::PlaceholderText);
    }

    // The gallery used to drop unreadable samples (and a missing samples folder) without a word.
    void sampleGalleryReportsWhatItCouldNotRead() {
        QTemporaryDir tmp;
        QVERIFY(QDir().mkpath(tmp.filePath("models")));
        QVERIFY(QDir().mkpath(tmp.filePath("samples/set")));
        QImage ok(8, 8, QImage::Format_Grayscale8);
        ok.fill(128);
        QVERIFY(ok.save(tmp.filePath("samples/set/ok.png")));
        QFile broken(tmp.filePath("samples/set/broken.png"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("not a png");
        broken.close();
        qputenv("ATTNLENS_RESOURCES_DIR", tmp.path().toLocal8Bit());
        SampleGallery gallery;
        QCOMPARE(gallery.loadSamples(), 1);
        QVERIFY2(gallery.problem().contains("broken.png"), qPrintable(gallery.problem()));
        qunsetenv("ATTNLENS_RESOURCES_DIR");
    }

    void darkModeActionSwitchesAndRemembers() {
        MainWindow window;
        auto* dark = window.findChild<QAction*>("darkMode");
        QVERIFY(dark);
        QVERIFY(!dark->isChecked());
        dark->trigger();
        QCOMPARE(currentTheme(), Theme::Dark);
        QVERIFY(QSettings().value("darkMode").toBool());
        QCOMPARE(QApplication::palette().color(QPalette::Window), darkPalette().color(QPalette::Window));
        dark->trigger();
        QCOMPARE(currentTheme(), Theme::Light);
        QVERIFY(!QSettings().value("darkMode").toBool());
    }
};

QTEST_MAIN(TestPageChrome)
#include "test_page_chrome.moc"
