// Faults a user causes in the middle of a long run, on every page that runs a model (Translate, Vision,
// Diffusion; the Attention playground computes synchronously and has no run to interrupt): Cancel, opening
// another model (or a broken one), and closing the window. Nothing crashes (the test command also runs this
// suite under ASan + UBSan), the user's input and the previous result stay, and the page works afterwards.
//
// Long runs: Translate decodes 512 tokens with beam 4 on a copy of the tiny test model whose </s> logit is
// pushed down (it never stops early), acting after the first partial result; Vision decodes an 8000×6000
// picture, acting once the worker has started; Diffusion runs DDPM with 1000 steps, acting after 10 steps.

#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/safetensors.h"
#include "support/long_runs.h"
#include "support/waits.h"
#include "ui/diffusion/diffusion_document.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/translate/translate_page.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"

#include <QImage>
#include <QPainter>
#include <QPointer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

using namespace attnlens;
using namespace attnlens::ui;
namespace fs = std::filesystem;

namespace {

const fs::path kTiny = test::kTinyMarian;

QString builtin(const char* name) {
    return QString::fromStdString(builtinModelDir(name).string());
}

QString samplePath(const char* name) {
    return QString::fromStdString((resourcesDir() / "samples" / "fashion-mnist" / name).string());
}

QString translation(const TranslatePage& page) {
    const auto snap = page.document()->snapshot();
    return snap && snap->best ? QString::fromStdString(snap->best->translation) : QString();
}

// Deletes `object` if it still exists; events queued for it afterwards must not reach it.
template <typename T> void destroyNow(QPointer<T>& object) {
    delete object.data();
    QVERIFY(object.isNull());
}

} // namespace

class TestFaults : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();

    void translateCancelMidRun();
    void translateOpenModelMidRun();
    void translateBrokenModelMidRun();
    void translateCloseWindowMidRun();
    void visionCancelMidRun();
    void visionOpenModelMidRun();
    void visionCloseWindowMidRun();
    void diffusionCancelMidRun();
    void diffusionOpenModelMidRun();
    void diffusionCloseWindowMidRun();

private:
    // A Translate page with the never-ending model loaded and "Guten Morgen!" translated (short run).
    void translatePage(TranslatePage& page);
    // Starts a 512-token beam-4 translation and returns once a partial result of it is shown.
    void startLongTranslation(TranslatePage& page);
    // A Vision page with the built-in model and a sample analysed.
    void visionPage(VisionPage& page);
    // Starts analysing the large picture and returns once the worker is running it.
    void startLongAnalysis(VisionPage& page);
    void diffusionPage(DiffusionPage& page);
    void startLongDiffusion(DiffusionPage& page);

    QTemporaryDir m_tmp;
    QString m_neverEnding;
    QString m_largePicture;
    QString m_brokenModel;
};

void TestFaults::initTestCase() {
    QVERIFY(m_tmp.isValid());
    m_neverEnding = m_tmp.filePath("never-ending");
    test::writeNeverEndingMarian(m_neverEnding.toStdString());
    m_largePicture = m_tmp.filePath("large.jpg");
    QVERIFY(test::writeLargePicture(m_largePicture));
    // A Marian folder whose weights are cut short: found as a Marian model, fails while loading.
    m_brokenModel = m_tmp.filePath("broken");
    fs::create_directories(m_brokenModel.toStdString());
    for (const auto& entry : fs::directory_iterator(kTiny))
        fs::copy_file(entry.path(), fs::path(m_brokenModel.toStdString()) / entry.path().filename());
    fs::resize_file(fs::path(m_brokenModel.toStdString()) / "model.safetensors", 5000);
}

// ---- Translate --------------------------------------------------------------------------------------------

void TestFaults::translatePage(TranslatePage& page) {
    page.show();
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    page.setInput(QStringLiteral("Guten Morgen!"));
    page.setBeamWidth(1);
    page.setMaxNewTokens(8);
    page.openModel(m_neverEnding);
    WAIT_UNTIL(ready.count() > 0);
    WAIT_UNTIL_COMPARE(page.worker()->pendingJobs(), 0);
    QCOMPARE(page.document()->snapshot()->best->targetIds.size(), size_t(8));
}

void TestFaults::startLongTranslation(TranslatePage& page) {
    QSignalSpy partial(&page, &TranslatePage::partialResult);
    page.setBeamWidth(4);
    page.setMaxNewTokens(512);
    page.translate();
    WAIT_UNTIL(partial.count() > 0); // "the long translation showed no partial result"
    QVERIFY(!page.document()->snapshot()->finished);
    QVERIFY(page.worker()->pendingJobs() > 0);
}

void TestFaults::translateCancelMidRun() {
    TranslatePage page(nullptr, false);
    translatePage(page);
    startLongTranslation(page);
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    QSignalSpy partial(&page, &TranslatePage::partialResult);
    page.cancel();
    WAIT_UNTIL_COMPARE(page.worker()->pendingJobs(), 0);
    QTest::qWait(2 * TranslatePage::kSliceMs); // nothing of the cancelled run arrives later
    QCOMPARE(ready.count(), 0);
    QCOMPARE(partial.count(), 0);
    QVERIFY2(page.statusText().contains(QStringLiteral("Cancelled")), qPrintable(page.statusText()));
    QCOMPARE(page.input(), QStringLiteral("Guten Morgen!"));
    const auto shown = page.document()->snapshot();
    QVERIFY(shown != nullptr && !shown->finished); // the part decoded before Cancel stays to look at
    QVERIFY(shown->step > 0 && shown->step < 512);
    // The page works afterwards: a short translation completes.
    page.setMaxNewTokens(6);
    page.translate();
    WAIT_UNTIL(ready.count() > 0);
    WAIT_UNTIL_COMPARE(page.worker()->pendingJobs(), 0);
    QVERIFY(page.document()->snapshot()->finished);
    QCOMPARE(page.document()->snapshot()->best->targetIds.size(), size_t(6));
}

void TestFaults::translateOpenModelMidRun() {
    TranslatePage page(nullptr, false);
    translatePage(page);
    startLongTranslation(page);
    // The built-in model replaces the running one; it re-translates the input and stops at </s>.
    QSignalSpy loaded(&page, &TranslatePage::modelLoaded);
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    page.openModel(builtin("marian-de-en-tiny"));
    WAIT_UNTIL(loaded.count() > 0);
    WAIT_UNTIL(ready.count() > 0);
    WAIT_UNTIL_COMPARE(page.worker()->pendingJobs(), 0);
    QVERIFY2(page.modelDescription().contains(QStringLiteral("marian-de-en-tiny")),
             qPrintable(page.modelDescription()));
    const auto snap = page.document()->snapshot();
    QVERIFY(snap->finished);
    QVERIFY(snap->best->targetIds.size() < 40);
    QVERIFY2(translation(page).contains(QStringLiteral("morning"), Qt::CaseInsensitive),
             qPrintable(translation(page)));
}

void TestFaults::translateBrokenModelMidRun() {
    TranslatePage page(nullptr, false);
    translatePage(page);
    startLongTranslation(page);
    const QString description = page.modelDescription();
    QSignalSpy failed(&page, &TranslatePage::failed);
    page.openModel(m_brokenModel);
    WAIT_UNTIL(failed.count() > 0);
    WAIT_UNTIL_COMPARE(page.worker()->pendingJobs(), 0);
    QVERIFY2(page.message().contains(QStringLiteral("model.safetensors")), qPrintable(page.message()));
    // The status line no longer says it is loading (issue 38: "Loading …/broken…" stayed after the failure).
    QVERIFY2(!page.statusText().startsWith(QStringLiteral("Loading")), qPrintable(page.statusText()));
    // The previous model is still the page's and still translates; the input is untouched.
    QCOMPARE(page.modelDescription(), description);
    QCOMPARE(page.input(), QStringLiteral("Guten Morgen!"));
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    page.setBeamWidth(1);
    page.setMaxNewTokens(5);
    page.translate();
    WAIT_UNTIL(ready.count() > 0);
    QCOMPARE(page.document()->snapshot()->best->targetIds.size(), size_t(5));
    // Stepping back and forth still works on that session.
    QSignalSpy stepped(&page, &TranslatePage::resultReady);
    page.stepBack();
    WAIT_UNTIL(stepped.count() > 0);
    QCOMPARE(page.document()->snapshot()->step, 4);
}

void TestFaults::translateCloseWindowMidRun() {
    QPointer<MainWindow> window = new MainWindow;
    auto* page = new TranslatePage(nullptr, false);
    window->addPage(QStringLiteral("Translate"), page);
    window->show();
    translatePage(*page);
    startLongTranslation(*page);
    QPointer<TranslatePage> watched = page;
    destroyNow(window);
    QVERIFY(watched.isNull());
    QTest::qWait(3 * TranslatePage::kSliceMs); // a delivery queued before the close must find nothing
}

// ---- Vision -----------------------------------------------------------------------------------------------

void TestFaults::visionPage(VisionPage& page) {
    page.resize(1200, 800);
    page.show();
    WAIT_UNTIL(page.document()->hasImage() && !page.isBusy());
    QSignalSpy shown(&page, &VisionPage::resultReady);
    page.openImage(samplePath("bag_1.png"));
    WAIT_UNTIL(shown.count() > 0);
    WAIT_UNTIL(!page.isBusy());
}

void TestFaults::startLongAnalysis(VisionPage& page) {
    page.openImage(m_largePicture);
    WAIT_UNTIL(page.worker()->isBusy());
}

void TestFaults::visionCancelMidRun() {
    VisionPage page;
    visionPage(page);
    const auto before = page.document()->image();
    startLongAnalysis(page);
    QSignalSpy cancelled(page.worker(), &InferenceWorker::cancelled);
    QSignalSpy shown(&page, &VisionPage::resultReady);
    page.worker()->cancel(); // what the status bar's Cancel does
    WAIT_UNTIL(cancelled.count() > 0);
    WAIT_UNTIL(!page.isBusy());
    QCOMPARE(shown.count(), 0);
    QCOMPARE(page.document()->image(), before); // the previous picture and its result, untouched
    QVERIFY2(page.message().contains(QStringLiteral("Cancelled")), qPrintable(page.message()));
    // The page works afterwards.
    page.openImage(samplePath("sneaker_1.png"));
    WAIT_UNTIL(shown.count() > 0);
    QCOMPARE(page.document()->image()->source, QStringLiteral("sneaker_1.png"));
}

void TestFaults::visionOpenModelMidRun() {
    VisionPage page;
    visionPage(page);
    startLongAnalysis(page);
    // Another model while the large picture is analysed: what ends on screen is that picture analysed by the
    // new model (the old model's result is never shown).
    QSignalSpy loaded(&page, &VisionPage::modelLoaded);
    page.openModel(QStringLiteral(ATTNLENS_TEST_DATA "/vit/rgb-deit"));
    WAIT_UNTIL(loaded.count() > 0);
    WAIT_UNTIL(!page.isBusy() && page.document()->image()->source == QStringLiteral("large.jpg"));
    QCOMPARE(QString::fromStdString(page.document()->model()->dir().filename().string()),
             QStringLiteral("rgb-deit"));
    QCOMPARE(page.document()->image()->result.output.attentions.shape()[2], int64_t(17)); // DeiT's 16×16 crop
    // A broken folder in the middle of another analysis keeps that model.
    startLongAnalysis(page);
    page.openModel(m_brokenModel);
    WAIT_UNTIL(!page.isBusy());
    QCOMPARE(QString::fromStdString(page.document()->model()->dir().filename().string()),
             QStringLiteral("rgb-deit"));
}

void TestFaults::visionCloseWindowMidRun() {
    QPointer<MainWindow> window = new MainWindow;
    auto* page = new VisionPage;
    window->addPage(QStringLiteral("Vision"), page);
    window->show();
    visionPage(*page);
    startLongAnalysis(*page);
    destroyNow(window);
    QTest::qWait(300);
}

// ---- Diffusion --------------------------------------------------------------------------------------------

void TestFaults::diffusionPage(DiffusionPage& page) {
    page.resize(1200, 800);
    page.show(); // showing the page loads the built-in model and starts its first run
    WAIT_UNTIL(page.document()->model() && !page.isBusy());
}

void TestFaults::startLongDiffusion(DiffusionPage& page) {
    page.setSettings({SchedulerKind::Ddpm, 1000, 2, 7});
    page.generate();
    WAIT_UNTIL(page.document()->running() && page.document()->completedSteps() >= 10);
}

void TestFaults::diffusionCancelMidRun() {
    DiffusionPage page;
    diffusionPage(page);
    startLongDiffusion(page);
    QSignalSpy finished(&page, &DiffusionPage::runFinished);
    page.worker()->cancel();
    WAIT_UNTIL(finished.count() > 0);
    WAIT_UNTIL(!page.isBusy());
    const int made = page.document()->completedSteps();
    QVERIFY(made >= 10 && made < 1000);
    QVERIFY(!page.document()->running());
    QVERIFY2(page.message().contains(QStringLiteral("Stopped")), qPrintable(page.message()));
    // The page works afterwards.
    page.setSettings({SchedulerKind::Ddim, 5, 2, 7});
    page.generate();
    WAIT_UNTIL(!page.isBusy() && !page.document()->running() && page.document()->completedSteps() == 5);
    QVERIFY(!page.document()->finalImage().empty());
}

void TestFaults::diffusionOpenModelMidRun() {
    DiffusionPage page;
    diffusionPage(page);
    startLongDiffusion(page);
    // A broken folder first: the run stops at once (its steps stay), the model stays.
    const QString description = page.modelDescription();
    QSignalSpy finished(&page, &DiffusionPage::runFinished);
    page.openModel(QStringLiteral(ATTNLENS_TEST_DATA "/vit/rgb"));
    WAIT_UNTIL(finished.count() > 0);
    WAIT_UNTIL(!page.isBusy());
    QVERIFY(page.document()->completedSteps() < 1000);
    QVERIFY2(page.message().contains(QStringLiteral("diffusion_pytorch_model")), qPrintable(page.message()));
    QCOMPARE(page.modelDescription(), description);
    // Another diffusers folder in the middle of a run replaces the model; the page runs it.
    startLongDiffusion(page);
    page.setSettings({SchedulerKind::Ddim, 4, std::nullopt, 7});
    QSignalSpy loaded(&page, &DiffusionPage::modelLoaded);
    page.openModel(QStringLiteral(ATTNLENS_TEST_DATA "/unet/bare-head8"));
    WAIT_UNTIL(loaded.count() > 0);
    WAIT_UNTIL(!page.isBusy());
    QVERIFY2(page.modelDescription().startsWith(QStringLiteral("bare-head8")),
             qPrintable(page.modelDescription()));
    WAIT_UNTIL(!page.isBusy() && !page.document()->running() && page.document()->completedSteps() == 4);
    QCOMPARE(page.document()->settings().steps, 4);
}

void TestFaults::diffusionCloseWindowMidRun() {
    QPointer<MainWindow> window = new MainWindow;
    auto* page = new DiffusionPage;
    window->addPage(QStringLiteral("Diffusion"), page);
    window->show();
    window->setCurrentPage(0);
    diffusionPage(*page);
    startLongDiffusion(*page);
    destroyNow(window);
    QTest::qWait(300);
}

QTEST_MAIN(TestFaults)
#include "test_faults.moc"
