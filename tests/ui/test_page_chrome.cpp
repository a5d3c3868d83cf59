// The chrome every page shares, offscreen: JobStatus appears while its worker runs a job and Cancel
// cancels it; PageMessage shows errors and notices in palette-derived colours and restyles (once, no
// loop) when the palette changes; mute() follows the palette; View → Theme switches the app's
// palette and remembers it; recent models, Help → Keyboard shortcuts and What am I looking at?.

#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "core/util/parallel.h"
#include "support/waits.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/shell/help_dialogs.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/shell/theme.h"
#include "ui/text/text_page.h"
#include "ui/translate/translate_page.h"
#include "ui/vision/sample_gallery.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QUrl>

#include <atomic>
#include <chrono>
#include <memory>
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
        worker.run<int>("Working",
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
        WAIT_UNTIL(status->isVisible());
        WAIT_UNTIL_COMPARE(status->progressBar()->value(), 500);
        // The bar says what it waits for: the job and its stage.
        QCOMPARE(status->progressBar()->toolTip(), QStringLiteral("Working: half"));
        QVERIFY(status->progressBar()->isTextVisible());
        QCOMPARE(status->progressBar()->text(), QStringLiteral("Working: half 50%"));
        QTest::mouseClick(status->cancelButton(), Qt::LeftButton);
        WAIT_UNTIL(cancelled.count() > 0);
        WAIT_UNTIL(!status->isVisible());
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

    // View → Theme: Light / Dark / System switch the palette and remember the choice; System gives back the
    // look the application started with; an older "darkMode" setting reads as Dark.
    void themeMenuSwitchesAndRemembers() {
        applyTheme(Theme::System);
        const QColor systemWindow = QApplication::palette().color(QPalette::Window);
        MainWindow window;
        auto* dark = window.findChild<QAction*>("themeDark");
        auto* light = window.findChild<QAction*>("themeLight");
        auto* system = window.findChild<QAction*>("themeSystem");
        QVERIFY(dark && light && system);
        QVERIFY(system->isChecked());
        dark->trigger();
        QCOMPARE(currentTheme(), Theme::Dark);
        QCOMPARE(QSettings().value("theme").toString(), QString("dark"));
        QCOMPARE(QApplication::palette().color(QPalette::Window), darkPalette().color(QPalette::Window));
        light->trigger();
        QCOMPARE(currentTheme(), Theme::Light);
        QVERIFY(!isDark(QApplication::palette()));
        system->trigger();
        QCOMPARE(currentTheme(), Theme::System);
        QCOMPARE(QApplication::palette().color(QPalette::Window), systemWindow);
        QCOMPARE(savedTheme(), Theme::System);
        QSettings().remove("theme");
        QSettings().setValue("darkMode", true);
        QCOMPARE(savedTheme(), Theme::Dark);
        saveTheme(Theme::Light);
        QVERIFY(!QSettings().contains("darkMode"));
        QCOMPARE(savedTheme(), Theme::Light);
    }

    // A model folder dropped on the window opens on its page; a dropped file is not taken as a model. The
    // window's geometry is saved on close and restored by the next window.
    void droppedFolderOpensAndGeometryIsRemembered() {
        QSettings().remove("recentModels");
        {
            MainWindow window;
            auto* vision = new VisionPage(&window);
            window.addPage("Vision", vision);
            WAIT_UNTIL(!vision->isBusy());
            QMimeData folder;
            folder.setUrls({QUrl::fromLocalFile(QStringLiteral(ATTNLENS_TEST_DATA "/vit/rgb"))});
            QDragEnterEvent enter(QPoint(5, 5), Qt::CopyAction, &folder, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&window, &enter);
            QVERIFY(enter.isAccepted());
            QDropEvent drop(QPointF(5, 5), Qt::CopyAction, &folder, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&window, &drop);
            WAIT_UNTIL(!vision->isBusy() &&
                       vision->loadedModelDir() == QStringLiteral(ATTNLENS_TEST_DATA "/vit/rgb"));
            QMimeData file;
            file.setUrls(
                {QUrl::fromLocalFile(QStringLiteral(ATTNLENS_TEST_DATA "/vit/images/photo_97x61.png"))});
            QVERIFY(!window.dropModelFolder(&file));
            window.resize(1111, 777);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            auto* split = window.findChild<QSplitter*>("visionSplitter");
            QVERIFY(split);
            split->setSizes({200, 400});
            window.close(); // saves the geometry and the splitters
        }
        MainWindow again;
        auto* vision = new VisionPage(&again, QStringLiteral(ATTNLENS_TEST_DATA "/vit/rgb"));
        again.addPage("Vision", vision);
        again.restoreWindowGeometry();
        QCOMPARE(again.size(), QSize(1111, 777));
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        const QList<int> sizes = again.findChild<QSplitter*>("visionSplitter")->sizes();
        QVERIFY2(sizes.size() == 2 && sizes[0] < sizes[1],
                 qPrintable(QString("%1 %2").arg(sizes.value(0)).arg(sizes.value(1))));
        WAIT_UNTIL(!vision->isBusy());
    }

    // File → Open recent model lists folders that loaded, never one that failed; the failure shows in the
    // page's banner and a folder that is no model in the window's banner (no dialogs).
    void recentModelsHoldOnlyFoldersThatLoaded() {
        QSettings().remove("recentModels");
        MainWindow window;
        auto* vision = new VisionPage(&window);
        window.addPage("Vision", vision);
        WAIT_UNTIL(!vision->isBusy());
        QVERIFY2(window.recentModels().isEmpty(), qPrintable(window.recentModels().join(',')));

        const QString good = QStringLiteral(ATTNLENS_TEST_DATA "/vit/rgb");
        QVERIFY(window.openModel(good));
        WAIT_UNTIL(!vision->isBusy());
        QCOMPARE(vision->loadedModelDir(), good);
        QCOMPARE(window.recentModels(), QStringList{good});

        // The same folder with its weights cut short: routed to the page, fails on the worker.
        QTemporaryDir tmp;
        const QString broken = tmp.filePath("broken-vit");
        QVERIFY(QDir().mkpath(broken));
        for (const char* name : {"config.json", "preprocessor_config.json"})
            QVERIFY(QFile::copy(good + "/" + name, broken + "/" + name));
        QFile weights(good + "/model.safetensors");
        QVERIFY(weights.open(QIODevice::ReadOnly));
        QFile cut(broken + "/model.safetensors");
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(weights.read(weights.size() / 2));
        cut.close();
        QVERIFY(window.openModel(broken));
        WAIT_UNTIL(!vision->isBusy());
        QVERIFY2(vision->message().contains("model.safetensors"), qPrintable(vision->message()));
        QCOMPARE(vision->loadedModelDir(), good); // the previous model stays
        QCOMPARE(window.recentModels(), QStringList{good});
        // Loading the good folder again (a reload) does not smuggle the failed one in.
        vision->reloadModel();
        WAIT_UNTIL(!vision->isBusy());
        QCOMPARE(window.recentModels(), QStringList{good});

        // Not a model folder: the window's banner says why; nothing is remembered.
        QVERIFY(!window.openModel(tmp.path()));
        QVERIFY2(window.windowMessage().startsWith("Cannot open the model"),
                 qPrintable(window.windowMessage()));
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            window.resize(1280, 800);
            window.show();
            QApplication::processEvents();
            window.grab().save(QString::fromLocal8Bit(dir) + "/window-banner.png");
        }
        // It stays with the page it appeared on (issue 38: it followed the user to every page).
        window.setCurrentPage(window.addPage("Other", new QWidget(&window)));
        QVERIFY2(window.windowMessage().isEmpty(), qPrintable(window.windowMessage()));
        QCOMPARE(window.recentModels(), QStringList{good});
        QSettings().remove("recentModels");
    }

    // Help → Keyboard shortcuts lists every shortcut the window has (read off the live objects) and the
    // views' own keys; Help → What am I looking at? explains the current page.
    void helpListsShortcutsAndExplainsTheView() {
        MainWindow window;
        auto* vision = new VisionPage(&window);
        window.addPage("Vision", vision);
        auto* textPage = new TextPage(&window); // its step keys were "(undocumented)" before PlaybackBar
        window.addPage("Text", textPage);
        auto* translate = new TranslatePage(&window, false);
        window.addPage("Translate", translate);
        const QList<QPair<QString, QWidget*>> pages = {{QStringLiteral("Vision"), vision},
                                                       {QStringLiteral("Text"), textPage},
                                                       {QStringLiteral("Translate"), translate}};
        const QList<ShortcutRow> rows = collectShortcuts(&window, pages);
        auto has = [&](const QKeySequence& key, const QString& action) {
            const QString keys = key.toString(QKeySequence::NativeText);
            for (const ShortcutRow& r : rows)
                if (r.keys == keys && r.action.contains(action)) return true;
            return false;
        };
        QVERIFY(has(QKeySequence::Open, "Open model"));
        QVERIFY(has(QKeySequence(Qt::CTRL | Qt::Key_1), "Vision"));
        QVERIFY(has(QKeySequence::Paste, "Paste an image"));
        QVERIFY(has(QKeySequence::HelpContents, "What am I looking at"));
        QVERIFY(has(QKeySequence(Qt::ALT | Qt::Key_Right), "Next generated token"));
        QVERIFY(has(QKeySequence(Qt::CTRL | Qt::Key_BracketLeft), "Previous decoding step"));
        QVERIFY(has(QKeySequence(Qt::CTRL | Qt::Key_P), "Play / pause"));
        // Every QAction with a shortcut in the menus is listed.
        int menuShortcuts = 0;
        for (QAction* a : window.findChildren<QAction*>())
            if (!a->shortcut().isEmpty() && !a->associatedObjects().isEmpty()) ++menuShortcuts;
        int listedMenu = 0;
        for (const ShortcutRow& r : rows)
            if (r.where.endsWith(" menu") || r.where.contains(" menu → ")) ++listedMenu;
        QVERIFY2(listedMenu >= menuShortcuts - 1,
                 qPrintable(QString("%1 of %2").arg(listedMenu).arg(menuShortcuts)));
        for (const ShortcutRow& r : rows)
            QVERIFY2(r.action != "(undocumented)", qPrintable(r.keys));
        QVERIFY(shortcutsHtml(rows).contains("Any heatmap"));

        window.findChild<QAction*>("whatAmILookingAt")->trigger();
        auto* dialog = window.findChild<QDialog*>("explanationDialog");
        QVERIFY(dialog && dialog->isVisible());
        auto* text = dialog->findChild<QTextBrowser*>("helpText");
        QVERIFY2(text->toPlainText().contains("CLS"), qPrintable(text->toPlainText()));
        window.findChild<QAction*>("keyboardShortcuts")->trigger();
        auto* keys = window.findChild<QDialog*>("shortcutsDialog");
        QVERIFY(keys && keys->isVisible());
        QVERIFY(keys->findChild<QTextBrowser*>("helpText")->toPlainText().contains("Open model"));
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            keys->grab().save(QString::fromLocal8Bit(dir) + "/help-shortcuts.png");
            dialog->grab().save(QString::fromLocal8Bit(dir) + "/help-explanation.png");
        }
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
        auto* text = new TextPage(&window); // the built-in Llama: bfloat16 weights, multiplied as stored
        window.addPage("Text", text);
        auto* diffusion = new DiffusionPage(&window);
        window.addPage("Diffusion", diffusion);
        WAIT_UNTIL(vision->document()->hasImage() && !vision->isBusy() && !text->isBusy() &&
                   !diffusion->isBusy());
        QVERIFY(!vision->message().contains("BF16"));
        bf16->trigger();
        QCOMPARE(linearPrecision(), LinearPrecision::Bf16);
        QCOMPARE(QSettings().value("precision").toString(), QString("bf16"));
        const QString measured = "BF16 fast mode, measured against FP32 at load: ";
        WAIT_UNTIL(vision->message().contains(measured + "max |Δ logits|"));
        QVERIFY2(vision->message().contains("same top-1 class"), qPrintable(vision->message()));
        WAIT_UNTIL(text->statusText().contains(measured + "max |Δ logits|"));
        QVERIFY2(text->statusText().contains("next token"), qPrintable(text->statusText()));
        WAIT_UNTIL(diffusion->message().contains(measured + "max |Δ noise|"));
        for (const QString& note : {vision->message(), text->statusText(), diffusion->message()})
            QVERIFY2(!note.contains("| 0 (") && !note.contains("attention| 0,"),
                     qPrintable(note)); // measured
        fp32->trigger();
        QCOMPARE(linearPrecision(), LinearPrecision::Fp32);
        QCOMPARE(QSettings().value("precision").toString(), QString("fp32"));
        WAIT_UNTIL(!vision->isBusy() && !vision->message().contains("BF16") && !text->isBusy() &&
                   !text->statusText().contains("BF16") && !diffusion->isBusy());
    }

    // Compute → Threads: Automatic (the default team) and 1, 2, … up to the machine's cores; the choice sets
    // the engine's team at once and is remembered (QSettings "threads", 0 = automatic).
    void computeMenuSetsThreads() {
        QSettings().remove("threads");
        MainWindow window;
        auto* automatic = window.findChild<QAction*>("threadsAuto");
        auto* one = window.findChild<QAction*>("threads1");
        QVERIFY(automatic && one);
        QVERIFY(automatic->isChecked());
        QCOMPARE(computeThreads(), defaultComputeThreads());
        one->trigger();
        QCOMPARE(computeThreads(), 1);
        QCOMPARE(QSettings().value("threads").toInt(), 1);
        if (auto* two = window.findChild<QAction*>("threads2")) {
            two->trigger();
            QCOMPARE(computeThreads(), 2);
            MainWindow again; // remembered
            QVERIFY(again.findChild<QAction*>("threads2")->isChecked());
            QCOMPARE(computeThreads(), 2);
        }
        automatic->trigger();
        QCOMPARE(QSettings().value("threads").toInt(), 0);
        QCOMPARE(computeThreads(), defaultComputeThreads());
    }
};

QTEST_MAIN(TestPageChrome)
#include "test_page_chrome.moc"
