// Issue 36: closing a page — or the whole window — while its worker streams results must never let the worker
// touch the dying page. The bug this pins: Diffusion's generation job read a QPointer<DiffusionPage> on the
// worker thread while the GUI thread destroyed the page (UBSan: "downcast of address … which does not point
// to an object of type 'DiffusionPage'"), found by `attnlens --page 3 --class Unicorn`, which closes the
// window right after the bad option while the first generation starts.
//
// Every page that runs a model is created with its built-in model and destroyed at a different moment in each
// of kRepetitions rounds: while its model loads, as its run starts, after the first streamed result, a few
// results in, and (Diffusion) while attention of other steps is being computed. Then the event loop runs on,
// so that any delivery queued before the close would land. The test command runs this suite under ASan +
// UBSan, where a delivery to a dead page or a QPointer read off the GUI thread is a report and a failure.
// At least half the rounds of each page close at a moment where the run is certainly still going, whatever
// the machine's speed (a fast release build finishes the later moments' runs sooner); a page closed mid-run
// in fewer rounds fails, since the test would then prove nothing.

#include "support/long_runs.h"
#include "support/waits.h"
#include "ui/diffusion/diffusion_document.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/t2i/t2i_document.h"
#include "ui/t2i/t2i_page.h"
#include "ui/text/text_document.h"
#include "ui/text/text_page.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"

#include <QPointer>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <functional>
#include <thread>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

constexpr int kRepetitions = 50;

// ms: 0, 37, 74, 111, 148, 25, … — spread over a whole step of the slowest page (a U-Net step takes ~140 ms
// under ASan), so that the close lands in every phase of the worker's cycle over the rounds.
int jitter(int round) {
    return (round * 37) % 160;
}

// Runs the event loop until `moment` holds (or the page has nothing left to do), then, after `jitterMs` with
// the GUI thread blocked (so that the close lands at another point of the worker's cycle each round, not
// always just after a result arrived), destroys `page` and lets the event loop run on for a while. Returns
// whether the moment was reached with the worker still at work.
template <typename Page> bool closeWhen(Page* page, int jitterMs, const std::function<bool()>& moment) {
    QPointer<Page> watched = page;
    const bool reached =
        QTest::qWaitFor([&] { return moment() || page->worker()->pendingJobs() == 0; }, test::kHangMs);
    const bool midRun = reached && page->worker()->pendingJobs() > 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(jitterMs));
    delete page;
    if (!watched.isNull()) return false;
    QTest::qWait(30); // deliveries queued before the close would arrive now
    return midRun;
}

} // namespace

class TestCloseWhileRunning : public QObject {
    Q_OBJECT
private slots:
    void diffusionPage();
    void translatePage();
    void visionPage();
    void textPage();
    void textToImagePage();
    void mainWindow();
};

void TestCloseWhileRunning::diffusionPage() {
    int midRun = 0;
    for (int i = 0; i < kRepetitions; ++i) {
        auto* page = new DiffusionPage;
        page->resize(900, 700);
        page->setCaptureLimit(i % 2 ? 0 : int64_t{64} << 20); // odd rounds: attention computed by its own job
        page->setSettings({SchedulerKind::Ddpm, 1000, 2, 7});
        page->show();            // loads the built-in model, then generates 1000 DDPM steps
        const int steps = i % 5; // 0: as the run starts; then after 1–4 streamed steps
        const auto moment = [page, steps] {
            return page->document()->running() && page->document()->completedSteps() >= steps;
        };
        midRun +=
            closeWhen(page, jitter(i), i % 10 == 9 ? std::function<bool()>([] { return true; }) : moment);
    }
    qInfo("%d of %d rounds closed the page mid-run", midRun, kRepetitions);
    QVERIFY2(midRun >= kRepetitions / 2, qPrintable(QString::number(midRun)));
}

void TestCloseWhileRunning::translatePage() {
    QTemporaryDir tmp;
    const QString neverEnding = tmp.filePath("never-ending");
    test::writeNeverEndingMarian(neverEnding.toStdString());
    int midRun = 0;
    for (int i = 0; i < kRepetitions; ++i) {
        auto* page = new TranslatePage(nullptr, false);
        page->show();
        page->openModel(neverEnding); // decodes to the length limit: the run streams slices until closed
        if (i % 10 == 9) {            // while the model loads
            midRun += closeWhen(page, jitter(i), [] { return true; });
            continue;
        }
        WAIT_UNTIL(page->document()->hasModel() && page->worker()->pendingJobs() == 0);
        page->setMaxNewTokens(512);
        page->setBeamWidth(4); // greedy decodes 512 tokens of this tiny model within two slices
        page->setInput(
            QStringLiteral("Ich habe heute morgen einen langen Brief an meine Großmutter geschrieben."));
        int partials = 0;
        connect(page, &TranslatePage::partialResult, page, [&partials] { ++partials; });
        page->translate();
        const int after = i % 2; // 0: as the run starts; 1: after the first slice (the next may finish it)
        midRun += closeWhen(page, jitter(i), [&partials, after] { return partials >= after; });
    }
    qInfo("%d of %d rounds closed the page mid-run", midRun, kRepetitions);
    QVERIFY2(midRun >= kRepetitions / 2, qPrintable(QString::number(midRun)));
}

void TestCloseWhileRunning::visionPage() {
    QTemporaryDir tmp;
    const QString large = tmp.filePath("large.jpg");
    QVERIFY(test::writeLargePicture(large)); // decoding it takes long enough to close in the middle
    int midRun = 0;
    for (int i = 0; i < kRepetitions; ++i) {
        auto* page = new VisionPage; // the built-in model; showing it analyses a sample
        page->resize(900, 700);
        page->show();
        if (i % 2 == 0) { // while the model loads or the first picture is analysed
            midRun += closeWhen(page, jitter(i),
                                [page, i] { return i % 4 == 0 || page->document()->model() != nullptr; });
            continue;
        }
        WAIT_UNTIL(page->document()->hasImage() && !page->isBusy());
        page->openImage(large);
        midRun += closeWhen(page, jitter(i), [page] { return page->worker()->isBusy(); });
    }
    qInfo("%d of %d rounds closed the page mid-run", midRun, kRepetitions);
    QVERIFY2(midRun >= kRepetitions / 2, qPrintable(QString::number(midRun)));
}

void TestCloseWhileRunning::textPage() {
    int midRun = 0;
    for (int i = 0; i < kRepetitions; ++i) {
        auto* page = new TextPage; // the built-in GPT-2; showing it runs the first generation
        page->show();
        if (i % 3 == 0) {
            midRun += closeWhen(page, jitter(i), [] { return true; });
            continue;
        }
        WAIT_UNTIL(page->document()->hasModel() && !page->isBusy());
        page->setNewTokens(60);
        page->runText();
        midRun += closeWhen(page, jitter(i), [page, i] { return i % 3 == 1 || page->worker()->isBusy(); });
    }
    qInfo("%d of %d rounds closed the page mid-run", midRun, kRepetitions);
    QVERIFY2(midRun >= kRepetitions / 2, qPrintable(QString::number(midRun)));
}

// The Text to image page streams each step (its maps, its decoded picture) from the worker: closed as the
// run starts, after a few steps, or while a self-attention replay or a step's decode runs.
void TestCloseWhileRunning::textToImagePage() {
    int midRun = 0;
    // A pipeline load each round: 20 rounds ran past Qt's 300 s per test function under ASan on a loaded
    // machine; 8 still close it as a run starts, mid-stream (both picture paths) and during a replay.
    const int rounds = 8;
    for (int i = 0; i < rounds; ++i) {
        auto* page = new TextToImagePage(nullptr, QStringLiteral(ATTNLENS_TEST_DATA "/t2i/tiny-pipe"));
        page->resize(900, 700);
        WAIT_UNTIL(page->document()->pipeline() != nullptr);
        T2iSettings s = page->settingsFromControls();
        const bool after = i % 4 == 3; // after a short run: a pixel's self-attention replay, a step's decode
        s.steps = after ? 3 : 300;
        s.size = i % 2 && !after ? 80 : 0; // odd rounds: latent previews instead of a decode per step
        page->generate(s);
        const int steps = i % 5;
        if (after) {
            WAIT_UNTIL(!page->document()->running() && !page->isBusy());
            page->document()->setPixel(std::pair{4, 4});
            page->decodeShownStep();
            midRun += closeWhen(page, jitter(i), [] { return true; });
            continue;
        }
        midRun += closeWhen(page, jitter(i), [page, steps] {
            return page->document()->running() && page->document()->completedSteps() >= steps;
        });
    }
    qInfo("%d of %d rounds closed the page mid-run", midRun, rounds);
    QVERIFY2(midRun >= rounds / 2, qPrintable(QString::number(midRun)));
}

// The whole window, as `attnlens --page 3 …` closes it on a bad option: every page starts its model at once.
void TestCloseWhileRunning::mainWindow() {
    for (int i = 0; i < kRepetitions / 5; ++i) {
        QPointer<MainWindow> window = new MainWindow;
        auto* diffusion = new DiffusionPage;
        window->addPage(QStringLiteral("Translate"), new TranslatePage);
        window->addPage(QStringLiteral("Vision"), new VisionPage);
        window->addPage(QStringLiteral("Diffusion"), diffusion);
        window->addPage(QStringLiteral("Text"), new TextPage);
        window->setCurrentPage(2);
        window->show();
        const int steps = i % 3;
        WAIT_UNTIL(diffusion->document()->completedSteps() >= steps);
        std::this_thread::sleep_for(std::chrono::milliseconds(jitter(i)));
        delete window.data();
        QVERIFY(window.isNull());
        QTest::qWait(30);
    }
}

QTEST_MAIN(TestCloseWhileRunning)
#include "test_close_while_running.moc"
