// The chrome every page shares, offscreen: JobStatus appears while its worker runs a job and Cancel
// cancels it; PageMessage shows errors and notices in palette-derived colours and restyles (once, no
// loop) when the palette changes; mute() follows the palette; View → Dark mode switches the app's
// palette and remembers it.

#include "core/util/error.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/shell/theme.h"
#include "ui/vision/sample_gallery.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "core/ops/gemm.h"
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
#include <memory>
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
        const std::unique_ptr<QLabel> parentless(hint("a hint", nullptr));
        QCOMPARE(parentless->foregroundRole(), QPalette::PlaceholderText);
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

    // Compute → BF16 reloads the page's model in bf16, remembers the choice, and the page states the
    // difference from FP32 measured at load; Compute → FP32 goes back. Without a bf16 kernel the entry
    // is disabled and the precision stays FP32.
    void computeMenuSwitchesPrecisionAndReloads() {
        MainWindow window;
        auto* fp32 = window.findChild<QAction*>("precisionFp32");
        auto* bf16 = window.findChild<QAction*>("precisionBf16");
        QVERIFY(fp32 && bf16);
        QVERIFY(fp32->isChecked());
        QCOMPARE(bf16->isEnabled(), bf16Available());
        if (!bf16Available()) {
            QVERIFY(!window.setPrecision(LinearPrecision::Bf16));
            QCOMPARE(linearPrecision(), LinearPrecision::Fp32);
            return;
        }
        auto* vision = new VisionPage(&window);
        window.addPage("Vision", vision);
        QTRY_VERIFY_WITH_TIMEOUT(vision->document()->hasImage() && !vision->isBusy(), 60000);
        QVERIFY(!vision->message().contains("BF16"));
        bf16->trigger();
        QCOMPARE(linearPrecision(), LinearPrecision::Bf16);
        QCOMPARE(QSettings().value("precision").toString(), QString("bf16"));
        QTRY_VERIFY_WITH_TIMEOUT(vision->message().contains("BF16 fast mode, measured against FP32 at load: max |Δ logits|"),
                                 60000);
        QVERIFY2(vision->message().contains("same top-1 class"), qPrintable(vision->message()));
        fp32->trigger();
        QCOMPARE(linearPrecision(), LinearPrecision::Fp32);
        QCOMPARE(QSettings().value("precision").toString(), QString("fp32"));
        QTRY_VERIFY_WITH_TIMEOUT(!vision->isBusy() && !vision->message().contains("BF16"), 60000);
    }
};

QTEST_MAIN(TestPageChrome)
#include "test_page_chrome.moc"
