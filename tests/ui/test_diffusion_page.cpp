// The Diffusion page on the built-in ddpm-fashion-tiny, offscreen: generation runs on the worker while
// the page shows each step as it arrives; the final image equals `attnlens-cli diffuse`'s; the timeline,
// Play and the step strip move through the steps; a click (or drag) on the large view sets the query
// and the map is the attention read straight from the tensor; key side; the U view has one tile per
// layer and selects; Cancel keeps the steps made; every export (the view equals `diffuse --overlay`
// pixel for pixel, GIF frames, PNG sequence, NPY/CSV); a bad folder keeps the model; a pipeline folder
// opens and generates.

#include "core/analysis/attention_captures.h"
#include "core/analysis/head_importance.h"
#include "core/export/overlay.h"
#include "core/io/model_folder.h"
#include "core/io/npy_reader.h"
#include "core/vision/image_io.h"
#include "support/cli_run.h"
#include "support/gif_read.h"
#include "support/waits.h"
#include "ui/diffusion/diffusion_document.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/widgets/color_bar.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/neuron_dialog.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <memory>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

QString unetFixture(const char* name) {
    return QStringLiteral(ATTNLENS_TEST_DATA "/unet/") + QLatin1String(name);
}

// The widget position of an image pixel's centre in the large view.
QPoint pixelPos(PatchImageView* view, int row, int col) {
    const QRectF r = view->patchRect(row * view->grid().cols() + col);
    return r.center().toPoint();
}

} // namespace

class TestDiffusionPage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase() { m_page.reset(); }
    void init();

    void firstRunShowsEveryStepWithAttention();
    void stepsAppearWhileGeneratingAndTheUiStaysResponsive();
    void finalImageIsTheClisImage();
    void timelineButtonsPlayAndStrip();
    void clickAndDragSetTheQuery();
    void keySideAndHeadsReadTheTensor();
    void valueWeightedMapsReadTheNorms();
    void uViewHasOneTilePerLayerAndSelects();
    void cancelKeepsTheStepsMade();
    void scrubbingComputesOneStepAtATime();
    void exportsMatchTheCli();
    void headLensesOfAStep();
    void differenceOfTwoSteps();
    void badFolderKeepsTheModel();
    void mainWindowSendsDiffusersFoldersHere();
    void pipelineFolderOpensAndGenerates(); // last: it switches the page to another model

private:
    DiffusionDocument* doc() const { return m_page->document(); }
    void generateAndWait(int cls, int seed, int steps, SchedulerKind scheduler = SchedulerKind::Ddim);

    std::unique_ptr<DiffusionPage> m_page;
};

void TestDiffusionPage::initTestCase() {
    m_page = std::make_unique<DiffusionPage>();
    m_page->resize(1400, 900);
    QSignalSpy finished(m_page.get(), &DiffusionPage::runFinished);
    m_page->show(); // the first run starts once the built-in model is loaded and the page shown
    QVERIFY(QTest::qWaitForWindowExposed(m_page.get()));
    WAIT_UNTIL(finished.count() > 0);
    WAIT_UNTIL(!m_page->isBusy());
    QVERIFY2(m_page->message().isEmpty(), qPrintable(m_page->message()));
}

void TestDiffusionPage::init() {
    WAIT_UNTIL(!m_page->isBusy());
    m_page->setPlaying(false);
    doc()->setLayer(0);
    doc()->setHead(-1);
    doc()->setFusion(HeadFusion::Mean);
    doc()->setKeySide(false);
    doc()->setOnNoisy(false);
    doc()->setValueWeighted(false);
    doc()->setOpacity(0.6f);
}

void TestDiffusionPage::generateAndWait(int cls, int seed, int steps, SchedulerKind scheduler) {
    m_page->setSettings({scheduler, steps, cls, static_cast<uint64_t>(seed)});
    QSignalSpy finished(m_page.get(), &DiffusionPage::runFinished);
    QTest::mouseClick(m_page->findChild<QAbstractButton*>("generate"), Qt::LeftButton);
    WAIT_UNTIL(finished.count() > 0);
    WAIT_UNTIL(!m_page->isBusy());
}

void TestDiffusionPage::firstRunShowsEveryStepWithAttention() {
    QVERIFY(doc()->model());
    QCOMPARE(doc()->classCount(), 10);
    QCOMPARE(doc()->className(7), QStringLiteral("Sneaker"));
    QCOMPARE(static_cast<int>(doc()->layers().size()), 7);
    QCOMPARE(doc()->completedSteps(), 50);
    QCOMPARE(doc()->stepCount(), 50);
    QVERIFY(!doc()->running());
    QCOMPARE(doc()->currentStep(), 49);
    QCOMPARE(doc()->frame(0).step.timestep, 980);
    QCOMPARE(doc()->frame(49).step.timestep, 0);
    QCOMPARE(doc()->frame(10).clean.width, 28);
    // the built-in model's attention was captured while generating: every step, every layer
    QVERIFY(doc()->missingAttention({0, 10, 25, 49}).empty());
    QCOMPARE(static_cast<int>(doc()->attention(3)->layers.size()), 7);
    // x_t, ε̂, x̂0 side by side; the view and colour bar show the map
    QCOMPARE(m_page->stepImages()->count(), 4); // x_t, ε̂, x̂0 and the final image
    QCOMPARE(doc()->finalImage().width, 28);
    QVERIFY(!m_page->overlayView()->picture().isNull());
    QVERIFY(m_page->colorBar()->hasRange());
    QCOMPARE(m_page->colorBar()->high(), doc()->currentMap().maxCoeff());
    QCOMPARE(m_page->findChild<QComboBox*>("class")->count(), 10);
}

void TestDiffusionPage::stepsAppearWhileGeneratingAndTheUiStaysResponsive() {
    // Count the frames the page shows before the run ends, and GUI timer ticks during it.
    int framesWhileRunning = 0, stepsShownWhileRunning = 0, ticks = 0;
    auto c1 = connect(doc(), &DiffusionDocument::runChanged, this, [&] {
        if (doc()->running() && doc()->completedSteps() > 0) ++framesWhileRunning;
    });
    auto c2 = connect(doc(), &DiffusionDocument::stepChanged, this, [&] {
        if (doc()->running()) ++stepsShownWhileRunning;
    });
    QTimer tick;
    connect(&tick, &QTimer::timeout, this, [&] { ++ticks; });
    tick.start(5);
    generateAndWait(2, 7, 200, SchedulerKind::Ddpm);
    tick.stop();
    disconnect(c1);
    disconnect(c2);
    QCOMPARE(doc()->completedSteps(), 200);
    QVERIFY2(framesWhileRunning >= 100, qPrintable(QString::number(framesWhileRunning)));
    QVERIFY2(stepsShownWhileRunning >= 100, qPrintable(QString::number(stepsShownWhileRunning)));
    QVERIFY2(ticks >= 5, qPrintable(QString::number(ticks))); // the event loop ran during generation
}

void TestDiffusionPage::finalImageIsTheClisImage() {
    generateAndWait(3, 2, 50);
    QTemporaryDir tmp;
    const QString png = tmp.filePath("cli.png");
    const auto r = clitest::run(
        {"diffuse", "--scheduler", "ddim", "--steps", "50", "--class", "3", "--seed", "2", "--out", png});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const ImageU8 cli = loadImage(png.toStdString());
    // The pipeline's image is the loop's output, shown after the last step's x_t, ε̂, x̂0.
    const ImageU8& ours = doc()->finalImage();
    QCOMPARE(m_page->stepImages()->count(), 4);
    QCOMPARE(ours.width, cli.width);
    QCOMPARE(ours.channels, 1);
    int differ = 0; // the CLI writes grey as grey RGB
    for (int y = 0; y < cli.height; ++y)
        for (int x = 0; x < cli.width; ++x)
            differ += ours.at(x, y) != cli.at(x, y, 0) || cli.at(x, y, 0) != cli.at(x, y, 2);
    QCOMPARE(differ, 0);
    // same settings, same image
    const auto first = doc()->frame(20).clean.pixels;
    generateAndWait(3, 2, 50);
    QCOMPARE(doc()->frame(20).clean.pixels, first);
}

void TestDiffusionPage::timelineButtonsPlayAndStrip() {
    auto* prev = m_page->findChild<QAbstractButton*>("stepBack");
    auto* next = m_page->findChild<QAbstractButton*>("stepForward");
    auto* slider = m_page->findChild<QSlider*>("timeline");
    QCOMPARE(slider->maximum(), 49);
    doc()->setCurrentStep(49);
    QVERIFY(!next->isEnabled());
    QTest::mouseClick(prev, Qt::LeftButton);
    QTest::mouseClick(prev, Qt::LeftButton);
    QCOMPARE(doc()->currentStep(), 47);
    QCOMPARE(slider->value(), 47);
    QTest::mouseClick(next, Qt::LeftButton);
    QCOMPARE(doc()->currentStep(), 48);
    slider->setValue(5);
    QCOMPARE(doc()->currentStep(), 5);
    QVERIFY(m_page->findChild<QLabel*>("stepLabel")->text().contains("t = 880"));
    // the three images are those of step 5
    const QImage xt = m_page->stepImages()->tile(0);
    QCOMPARE(qGray(xt.pixel(0, 0)), static_cast<int>(doc()->frame(5).noisy.at(0, 0)));
    // Play walks forward and stops at the last step
    doc()->setCurrentStep(44);
    m_page->setPlaying(true);
    WAIT_UNTIL(!m_page->isPlaying());
    QCOMPARE(doc()->currentStep(), 49);
    // the strip: 10 evenly spaced steps, first and last; a click goes there
    QCOMPARE(m_page->stepStrip()->count(), 10);
    QCOMPARE(doc()->stripSteps().front(), 0);
    QCOMPARE(doc()->stripSteps().back(), 49);
    QTest::mouseClick(m_page->stepStrip(), Qt::LeftButton, {}, m_page->stepStrip()->tileRect(2).center());
    QCOMPARE(doc()->currentStep(), doc()->stripSteps()[2]);
}

void TestDiffusionPage::clickAndDragSetTheQuery() {
    doc()->setCurrentStep(30);
    PatchImageView* view = m_page->overlayView();
    QCOMPARE(view->grid().cols(), 28);
    QTest::mouseClick(view, Qt::LeftButton, {}, pixelPos(view, 11, 17));
    QCOMPARE(doc()->query(), PixelRegion::pixel(11, 17));
    QVERIFY(m_page->findChild<QLabel*>("queryLabel")->text().contains("(11, 17)"));
    // the map is row (11/2)·14 + 17/2 of the layer's 14×14 attention, heads averaged
    const UNetAttentionMap& layer = doc()->attention(30)->layers[0];
    QCOMPARE(layer.info.height, 14);
    const RowMatrix map = doc()->currentMap();
    const int token = 5 * 14 + 8;
    for (int k = 0; k < 196; k += 13) {
        float mean = 0;
        for (int h = 0; h < layer.info.heads; ++h)
            mean += layer.weights.at({h, token, k}) / layer.info.heads;
        QVERIFY(std::abs(map(k / 14, k % 14) - mean) < 1e-6f);
    }
    // the large view's pixels are the core view renderer's at the image's size
    UNetView v = doc()->view();
    v.minSide = 1;
    const RgbImage expected = renderUNetView(doc()->frame(30).step, &layer, v);
    const QImage shown = view->picture().convertToFormat(QImage::Format_RGB888);
    QCOMPARE(shown.width(), 28);
    const QRgb px = shown.pixel(9, 20);
    QCOMPARE(qRed(px), static_cast<int>(expected.pixel(9, 20).r));
    QCOMPARE(qBlue(px), static_cast<int>(expected.pixel(9, 20).b));
    // a drag selects a region
    QTest::mousePress(view, Qt::LeftButton, {}, pixelPos(view, 4, 6));
    QTest::mouseMove(view, pixelPos(view, 6, 9));
    QTest::mouseMove(view, pixelPos(view, 9, 12));
    QTest::mouseRelease(view, Qt::LeftButton, {}, pixelPos(view, 9, 12));
    QCOMPARE(doc()->query(), (PixelRegion{4, 6, 9, 12}));
    QCOMPARE(doc()->currentMap(), unetRegionMap(layer, {4, 6, 9, 12}, 28, 28, {}));
}

void TestDiffusionPage::keySideAndHeadsReadTheTensor() {
    doc()->setCurrentStep(20);
    doc()->setQuery(PixelRegion::pixel(14, 14));
    doc()->setLayer(2); // the bottleneck, 7×7
    const UNetAttentionMap& layer = doc()->attention(20)->layers[2];
    QCOMPARE(QString::fromStdString(layer.info.name), QStringLiteral("mid_block.attentions.0"));
    const int token = 3 * 7 + 3;
    auto* head = m_page->findChild<QComboBox*>("head");
    QCOMPARE(head->count(), 2 + layer.info.heads);
    head->setCurrentIndex(3); // head 1
    QCOMPARE(doc()->head(), 1);
    RowMatrix map = doc()->currentMap();
    for (int k = 0; k < 49; ++k)
        QCOMPARE(map(k / 7, k % 7), layer.weights.at({1, token, k}));
    m_page->findChild<QAbstractButton*>("keySide")->click();
    QVERIFY(doc()->keySide());
    map = doc()->currentMap();
    for (int q = 0; q < 49; ++q)
        QCOMPARE(map(q / 7, q % 7), layer.weights.at({1, q, token}));
    head->setCurrentIndex(1); // max of heads
    QCOMPARE(doc()->fusion(), HeadFusion::Max);
    map = doc()->currentMap();
    for (int q = 0; q < 49; q += 5) {
        float best = 0;
        for (int h = 0; h < layer.info.heads; ++h)
            best = std::max(best, layer.weights.at({h, q, token}));
        QCOMPARE(map(q / 7, q % 7), best);
    }
}

// The Map box's Value-weighted switch (issue 42): the map is each head's row times its keys' ‖v·W_O‖,
// renormalised; the query label says so; sessions keep it.
void TestDiffusionPage::valueWeightedMapsReadTheNorms() {
    doc()->setCurrentStep(20);
    doc()->setQuery(PixelRegion::pixel(14, 14));
    doc()->setLayer(2); // the bottleneck, 7×7
    doc()->setHead(1);
    const UNetAttentionMap& layer = doc()->attention(20)->layers[2];
    const int token = 3 * 7 + 3;
    const RowMatrix plain = doc()->currentMap();
    auto* box = m_page->findChild<QCheckBox*>("valueWeighted");
    QVERIFY(box);
    box->click();
    QVERIFY(doc()->valueWeighted());
    const RowMatrix map = doc()->currentMap();
    double total = 0;
    for (int k = 0; k < 49; ++k)
        total += double(layer.weights.at({1, token, k})) * layer.valueNorms.at({1, k});
    for (int k = 0; k < 49; ++k)
        QVERIFY(std::abs(map(k / 7, k % 7) -
                         layer.weights.at({1, token, k}) * layer.valueNorms.at({1, k}) / total) < 1e-6);
    QVERIFY((map - plain).cwiseAbs().maxCoeff() > 1e-4f);
    bool titled = false;
    for (auto* label : m_page->findChildren<QLabel*>())
        titled = titled || (label->isVisible() && label->text().contains("head 1 · value-weighted"));
    QVERIFY(titled);
    QCOMPARE(m_page->saveSession().value("value_weighted").toBool(), true);
    const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR");
    if (!dir.isEmpty()) m_page->grab().save(QString::fromLocal8Bit(dir) + "/diffusion-value-weighted.png");
    box->click();
    QCOMPARE(doc()->currentMap(), plain);
}

void TestDiffusionPage::uViewHasOneTilePerLayerAndSelects() {
    UShapeView* u = m_page->uView();
    QCOMPARE(u->count(), 7);
    for (int i = 0; i < 7; ++i)
        QVERIFY(!u->tile(i).isNull());
    // contracting down, bottleneck at the bottom, expansive back up
    QCOMPARE(u->rowOf(0), 0); // down_blocks.1 at 14×14
    QCOMPARE(u->rowOf(1), 1); // down_blocks.2 at 7×7
    QCOMPARE(u->rowOf(2), 2); // mid
    QCOMPARE(u->rows(), 3);
    QCOMPARE(u->rowOf(6), 0); // up_blocks.1 at 14×14
    QVERIFY(u->tileRect(2).top() > u->tileRect(1).top());
    QVERIFY(u->tileRect(6).left() > u->tileRect(2).left());
    QTest::mouseClick(u, Qt::LeftButton, {}, u->tileRect(5).center());
    QCOMPARE(doc()->layer(), 5);
    QCOMPARE(m_page->findChild<QComboBox*>("layer")->currentIndex(), 5);
    QCOMPARE(u->selected(), 5);
    m_page->findChild<QComboBox*>("layer")->setCurrentIndex(1);
    QCOMPARE(u->selected(), 1);
}

// Without attention captured while generating (a model too big for it), dragging the timeline over every
// step keeps at most one attention job in flight and one follow-up, instead of a job per step passed
// (which on a big model left the map seconds behind the slider); the step shown last gets its maps.
void TestDiffusionPage::scrubbingComputesOneStepAtATime() {
    m_page->setCaptureLimit(0);
    generateAndWait(3, 7, 30);
    m_page->setCaptureLimit(int64_t{64} << 20);
    QVERIFY(doc()->missingAttention({5}).size() == 1); // not captured
    const int last = 27; // not one of the strip's steps (0, 3, 6, 10, 13, 16, 19, 23, 26, 29)
    QVERIFY(doc()->missingAttention({last}).size() == 1);
    int most = 0;
    for (int s = 0; s <= last; ++s) {
        doc()->setCurrentStep(s);
        most = std::max(most, m_page->worker()->pendingJobs());
    }
    QVERIFY2(most <= 1, qPrintable(QString("%1 jobs queued while scrubbing").arg(most)));
    WAIT_UNTIL(doc()->missingAttention({last}).empty()); // the follow-up
    WAIT_UNTIL(!m_page->isBusy());
    QCOMPARE(doc()->missingAttention({5, 17}).size(), size_t(2)); // steps only passed over: never computed
}

void TestDiffusionPage::cancelKeepsTheStepsMade() {
    m_page->setSettings({SchedulerKind::Ddpm, 1000, 4, 3});
    QSignalSpy finished(m_page.get(), &DiffusionPage::runFinished);
    m_page->generate();
    WAIT_UNTIL(doc()->completedSteps() >= 20);
    QTest::mouseClick(m_page->findChild<QAbstractButton*>("cancel"), Qt::LeftButton);
    WAIT_UNTIL(finished.count() > 0);
    WAIT_UNTIL(!m_page->isBusy());
    const int made = doc()->completedSteps();
    QVERIFY2(made >= 20 && made < 1000, qPrintable(QString::number(made)));
    QVERIFY(!doc()->running());
    QCOMPARE(doc()->stepCount(), made);
    QCOMPARE(m_page->findChild<QSlider*>("timeline")->maximum(), made - 1);
    QVERIFY(m_page->message().contains("Stopped"));
    // the steps made are still there to look at
    doc()->setCurrentStep(made / 2);
    WAIT_UNTIL(doc()->currentMap().size() > 0);
    // Generate while a run is going replaces it; the new run completes
    m_page->setSettings({SchedulerKind::Ddpm, 1000, 4, 5});
    m_page->generate();
    WAIT_UNTIL(doc()->completedSteps() >= 5);
    QVERIFY(doc()->running());
    generateAndWait(0, 1, 50); // also the usual run for the tests after this one
    QCOMPARE(doc()->completedSteps(), 50);
    QCOMPARE(doc()->stepCount(), 50);
    QCOMPARE(doc()->settings().steps, 50);
    QVERIFY(!doc()->finalImage().empty());
    QVERIFY2(m_page->message().isEmpty(), qPrintable(m_page->message()));
}

void TestDiffusionPage::exportsMatchTheCli() {
    generateAndWait(8, 4, 50);
    doc()->setCurrentStep(35);
    doc()->setLayer(5);
    doc()->setQuery({12, 3, 15, 8});
    doc()->setOnNoisy(true);
    doc()->setHead(0);
    QTemporaryDir tmp;
    // the view: the same pixels as `diffuse --overlay` with the same settings
    const QString view = tmp.filePath("view.png"), cli = tmp.filePath("cli.png");
    QVERIFY(m_page->exportView(view));
    const auto r =
        clitest::run({"diffuse", "--scheduler", "ddim",      "--steps", "50",     "--class", "8",
                      "--seed",  "4",           "--overlay", cli,       "--step", "35",      "--layer",
                      "5",       "--query",     "12,3:15,8", "--on",    "xt",     "--head",  "0"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const ImageU8 a = loadImage(view.toStdString()), b = loadImage(cli.toStdString());
    QCOMPARE(a.width, 280); // 28 px × 10, the smallest integer factor reaching 256
    QCOMPARE(a.pixels, b.pixels);

    // the map as NPY and CSV: the layer's [14, 14] grid
    const QString npy = tmp.filePath("map.npy"), csv = tmp.filePath("map.csv");
    QVERIFY(m_page->exportMap(npy));
    QVERIFY(m_page->exportMap(csv));
    const Tensor t = readNpy(npy.toStdString());
    QCOMPARE(t.shape(), (Shape{14, 14}));
    const RowMatrix map = doc()->currentMap();
    QCOMPARE(t.at({3, 4}), map(3, 4));
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QStringList csvLines = QString::fromUtf8(csvFile.readAll()).trimmed().split('\n');
    QCOMPARE(csvLines.size(), 15); // header + 14 rows
    QVERIFY(csvLines[0].startsWith(QStringLiteral("row\\col,0,1,")));

    // the U view and the strip as PNG
    const QString u = tmp.filePath("u.png"), strip = tmp.filePath("strip.png");
    QVERIFY(m_page->exportUView(u));
    QVERIFY(m_page->exportStrip(strip));
    QVERIFY(QImage(u).width() > 7 * 112);
    QVERIFY(QImage(strip).width() > 10 * 112);

    // the trajectory: a GIF of 50 frames (step 35's frame is the exported view), and a PNG sequence
    const QString gif = tmp.filePath("t.gif"), seq = tmp.filePath("frames");
    QSignalSpy exported(m_page.get(), &DiffusionPage::exported);
    m_page->exportTrajectory(gif);
    WAIT_UNTIL(exported.count() > 0);
    const giftest::Gif g = giftest::read(gif.toStdString());
    QVERIFY2(g.error.isEmpty(), qPrintable(g.error));
    QCOMPARE(static_cast<int>(g.frames.size()), 50);
    QCOMPARE(g.width, 280);
    QVERIFY(g.loops);
    m_page->exportTrajectory(seq);
    WAIT_UNTIL(exported.count() > 1);
    QCOMPARE(QDir(seq).entryList({"step_*.png"}).size(), 50);
    QCOMPARE(loadImage((seq + "/step_035.png").toStdString()).pixels, a.pixels);
    // an unwritable path: one clear message
    QVERIFY(!m_page->exportView("/nonexistent-dir/v.png"));
    QVERIFY(m_page->message().contains("/nonexistent-dir/v.png"));
}

// The lenses on a step: head statistics equal core's for that step's attention (and follow the step); a head
// switched off re-predicts the step (ε̂'s change equals a direct ablated forward) with x̂0 before / after; the
// importance ranking is core's; the neuron view's weight equals the captured attention of the query pixel.
void TestDiffusionPage::headLensesOfAStep() {
    doc()->setCurrentStep(20);
    WAIT_UNTIL(doc()->attention(20) != nullptr);
    m_page->findChild<QPushButton*>("headStatsButton")->click();
    HeadsLensView* lens = m_page->headsLens();
    WAIT_UNTIL(lens->hasStats());
    const HeadStats expected =
        captureHeadStats(unetCapture(doc()->attention(20)->layers, doc()->imageHeight(), doc()->imageWidth()),
                         AttentionKind::EncoderSelf);
    QCOMPARE(lens->stats().entropy, expected.entropy);
    QCOMPARE(lens->grid()->rows(), 7);
    QVERIFY(lens->caption().contains("step 20 /"));
    doc()->setCurrentStep(30);
    WAIT_UNTIL(doc()->attention(30) != nullptr && lens->hasStats() && lens->caption().contains("step 30 /"));

    // Switch head 1 of layer 3 (the bottleneck) off for this step.
    const int row = lens->tableRow(3, 1);
    QVERIFY(row >= 0);
    lens->table()->item(row, 0)->setCheckState(Qt::Checked);
    WAIT_UNTIL(m_page->ablationResult().step == 30 && !m_page->isBusy());
    const auto& r = m_page->ablationResult();
    const DiffusionFrame& f = doc()->frame(30);
    UNetRunOptions off;
    off.captureAttention = false;
    off.offHeads = {{3, 1}};
    const Tensor eps =
        doc()
            ->model()
            ->unet->forward(f.step.sample, float(f.step.timestep), doc()->settings().classLabel, off)
            .noisePred;
    const double expectedChange =
        (eps.matrix() - f.step.noisePred.matrix()).norm() / f.step.noisePred.matrix().norm();
    QVERIFY(std::abs(r.relativeChange - expectedChange) < 1e-6);
    QVERIFY(r.relativeChange > 0);
    QCOMPARE(r.ablated.width, doc()->imageWidth());
    QVERIFY(m_page->findChild<QLabel*>("ablationText")->text().contains("1 head switched off"));
    // Rank by importance: core's numbers for this step.
    m_page->findChild<QDialog*>("headsDialog")->findChild<QPushButton*>("headsRank")->click();
    WAIT_UNTIL(lens->hasImportance() && !m_page->isBusy());
    const RowMatrix imp = unetHeadImportance(*doc()->model()->unet, f.step.sample, float(f.step.timestep),
                                             doc()->settings().classLabel);
    QVERIFY(std::abs(lens->grid()->scene().values(3, 1) - imp(3, 1)) < 1e-6);
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        m_page->findChild<QDialog*>("headsDialog")
            ->grab()
            .save(QString::fromLocal8Bit(dir) + "/diffusion-heads.png");
    m_page->findChild<QDialog*>("headsDialog")->findChild<QPushButton*>("headsAllOn")->click();
    WAIT_UNTIL(m_page->ablatedHeads().empty());
    m_page->findChild<QDialog*>("headsDialog")->close();

    // The neuron view of the query pixel in layer 3.
    doc()->setLayer(3);
    doc()->setHead(0);
    doc()->setQuery(PixelRegion::pixel(14, 10));
    m_page->findChild<QPushButton*>("neuronButton")->click();
    NeuronDialog* neuron = m_page->neuronDialog();
    WAIT_UNTIL(neuron->terms().has_value());
    const auto& layer = doc()->attention(30)->layers[3];
    QCOMPARE(neuron->query(), unetRegionTokens(layer.info, PixelRegion::pixel(14, 10), doc()->imageHeight(),
                                               doc()->imageWidth())
                                  .front());
    QVERIFY(std::abs(neuron->terms()->weight - layer.weights.at({0, neuron->query(), neuron->key()})) < 1e-5);
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        neuron->grab().save(QString::fromLocal8Bit(dir) + "/diffusion-neuron.png");
    neuron->close();
}

// Pin a layer's map at step 30 as A, go to the last step: the window shows A, B and A − B; a layer of another
// size cannot be compared and says so; Unpin closes.
void TestDiffusionPage::differenceOfTwoSteps() {
    doc()->setCurrentStep(30);
    doc()->setLayer(3);
    doc()->setQuery(PixelRegion::pixel(14, 10));
    WAIT_UNTIL(doc()->currentMap().size() > 0);
    const RowMatrix a = doc()->currentMap();
    m_page->findChild<QPushButton*>("pinMap")->click();
    MapDifferenceWindow* window = m_page->differenceWindow();
    QVERIFY(window && window->hasPin() && window->isVisible());
    doc()->setCurrentStep(49);
    WAIT_UNTIL(doc()->currentMap().size() > 0 && window->view()->hasDifference());
    const RowMatrix b = doc()->currentMap();
    QCOMPARE(window->view()->viewDelta()->scene().values, RowMatrix(a - b));
    QVERIFY(a != b);
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        window->grab().save(QString::fromLocal8Bit(dir) + "/diffusion-difference.png");
    doc()->setLayer(0); // 14×14 against the pinned 7×7
    WAIT_UNTIL(!window->view()->hasDifference() && window->view()->summary().contains("cannot be compared"));
    window->findChild<QPushButton*>("unpinMap")->click();
    QVERIFY(!window->hasPin() && !window->isVisible());
}

void TestDiffusionPage::badFolderKeepsTheModel() {
    const auto before = doc()->model();
    const int steps = doc()->completedSteps();
    QTemporaryDir tmp;
    // a pipeline folder whose U-Net weights are cut short
    const QString broken = tmp.filePath("broken");
    QVERIFY(QDir().mkpath(broken + "/unet"));
    QVERIFY(QDir().mkpath(broken + "/scheduler"));
    for (const char* f : {"model_index.json", "unet/config.json", "scheduler/scheduler_config.json"})
        QVERIFY(QFile::copy(unetFixture("cond-pipeline/") + f, broken + "/" + f));
    QFile weights(unetFixture("cond-pipeline/unet/diffusion_pytorch_model.safetensors"));
    QVERIFY(weights.open(QIODevice::ReadOnly));
    QFile cut(broken + "/unet/diffusion_pytorch_model.safetensors");
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(weights.read(weights.size() / 2));
    cut.close();
    for (const QString& dir : {broken, tmp.filePath("missing")}) {
        QSignalSpy error(m_page.get(), &DiffusionPage::failed);
        m_page->openModel(dir);
        WAIT_UNTIL(error.count() > 0);
        WAIT_UNTIL(!m_page->isBusy());
        QVERIFY2(m_page->message().contains(QFileInfo(dir).fileName()) ||
                     m_page->message().contains("safetensors"),
                 qPrintable(m_page->message()));
        QCOMPARE(doc()->model(), before);
        QCOMPARE(doc()->completedSteps(), steps);
    }
    { // a Stable Diffusion U-Net: loads, but this page cannot run it — said, nothing lost
        QSignalSpy error(m_page.get(), &DiffusionPage::failed);
        m_page->openModel(QStringLiteral(ATTNLENS_TEST_DATA) + "/t2i/tiny-pipe/unet");
        WAIT_UNTIL(error.count() > 0);
        WAIT_UNTIL(!m_page->isBusy());
        QVERIFY2(m_page->message().contains("text-conditioned"), qPrintable(m_page->message()));
        QCOMPARE(doc()->model(), before);
        QCOMPARE(doc()->completedSteps(), steps);
    }
    // the steps offered end at the timesteps the model was trained with
    QCOMPARE(m_page->findChild<QSpinBox*>("steps")->maximum(), 1000);
}

void TestDiffusionPage::mainWindowSendsDiffusersFoldersHere() {
    MainWindow window;
    auto* page = new DiffusionPage;
    window.addPage(QStringLiteral("Other"), new QWidget);
    const int index = window.addPage(QStringLiteral("Diffusion"), page);
    WAIT_UNTIL(page->document()->model() != nullptr && !page->isBusy());
    const auto builtin = page->document()->model();
    // File → Open model… on a pipeline folder: this page, the folder loaded
    QSignalSpy loaded(page, &DiffusionPage::modelLoaded);
    QVERIFY(window.openModel(unetFixture("cond-pipeline")));
    QCOMPARE(window.currentPage(), index);
    WAIT_UNTIL(loaded.count() > 0);
    QCOMPARE(page->document()->classCount(), 3);
    // an unsupported diffusers pipeline (latent, with a VAE) reaches the page, which refuses it clearly
    QTemporaryDir tmp;
    QVERIFY(QDir().mkpath(tmp.filePath("latent/unet")));
    QFile index_(tmp.filePath("latent/model_index.json"));
    QVERIFY(index_.open(QIODevice::WriteOnly));
    index_.write(
        R"({"_class_name": "LDMPipeline", "_diffusers_version": "0.25.0", "vqvae": ["diffusers", "VQModel"],
                    "unet": ["diffusers", "UNet2DModel"], "scheduler": ["diffusers", "DDIMScheduler"]})");
    index_.close();
    const auto loadedModel = page->document()->model();
    QSignalSpy error(page, &DiffusionPage::failed);
    QVERIFY(window.openModel(tmp.filePath("latent")));
    WAIT_UNTIL(error.count() > 0);
    QVERIFY2(page->message().contains("vqvae") && page->message().contains("not supported"),
             qPrintable(page->message()));
    QCOMPARE(page->document()->model(), loadedModel);
    QVERIFY(loadedModel != builtin);
}

void TestDiffusionPage::pipelineFolderOpensAndGenerates() {
    QSignalSpy loaded(m_page.get(), &DiffusionPage::modelLoaded);
    QSignalSpy finished(m_page.get(), &DiffusionPage::runFinished);
    m_page->setSettings({SchedulerKind::Ddim, 20, 0, 1});
    m_page->openModel(unetFixture("cond-pipeline"));
    WAIT_UNTIL(loaded.count() > 0);
    // Its scheduler_config.json names DDPMScheduler: the page takes it (it kept DDIM, issue 38).
    QCOMPARE(m_page->settingsFromControls().scheduler, SchedulerKind::Ddpm);
    QCOMPARE(m_page->settingsFromControls().steps, 20);
    QCOMPARE(doc()->classCount(), 3);
    QCOMPARE(m_page->findChild<QComboBox*>("class")->itemText(2), QStringLiteral("2 · cross"));
    QCOMPARE(doc()->imageWidth(), 8);
    WAIT_UNTIL(finished.count() > 0); // a visible page generates with the new model
    WAIT_UNTIL(!m_page->isBusy());
    QCOMPARE(doc()->frame(0).clean.width, 8);
    QCOMPARE(m_page->uView()->count(), static_cast<int>(doc()->layers().size()));
    QVERIFY(doc()->currentMap().size() > 0);
    QVERIFY(m_page->modelDescription().contains("cond-pipeline"));
    // Nothing on the page grew the window (the colour bar follows the picture without resizing itself).
    QCOMPARE(m_page->size(), QSize(1400, 900));
}

QTEST_MAIN(TestDiffusionPage)
#include "test_diffusion_page.moc"
