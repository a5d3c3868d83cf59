// The Vision page on the modern encoders' fixtures (issue 43), offscreen: a CLIPModel folder shows the Texts
// box; typed texts are scored on the worker (the predictions list shows them by probability, equal to core's
// clipScores) and the first text's similarity map is shown — the map equals core's runClipTexts, the measure
// switches it to the relevance, rollout switches it off; the texts survive a session and a new picture.
// DINOv2 with registers on a folder without the centre crop: a non-square grid, the registers beside CLS
// (labels; a register as the query, its row and with Key side its column), the token-norm map. SigLIP: no
// CLS, the summary query is the pooling probe (its maps per head, the layers strip empty, Key side and flow
// off, rollout from the probe), a patch's row on a grid without prefix tokens, sigmoid text scores.

#include "core/analysis/clip_texts.h"
#include "support/waits.h"
#include "ui/vision/clip_text_box.h"
#include "ui/vision/predictions_view.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "ui/vision/vision_session.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonObject>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <memory>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

std::filesystem::path dataDir() {
    return std::filesystem::path(ATTNLENS_TEST_DATA);
}

QString photo() {
    return QString::fromStdString((dataDir() / "clip" / "images" / "photo_97x61.png").string());
}

} // namespace

class TestVisionEncoders : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase() { m_page.reset(); }

    void clipShowsTheTextsBox();
    void typedTextsAreScoredAndMapped();
    void measureAndRolloutSwitchTheMap();
    void textsSurviveSessionsAndPictures();
    void registersAndNonSquareGrid();  // switches the page to another model
    void siglipProbeAndSigmoidTexts(); // and again

private:
    void openAndWait(const QString& path);
    void enterTexts(const QString& line);
    VisionDocument* doc() const { return m_page->document(); }
    std::unique_ptr<VisionPage> m_page;
};

void TestVisionEncoders::initTestCase() {
    m_page =
        std::make_unique<VisionPage>(nullptr, QString::fromStdString((dataDir() / "clip" / "clip").string()));
    m_page->setStartImage(photo());
    m_page->resize(1280, 860);
    m_page->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_page.get()));
    WAIT_UNTIL(doc()->hasImage() && !m_page->isBusy());
    QVERIFY2(m_page->message().isEmpty(), qPrintable(m_page->message()));
}

void TestVisionEncoders::openAndWait(const QString& path) {
    QSignalSpy shown(m_page.get(), &VisionPage::resultReady);
    m_page->openImage(path);
    WAIT_UNTIL(shown.count() > 0);
    WAIT_UNTIL(!m_page->isBusy());
}

void TestVisionEncoders::enterTexts(const QString& line) {
    auto* edit = m_page->findChild<QLineEdit*>(QStringLiteral("clipTexts"));
    QVERIFY(edit);
    edit->setText(line);
    QTest::keyClick(edit, Qt::Key_Return);
    WAIT_UNTIL(!m_page->isBusy());
}

void TestVisionEncoders::clipShowsTheTextsBox() {
    QVERIFY(doc()->textSide() != nullptr);
    auto* box = m_page->findChild<ClipTextBox*>();
    QVERIFY(box && box->isVisible());
    QVERIFY(m_page->modelDescription().contains(QStringLiteral("CLIP text tower")));
    QVERIFY(doc()->image()->top.empty()); // no classes until texts are typed
    QCOMPARE(doc()->gridRows(), 4);
}

void TestVisionEncoders::typedTextsAreScoredAndMapped() {
    enterTexts(QStringLiteral("a photo of a cat | | a red chair |the lighthouse at night"));
    WAIT_UNTIL_COMPARE(doc()->image()->texts.size(), size_t(3));
    QCOMPARE(doc()->texts(),
             (std::vector<std::string>{"a photo of a cat", "a red chair", "the lighthouse at night"}));
    const auto& img = *doc()->image();
    const std::vector<ClipTextRun> want =
        runClipTexts(*doc()->textSide(), img.result.output, img.result.grid, doc()->texts());
    // The predictions list: the texts by probability, as core scores them.
    const auto& shown = m_page->predictionsView()->predictions();
    QCOMPARE(shown.size(), size_t(3));
    QVERIFY(shown[0].probability >= shown[1].probability && shown[1].probability >= shown[2].probability);
    for (const Prediction& p : shown)
        QCOMPARE(p.probability, want[size_t(p.index)].probability);
    // The first text's similarity map is on screen.
    QCOMPARE(doc()->textMap(), 0);
    QVERIFY(!doc()->textRelevance());
    QVERIFY(doc()->currentMap().isApprox(want[0].similarity, 1e-6f));
    QVERIFY(
        doc()->mapDescription().startsWith(QStringLiteral("cosine similarity of each patch with “a photo")));
    auto* combo = m_page->findChild<QComboBox*>(QStringLiteral("textMap"));
    QCOMPARE(combo->count(), 4); // "Attention maps" and the three texts
    combo->setCurrentIndex(2);
    QCOMPARE(doc()->textMap(), 1);
    QVERIFY(doc()->currentMap().isApprox(want[1].similarity, 1e-6f));
    QVERIFY(doc()->headMaps().empty() && doc()->layerMaps().empty()); // a text's map has no heads or layers
}

void TestVisionEncoders::measureAndRolloutSwitchTheMap() {
    auto* measure = m_page->findChild<QComboBox*>(QStringLiteral("textMeasure"));
    QVERIFY(measure->isEnabled());
    measure->setCurrentIndex(1);
    QVERIFY(doc()->textRelevance());
    const ClipTextRun& run = doc()->image()->texts[size_t(doc()->textMap())];
    QVERIFY(doc()->currentMap().isApprox(run.relevance, 1e-6f));
    QCOMPARE(doc()->currentMap().maxCoeff(), 1.0f);
    QVERIFY(doc()->mapDescription().startsWith(QStringLiteral("“a red chair” → patches · relevance")));
    measure->setCurrentIndex(0);
    doc()->setRollout(true);
    QVERIFY(!doc()->textMapShown());
    QCOMPARE(m_page->findChild<QComboBox*>(QStringLiteral("textMap"))->currentIndex(), 0);
    QVERIFY(doc()->mapDescription().startsWith(QStringLiteral("rollout")));
    doc()->setRollout(false);
    doc()->setTextMap(2);
    QVERIFY(doc()->textMapShown() && !doc()->rollout());
}

void TestVisionEncoders::textsSurviveSessionsAndPictures() {
    const QJsonObject state = m_page->saveSession();
    QCOMPARE(state.value("clip_texts").toString(),
             QStringLiteral("a photo of a cat | a red chair | the lighthouse at night"));
    QCOMPARE(state.value("text_map").toInt(), 2);
    SessionReader reader(state, QString());
    const VisionSession parsed = VisionSession::parse(state, reader);
    QVERIFY2(reader.ok(), qPrintable(reader.error()));
    QCOMPARE(parsed.texts.size(), size_t(3));
    QCOMPARE(parsed.textMap, 2);
    // Too many texts is one clear problem.
    QJsonObject bad = state;
    QStringList many;
    for (int i = 0; i <= kMaxClipTexts; ++i)
        many << QStringLiteral("t%1").arg(i);
    bad.insert("clip_texts", many.join('|'));
    QVERIFY(m_page->checkSession(bad).contains(QStringLiteral("clip_texts")));
    // A new picture runs the same texts.
    openAndWait(QString::fromStdString((dataDir() / "clip" / "images" / "portrait_45x71.png").string()));
    QCOMPARE(doc()->image()->texts.size(), size_t(3));
    QCOMPARE(doc()->image()->top.size(), size_t(3));
    // A text the tower refuses (past its 32 positions): one message, the picture and its texts kept.
    const auto before = doc()->image();
    enterTexts(QString("cat ").repeated(40));
    WAIT_UNTIL(!m_page->message().isEmpty());
    QVERIFY2(m_page->message().contains(QStringLiteral("at most 32")), qPrintable(m_page->message()));
    QCOMPARE(doc()->image(), before);
}

void TestVisionEncoders::registersAndNonSquareGrid() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = std::filesystem::path(tmp.path().toStdString()) / "dinov2-reg";
    std::filesystem::copy(dataDir() / "dinov2" / "dinov2-reg", dir);
    Json proc = JsonConfig(dir / "preprocessor_config.json").json();
    proc["do_center_crop"] =
        false; // the picture keeps its aspect: 97×61 → 28×18 px, a 4×7 grid of 4-px patches
    std::ofstream(dir / "preprocessor_config.json") << proc.dump();
    QSignalSpy shown(m_page.get(), &VisionPage::resultReady);
    m_page->openModel(QString::fromStdString(dir.string()));
    WAIT_UNTIL(shown.count() > 0 && !m_page->isBusy());
    QVERIFY2(m_page->message().isEmpty() || !m_page->message().contains("rror"),
             qPrintable(m_page->message()));
    QVERIFY(doc()->textSide() == nullptr);
    QVERIFY(!m_page->findChild<ClipTextBox*>()->isVisible());
    QVERIFY(!doc()->textMapShown());
    openAndWait(photo()); // the page re-ran the portrait with the new model; the landscape now
    const auto& grid = doc()->image()->result.grid;
    QCOMPARE(grid.registers(), 4);
    QCOMPARE(grid.rows(), 4);
    QCOMPARE(grid.cols(), 7);
    QCOMPARE(grid.tokenLabel(1), std::string("reg0"));
    QCOMPARE(doc()->image()->result.output.attentions.dim(2), int64_t(5 + grid.count()));
    // CLS's map skips the registers: the patches start at token 5.
    const RowMatrix a =
        layerAttention(doc()->image()->result.output.attentions, doc()->layer(), HeadSelection{});
    QVERIFY(
        doc()->currentMap().isApprox(tokensToGrid(a.row(0).transpose(), grid.rows(), grid.cols(), 5), 1e-6f));
    // A register as the query: its row; with Key side, its column (who reads it).
    auto* regs = m_page->findChild<QComboBox*>(QStringLiteral("registerQuery"));
    QVERIFY(regs && regs->isVisible());
    QCOMPARE(regs->count(), 5);
    QCOMPARE(regs->itemText(2), QStringLiteral("reg1"));
    regs->setCurrentIndex(2);
    emit regs->activated(2);
    QCOMPARE(doc()->query(), VisionDocument::Query::Register);
    QCOMPARE(doc()->queryTokens(), std::vector<int>{2});
    QVERIFY(
        doc()->currentMap().isApprox(tokensToGrid(a.row(2).transpose(), grid.rows(), grid.cols(), 5), 1e-6f));
    QVERIFY(doc()->mapDescription().contains(QStringLiteral("register 1 → patches")));
    doc()->setKeySide(true);
    QVERIFY(doc()->currentMap().isApprox(tokensToGrid(a.col(2), grid.rows(), grid.cols(), 5), 1e-6f));
    QCOMPARE(m_page->saveSession().value("register").toInt(), 1);
    doc()->setKeySide(false);
    doc()->selectCls();
    QCOMPARE(regs->currentIndex(), 0);
    doc()->setTokenNorms(true);
    QCOMPARE(doc()->currentMap().rows(), int64_t(grid.rows()));
    QVERIFY(doc()->mapDescription().contains(QStringLiteral("registers")));
    doc()->setTokenNorms(false);
}

void TestVisionEncoders::siglipProbeAndSigmoidTexts() {
    QSignalSpy shown(m_page.get(), &VisionPage::resultReady);
    m_page->openModel(QString::fromStdString((dataDir() / "siglip" / "siglip").string()));
    WAIT_UNTIL(shown.count() > 0 && !m_page->isBusy());
    QVERIFY(doc()->textSide() && doc()->textSide()->siglip());
    QVERIFY(!doc()->hasCls());
    QCOMPARE(m_page->findChild<QPushButton*>(QStringLiteral("clsButton"))->text(), QStringLiteral("Probe"));
    QCOMPARE(m_page->findChild<ClipTextBox*>()->title(), QStringLiteral("Texts (SigLIP)"));
    const auto& out = doc()->image()->result.output;
    const auto& grid = doc()->image()->result.grid;
    QCOMPARE(grid.prefixTokens(), 0);
    QVERIFY(doc()->probeQuery());
    QVERIFY(doc()->queryTokens().empty());
    // The probe's map per head: its attention over the patches; the mean of them by default.
    const std::vector<RowMatrix> heads = doc()->headMaps();
    QCOMPARE(heads.size(), size_t(4));
    const ConstMatrixMap probe = out.probeAttention.matrix(); // [H, N]
    for (int h = 0; h < 4; ++h)
        QVERIFY(heads[size_t(h)].isApprox(tokensToGrid(probe.row(h).transpose(), grid.rows(), grid.cols(), 0),
                                          1e-6f));
    QVERIFY(doc()->currentMap().isApprox(
        tokensToGrid(probe.colwise().mean().transpose(), grid.rows(), grid.cols(), 0), 1e-6f));
    QVERIFY(
        doc()->mapDescription().startsWith(QStringLiteral("pooling head · mean of heads · pooling probe")));
    QVERIFY(doc()->layerMaps().empty()); // the probe reads only the last layer
    QVERIFY(!m_page->findChild<QCheckBox*>(QStringLiteral("keySide"))->isEnabled());
    QVERIFY(!m_page->findChild<QCheckBox*>(QStringLiteral("flow"))->isEnabled());
    doc()->setFlow(true);
    QVERIFY(!doc()->flow());
    // Rollout from the probe: core's summaryRollout at the last layer.
    doc()->setRollout(true);
    const Tensor roll = summaryRollout(out, grid);
    QVERIFY(doc()->currentMap().isApprox(
        tokensToGrid(ConstVectorMap(roll.data(), roll.numel()), grid.rows(), grid.cols(), 0), 1e-5f));
    QCOMPARE(doc()->layerMaps().size(), size_t(2));
    doc()->setRollout(false);
    // A patch as the query: its row, token = patch index (no CLS before the patches).
    doc()->selectPatches({5});
    QVERIFY(m_page->findChild<QCheckBox*>(QStringLiteral("keySide"))->isEnabled());
    const RowMatrix a = layerAttention(out.attentions, doc()->layer(), HeadSelection{});
    QVERIFY(
        doc()->currentMap().isApprox(tokensToGrid(a.row(5).transpose(), grid.rows(), grid.cols(), 0), 1e-6f));
    doc()->setTokenNorms(true);
    QVERIFY(!doc()->mapDescription().contains(QStringLiteral("CLS")));
    doc()->setTokenNorms(false);
    doc()->selectCls();
    QVERIFY(doc()->probeQuery());
    // Texts: each scored by its own sigmoid (they need not sum to 1).
    enterTexts(QStringLiteral("a red chair | a photo of a cat"));
    WAIT_UNTIL_COMPARE(doc()->image()->texts.size(), size_t(2));
    for (const ClipTextRun& r : doc()->image()->texts)
        QVERIFY(std::abs(r.probability - 1 / (1 + std::exp(-r.logit))) < 1e-6f);
    QCOMPARE(m_page->predictionsView()->predictions().size(), size_t(2));
}

QTEST_MAIN(TestVisionEncoders)
#include "test_vision_encoders.moc"
