// The Text-to-image page on the tiny Stable Diffusion pipeline of the goldens (tests/data/t2i/tiny-pipe),
// offscreen: Generate shows every step as it is made and ends on the image `attnlens-cli t2i` writes; a word
// chip shows that word's map, read from the run by core's t2iWordMap; shift-click compares; the strips and
// the U view; a pixel click gives the words it attends to (a distribution) and its self-attention, computed
// on demand; one head needs every head kept; the unconditional half and cond − uncond; Cancel keeps the
// steps made; every export; a session comes back; a prompt past 77 tokens is said to be truncated; a bad
// folder keeps the model.

#include "core/diffusion/t2i_maps.h"
#include "core/io/npy_reader.h"
#include "core/vision/image_io.h"
#include "support/cli_run.h"
#include "support/waits.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/t2i/t2i_document.h"
#include "ui/t2i/t2i_page.h"
#include "ui/t2i/t2i_word_chips.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/widgets/candidate_bars.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <memory>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

const QString kPipe = QStringLiteral(ATTNLENS_TEST_DATA "/t2i/tiny-pipe");
const QString kPrompt = QStringLiteral("a sneaker above a bag");

QPoint pixelPos(PatchImageView* view, int row, int col) {
    const int cell = view->grid().patch();
    return view->patchRect((row / cell) * view->grid().cols() + col / cell).center().toPoint();
}

bool sameMatrix(const RowMatrix& a, const RowMatrix& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && (a - b).cwiseAbs().maxCoeff() == 0.0f;
}

} // namespace

class TestT2iPage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase() { m_page.reset(); }

    void generateShowsEveryStepAndTheClisImage();
    void wordChipShowsThatWordsMap();
    void stripsAndUView();
    void pixelClickGivesWordsAndSelfAttention();
    void oneHeadNeedsEveryHeadKept();
    void valueWeightedMapsNeedThemKept();
    void halvesOfGuidance();
    void cancelKeepsTheStepsMade();
    void largerImagesShowTheLatentsUntilDecoded();
    void exports();
    void sessionRoundTrip();
    void longPromptIsSaidTruncated();
    void badFolderKeepsTheModel();

private:
    void generate(int steps, bool allHeads = false);
    std::unique_ptr<TextToImagePage> m_page;
    QTemporaryDir m_tmp;
};

void TestT2iPage::initTestCase() {
    QVERIFY(m_tmp.isValid());
    m_page = std::make_unique<TextToImagePage>(nullptr, kPipe);
    m_page->resize(1280, 860);
    WAIT_UNTIL(m_page->document()->pipeline() != nullptr);
    T2iSettings s = m_page->settingsFromControls();
    s.prompt = kPrompt;
    s.steps = 5;
    s.seed = 3;
    m_page->setSettings(s);
    m_page->show(); // the first show generates
    WAIT_UNTIL(m_page->document()->hasRun() && !m_page->document()->running() && !m_page->isBusy());
}

void TestT2iPage::generate(int steps, bool allHeads) {
    T2iSettings s = m_page->settingsFromControls();
    s.steps = steps;
    s.allHeads = allHeads;
    m_page->setSettings(s);
    m_page->findChild<QPushButton*>("generate")->click();
    WAIT_UNTIL(!m_page->document()->running() && !m_page->isBusy());
}

void TestT2iPage::generateShowsEveryStepAndTheClisImage() {
    generate(5);
    T2iDocument* doc = m_page->document();
    QCOMPARE(doc->completedSteps(), 6); // PLMS: 5 steps are 6 U-Net calls
    QVERIFY(doc->hasImage());
    QVERIFY(doc->stepDecoded(0)); // a cheap VAE: every step decoded as it comes
    QVERIFY(!m_page->view()->picture().isNull());
    const QString png = m_tmp.filePath("cli.png");
    const auto r = clitest::run(
        {"t2i", "--model", kPipe, "--prompt", kPrompt, "--steps", "5", "--seed", "3", "--out", png});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const ImageU8 cli = loadImage(png.toStdString());
    const ImageU8 ours = t2iImageU8(doc->run().image);
    QCOMPARE(cli.width, ours.width);
    QVERIFY(cli.pixels == ours.pixels);
}

void TestT2iPage::wordChipShowsThatWordsMap() {
    T2iDocument* doc = m_page->document();
    const auto& words = doc->words();
    QCOMPARE(QString::fromStdString(words[2].text), QStringLiteral("sneaker"));
    QToolButton* chip = m_page->chips()->chip(5); // "bag"
    QVERIFY(chip);
    QCOMPARE(chip->text(), QStringLiteral("bag"));
    const QImage before = m_page->view()->picture();
    QTest::mouseClick(chip, Qt::LeftButton);
    QCOMPARE(doc->word(), 5);
    QVERIFY(m_page->view()->picture() != before);
    T2iMapQuery q;
    q.tokens = words[5].tokens;
    QVERIFY(sameMatrix(doc->wordMap(5), t2iWordMap(doc->run(), q, 16, 16)));
    QTest::mouseClick(m_page->chips()->chip(2), Qt::LeftButton, Qt::ShiftModifier);
    QCOMPARE(doc->compared(), std::set<int>{2});
    QVERIFY(m_page->compareView()->isVisible());
    QCOMPARE(m_page->compareView()->count(), 2);
    QTest::mouseClick(m_page->chips()->chip(2), Qt::LeftButton);
    QCOMPARE(doc->word(), 2);
    QVERIFY(doc->compared().empty());
    QVERIFY(!m_page->compareView()->isVisible());
}

void TestT2iPage::stripsAndUView() {
    T2iDocument* doc = m_page->document();
    auto* tabs = m_page->findChild<QTabWidget*>("tabs");
    tabs->setCurrentWidget(m_page->wordStrip());
    QCOMPARE(m_page->wordStrip()->count(), 5); // a sneaker above a bag
    m_page->findChild<QCheckBox*>("showSpecial")->setChecked(true);
    QCOMPARE(m_page->wordStrip()->count(), 8); // + <start>, <end>, padding
    m_page->findChild<QCheckBox*>("showSpecial")->setChecked(false);
    tabs->setCurrentWidget(m_page->stepStrip());
    QCOMPARE(m_page->stepStrip()->count(), doc->completedSteps());
    QTest::mouseClick(m_page->stepStrip(), Qt::LeftButton, {}, m_page->stepStrip()->tileRect(2).center());
    QVERIFY(!doc->allSteps());
    QCOMPARE(doc->shownStep(), 2);
    T2iMapQuery q;
    q.tokens = doc->words()[size_t(doc->word())].tokens;
    q.step = 2;
    QVERIFY(sameMatrix(doc->wordMap(doc->word()), t2iWordMap(doc->run(), q, 16, 16)));
    tabs->setCurrentWidget(m_page->uView());
    QCOMPARE(m_page->uView()->count(), static_cast<int>(doc->crossLayers().size()));
    QTest::mouseClick(m_page->uView(), Qt::LeftButton, {}, m_page->uView()->tileRect(1).center());
    QCOMPARE(doc->layer(), 1);
    m_page->findChild<QCheckBox*>("allSteps")->setChecked(true);
    doc->setLayer(-1);
}

void TestT2iPage::pixelClickGivesWordsAndSelfAttention() {
    T2iDocument* doc = m_page->document();
    QSignalSpy computed(m_page.get(), &TextToImagePage::selfComputed);
    QTest::mouseClick(m_page->view(), Qt::LeftButton, {}, pixelPos(m_page->view(), 12, 4));
    QVERIFY(doc->pixel().has_value());
    const auto [row, col] = *doc->pixel();
    QCOMPARE(row / m_page->view()->grid().patch(), 12 / m_page->view()->grid().patch());
    float sum = 0;
    for (float v : doc->pixelWords())
        sum += v;
    QVERIFY(std::abs(sum - 1.0f) < 1e-4f); // every word incl. <start>, <end>, padding: a distribution
    QVERIFY(!m_page->pixelBars()->candidates().empty());
    WAIT_UNTIL(computed.count() >= 1 && doc->selfAttention() != nullptr);
    const UNetAttentionMap* self = doc->selfAttention();
    QVERIFY(!self->info.cross);
    QCOMPARE(self->weights.dim(1), self->weights.dim(2));
    QVERIFY(!m_page->selfView()->picture().isNull());
    // Replayed on demand: the same call as the run's cond half, so its rows are distributions.
    const int64_t keys = self->weights.dim(2);
    float rowSum = 0;
    for (int64_t k = 0; k < keys; ++k)
        rowSum += self->weights.data()[k];
    QVERIFY(std::abs(rowSum - 1.0f) < 1e-4f);
}

void TestT2iPage::oneHeadNeedsEveryHeadKept() {
    T2iDocument* doc = m_page->document();
    QVERIFY(!doc->allHeads());
    QSignalSpy failed(m_page.get(), &WorkspacePage::failed);
    doc->setHeads({0, HeadFusion::Mean});
    QVERIFY(failed.count() >= 1);
    QVERIFY(m_page->message().contains("every head kept"));
    generate(3, true);
    QVERIFY(doc->allHeads());
    doc->setHeads({1, HeadFusion::Mean});
    T2iMapQuery q = doc->query(doc->word());
    QCOMPARE(q.heads.head, 1);
    QVERIFY(sameMatrix(doc->wordMap(doc->word()), t2iWordMap(doc->run(), q, 16, 16)));
    doc->setHeads({});
}

// Issue 42: the Value-weighted switch reads maps the run kept ("Keep value-weighted maps too"); a run without
// them leaves it off; sessions keep both.
void TestT2iPage::valueWeightedMapsNeedThemKept() {
    T2iDocument* doc = m_page->document();
    auto* show = m_page->findChild<QCheckBox*>("valueWeighted");
    auto* keep = m_page->findChild<QCheckBox*>("keepValueWeighted");
    QVERIFY(show && keep);
    generate(3);
    QVERIFY(!doc->hasValueWeighted() && !show->isEnabled());
    keep->setChecked(true);
    generate(3);
    QVERIFY(doc->hasValueWeighted() && show->isEnabled());
    const RowMatrix plain = doc->wordMap(doc->word());
    show->click();
    QVERIFY(doc->valueWeighted());
    const T2iMapQuery q = doc->query(doc->word());
    QVERIFY(q.valueWeighted);
    QVERIFY(sameMatrix(doc->wordMap(doc->word()), t2iWordMap(doc->run(), q, 16, 16)));
    QVERIFY((doc->wordMap(doc->word()) - plain).cwiseAbs().maxCoeff() > 1e-4f);
    const QJsonObject state = m_page->saveSession();
    QVERIFY(state.value("value_weighted").toBool() && state.value("keep_value_weighted").toBool());
    const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR");
    if (!dir.isEmpty()) m_page->grab().save(QString::fromLocal8Bit(dir) + "/t2i-value-weighted.png");
    show->click();
    keep->setChecked(false);
    QVERIFY(sameMatrix(doc->wordMap(doc->word()), plain));
}

void TestT2iPage::halvesOfGuidance() {
    T2iDocument* doc = m_page->document();
    QVERIFY(doc->guided());
    const RowMatrix cond = doc->wordMap(doc->word());
    doc->setHalf(T2iHalf::Uncond);
    const RowMatrix uncond = doc->wordMap(doc->word());
    doc->setHalf(T2iHalf::Difference);
    const RowMatrix diff = doc->wordMap(doc->word());
    QVERIFY(((cond - uncond) - diff).cwiseAbs().maxCoeff() < 1e-5f);
    // a run without guidance has no unconditional half, a run of head means no single head: the choices
    // go back to what the new run can show instead of an error on every map
    generate(3, true);
    doc->setHeads({1, HeadFusion::Mean});
    T2iSettings s = m_page->settingsFromControls();
    s.guidance = 1.0;
    s.allHeads = false;
    m_page->setSettings(s);
    m_page->generate();
    WAIT_UNTIL(!doc->running() && !m_page->isBusy());
    QCOMPARE(doc->half(), T2iHalf::Cond);
    QCOMPARE(doc->heads().head, -1);
    QVERIFY(!doc->guided());
    QVERIFY(!m_page->view()->picture().isNull());
    s.guidance = 7.5;
    m_page->setSettings(s);
    generate(5);
}

void TestT2iPage::cancelKeepsTheStepsMade() {
    T2iDocument* doc = m_page->document();
    T2iSettings s = m_page->settingsFromControls();
    s.steps = 400;
    m_page->setSettings(s);
    QSignalSpy finished(m_page.get(), &TextToImagePage::runFinished);
    m_page->generate();
    WAIT_UNTIL(doc->completedSteps() >= 3);
    m_page->findChild<QAbstractButton*>("cancel")->click();
    WAIT_UNTIL(finished.count() >= 1 && !m_page->isBusy());
    QVERIFY(doc->completedSteps() >= 3);
    QVERIFY(doc->completedSteps() < 401);
    QVERIFY(!doc->running());
    QVERIFY(m_page->message().contains("Stopped"));
    QVERIFY(!m_page->view()->picture().isNull());
    generate(5);
}

void TestT2iPage::largerImagesShowTheLatentsUntilDecoded() {
    T2iDocument* doc = m_page->document();
    T2iSettings s = m_page->settingsFromControls();
    s.steps = 2;
    s.size = 80; // 40×40 latents: decoding each step would cost more than the step
    m_page->generate(s);
    WAIT_UNTIL(!doc->running() && !m_page->isBusy());
    QCOMPARE(doc->imageHeight(), 80);
    QVERIFY(!doc->stepDecoded(0));
    QVERIFY(doc->stepDecoded(doc->completedSteps() - 1)); // the final image
    doc->setShownStep(0);
    QCOMPARE(doc->picture().width, 80); // the latents, enlarged to the image's size
    QVERIFY(m_page->findChild<QLabel*>("stepLabel")->text().contains("latent preview"));
    m_page->findChild<QPushButton*>("decodeStep")->click();
    WAIT_UNTIL(doc->stepDecoded(0) && !m_page->isBusy());
    QCOMPARE(m_page->view()->picture().width(), 80);
    generate(5);
}

void TestT2iPage::exports() {
    T2iDocument* doc = m_page->document();
    const QString image = m_tmp.filePath("i.png"), view = m_tmp.filePath("v.png"),
                  words = m_tmp.filePath("w.png"), steps = m_tmp.filePath("s.png"),
                  maps = m_tmp.filePath("m.npy"), json = m_tmp.filePath("r.json");
    QVERIFY(m_page->exportImage(image));
    QVERIFY(m_page->exportView(view));
    QVERIFY(m_page->exportWordStrip(words));
    QVERIFY(m_page->exportStepStrip(steps));
    QVERIFY(m_page->exportWordMaps(maps));
    QVERIFY(m_page->exportRun(json));
    QVERIFY(loadImage(image.toStdString()).pixels == t2iImageU8(doc->run().image).pixels);
    QCOMPARE(loadImage(view.toStdString()).width, 16);
    QVERIFY(!QImage(words).isNull() && !QImage(steps).isNull());
    const Tensor stacked = readNpy(maps.toStdString());
    QCOMPARE(stacked.shape(), (Shape{5, 16, 16}));
    const RowMatrix bag = doc->wordMap(5);
    QCOMPARE(stacked.data()[4 * 256 + 17], bag(1, 1));
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    QCOMPARE(o.value("per_step").toArray().size(), doc->completedSteps());
    QCOMPARE(o.value("tokens").toArray().size(), 77);
    // the view equals `t2i --overlay` of the same run and word, pixel for pixel (one drawing, t2i_maps.h)
    doc->setWord(5);
    doc->setAllSteps(true);
    doc->setLayer(-1);
    QVERIFY(m_page->exportView(view));
    const QString cli = m_tmp.filePath("cli-overlay.png");
    const auto r = clitest::run({"t2i", "--model", kPipe, "--prompt", kPrompt, "--steps", "5", "--seed", "3",
                                 "--overlay", cli, "--word", "bag"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(loadImage(cli.toStdString()).pixels == loadImage(view.toStdString()).pixels);
    clitest::expectError(
        clitest::run({"t2i", "--model", kPipe, "--prompt", kPrompt, "--overlay", cli, "--word", "cat"}),
        "not a word of the prompt");
}

void TestT2iPage::sessionRoundTrip() {
    T2iDocument* doc = m_page->document();
    doc->setWord(5);
    doc->toggleCompared(2);
    doc->setAllSteps(false);
    doc->setShownStep(3);
    doc->setLayer(2);
    doc->setHalf(T2iHalf::Difference);
    doc->setPixel(std::pair{6, 10});
    const QJsonObject state = m_page->saveSession();
    QVERIFY(m_page->checkSession(state).isEmpty());
    TextToImagePage other(nullptr, kPipe);
    other.resize(1000, 700);
    WAIT_UNTIL(other.document()->pipeline() != nullptr);
    other.restoreSession(state);
    WAIT_UNTIL(!other.restoringSession() && !other.isBusy());
    T2iDocument* back = other.document();
    QCOMPARE(back->runSettings().prompt, doc->runSettings().prompt);
    QCOMPARE(back->word(), 5);
    QCOMPARE(back->compared(), std::set<int>{2});
    QCOMPARE(back->shownStep(), 3);
    QCOMPARE(back->layer(), 2);
    QCOMPARE(back->half(), T2iHalf::Difference);
    QCOMPARE(back->pixel(), doc->pixel());
    QVERIFY(back->run().image.shape() == doc->run().image.shape());
    QVERIFY(sameMatrix(back->wordMap(5), doc->wordMap(5)));
    QJsonObject bad = state;
    bad.insert("half", "sideways");
    QVERIFY(m_page->checkSession(bad).contains("half"));
    // a pixel outside the picture (a session of a larger image) is no pixel, not a crash
    QJsonObject far = state;
    far.insert("pixel", QJsonArray{4000, 4000});
    other.restoreSession(far);
    WAIT_UNTIL(!other.restoringSession() && !other.isBusy());
    QVERIFY(!back->pixel().has_value());
    back->setPixel(std::pair{16, 3});
    QVERIFY(!back->pixel().has_value());
    doc->setHalf(T2iHalf::Cond);
    doc->setAllSteps(true);
    doc->setLayer(-1);
}

void TestT2iPage::longPromptIsSaidTruncated() {
    QString prompt;
    for (int i = 0; i < 40; ++i)
        prompt += QStringLiteral("sneaker bag ");
    m_page->findChild<QLineEdit*>("prompt")->setText(prompt);
    QVERIFY(m_page->findChild<QLabel*>("promptNote")->text().contains("truncated"));
    generate(2);
    QVERIFY(m_page->document()->run().truncated);
    QCOMPARE(m_page->document()->words().back().text, std::string("<end>")); // no padding: 77 used
    m_page->findChild<QLineEdit*>("prompt")->setText(kPrompt);
    QVERIFY(m_page->findChild<QLabel*>("promptNote")->text().contains("of 77"));
}

void TestT2iPage::badFolderKeepsTheModel() {
    const auto before = m_page->document()->pipeline();
    QSignalSpy failed(m_page.get(), &WorkspacePage::failed);
    m_page->openModel(m_tmp.filePath("nothing-here"));
    WAIT_UNTIL(failed.count() >= 1 && !m_page->isBusy());
    QCOMPARE(m_page->document()->pipeline(), before);
    QVERIFY(m_page->document()->hasRun());
}

QTEST_MAIN(TestT2iPage)
#include "test_t2i_page.moc"
