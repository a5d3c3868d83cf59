// The Text page's lenses (issue 37), offscreen on the hub-layout fixtures: the Heads tab's statistics equal
// the engine's over the visible tokens; ticking a head "off" runs the text again without it (its attention
// zero, the generated tokens those of the model with the head off); "Rank by importance" equals core's
// measure; the Difference tab compares a pinned matrix with the one shown; the neuron view's weight is the
// captured one; heads off survive a session.

#include "core/analysis/attention_captures.h"
#include "core/analysis/head_stats.h"
#include "core/analysis/text_lenses.h"
#include "core/models/text_folder.h"
#include "support/text_pages.h"
#include "support/waits.h"
#include "ui/shell/inference_worker.h"
#include "ui/text/text_document.h"
#include "ui/text/text_lenses.h"
#include "ui/text/text_page.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/neuron_dialog.h"

#include <QJsonObject>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>

using namespace attnlens;
using namespace attnlens::ui;

using texttest::idle;

namespace {

const QString kData = texttest::kPageData;

using texttest::visibleIds;
const auto runText = texttest::runAndWait;

} // namespace

class TestTextLensesPage : public QObject {
    Q_OBJECT
private slots:
    void headsTabStatistics_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("GPT-2") << "gpt2";
        QTest::newRow("BERT") << "bert-mlm";
    }
    void headsTabStatistics() {
        QFETCH(QString, model);
        TextPage page(nullptr, kData + "/" + model);
        runText(page, QStringLiteral("the cat sat on the mat"), 3);
        page.views()->setCurrentIndex(3);
        HeadsLensView* lens = page.lenses()->headsLens();
        QVERIFY(lens->hasStats());
        const TextDocument& doc = *page.document();
        const std::vector<int> ids = visibleIds(doc);
        const HeadStats expected =
            captureHeadStats(textCapture(*doc.model(), ids, doc.model()->forward(ids, false).attentions),
                             textAttentionKind(*doc.model()));
        QCOMPARE(lens->stats().layers(), doc.model()->layers());
        for (HeadStatistic s : kAllHeadStatistics)
            for (int l = 0; l < expected.layers(); ++l)
                for (int h = 0; h < expected.heads(); ++h) {
                    const float a = lens->stats().get(s)(l, h), b = expected.get(s)(l, h);
                    QVERIFY2((std::isnan(a) && std::isnan(b)) || std::abs(a - b) < 1e-5,
                             qPrintable(QString("statistic %1, head %2:%3: %4 against %5")
                                            .arg(int(s))
                                            .arg(l)
                                            .arg(h)
                                            .arg(a)
                                            .arg(b)));
                }
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            lens->setStatistic(HeadStatistic::Local);
            page.resize(1280, 800);
            page.grab().save(QString::fromLocal8Bit(dir) + "/text-heads-local-" + model + ".png");
        }
        // A step back: the statistics follow the visible tokens.
        if (doc.model()->decoderOnly()) {
            page.stepBack();
            QCOMPARE(lens->stats().rows, static_cast<int>(ids.size()) - 1);
        }
        // A grid cell opens its head in the matrix.
        emit lens->headActivated(1, 2);
        QCOMPARE(page.views()->currentIndex(), 0);
        QCOMPARE(doc.layer(), 1);
        QCOMPARE(doc.head(), 2);
    }

    void headsOffRunAgain() {
        TextPage page(nullptr, kData + "/gpt2");
        runText(page, QStringLiteral("The cat sat"), 4);
        page.views()->setCurrentIndex(3);
        HeadsLensView* lens = page.lenses()->headsLens();
        const auto before = page.document()->run();
        const int row = lens->tableRow(0, 1);
        QVERIFY(row >= 0);
        lens->table()->item(row, 0)->setCheckState(Qt::Checked);
        WAIT_UNTIL(idle(page) && page.document()->run() != before &&
                   page.document()->run()->generated() == 4);
        const auto& run = *page.document()->run();
        QCOMPARE(run.offHeads, (HeadList{{0, 1}}));
        QCOMPARE(lens->ablated(), run.offHeads);
        // Its statistics read "—" (they showed entropy 0.000, sink 0.000: values of zeros); the others are
        // numbers.
        const QTableWidget* table = lens->table();
        const int offRow = lens->tableRow(0, 1), onRow = lens->tableRow(0, 0);
        QVERIFY(table->columnCount() > 4);
        for (int c = 3; c < table->columnCount(); ++c) {
            const QString header = table->horizontalHeaderItem(c)->text();
            if (header == "importance") continue;
            QCOMPARE(table->item(offRow, c)->text(), QStringLiteral("—"));
            QVERIFY2(table->item(onRow, c)->text() != QStringLiteral("—"), qPrintable(header));
        }
        // The model with the head off, step by step through its cache: the same tokens and attention.
        const TextFolder& folder = *page.document()->model();
        RunControls off;
        off.offHeads = {{0, 1}};
        TextCache cache = folder.gpt2->newCache();
        std::vector<int> ids(run.ids.begin(), run.ids.begin() + run.promptLength);
        TextForward step = folder.gpt2->extend(ids, cache, true, true, off);
        for (int i = 0; i < 4; ++i) {
            Eigen::Index next = 0;
            step.logits.row(0).maxCoeff(&next);
            ids.push_back(static_cast<int>(next));
            step = folder.gpt2->extend(std::vector<int>{ids.back()}, cache, true, true, off);
        }
        QCOMPARE(run.ids, ids);
        const Tensor visible = page.document()->visibleAttention();
        QCOMPARE(visible.sub({0, 1}).matrix().cwiseAbs().maxCoeff(), 0.0f);
        const Tensor full = folder.forward(ids, false, off).attentions;
        QVERIFY((visible.matrix() - full.matrix()).cwiseAbs().maxCoeff() < 1e-5);
        QVERIFY(page.statusText().contains("1 head(s) switched off"));

        // Rank by importance: the generated tokens' log-probability, as core measures it.
        page.findChild<QPushButton*>("headsRank")->click();
        WAIT_UNTIL(idle(page) && lens->hasImportance());
        const std::vector<int> shown = visibleIds(*page.document());
        const RowMatrix drop = textHeadImportance(
            folder, shown, textTargets(folder, shown, page.document()->run()->promptLength), {},
            off.offHeads);
        QVERIFY(lens->showingImportance());
        for (int l = 0; l < drop.rows(); ++l)
            for (int h = 0; h < drop.cols(); ++h)
                QVERIFY(std::abs(lens->grid()->scene().values(l, h) - drop(l, h)) < 1e-4);
        QCOMPARE(drop(0, 1), 0.0f); // already off

        // "Switch all on": the plain run again.
        page.findChild<QPushButton*>("headsAllOn")->click();
        WAIT_UNTIL(idle(page) && page.document()->run()->offHeads.empty() &&
                   page.document()->run()->generated() == 4);
        QVERIFY(page.document()->visibleAttention().sub({0, 1}).matrix().cwiseAbs().maxCoeff() > 0);
    }

    void differenceOfTwoViews() {
        TextPage page(nullptr, kData + "/gpt2");
        runText(page, QStringLiteral("The cat sat on the mat"), 2);
        page.document()->setHead(0);
        page.views()->setCurrentIndex(4);
        DifferenceView* view = page.lenses()->differenceView();
        QVERIFY(!view->hasDifference());
        page.findChild<QPushButton*>("pinDifference")->click();
        QVERIFY(view->hasDifference()); // A against itself
        QVERIFY(view->summary().contains("max |Δ| = 0"));
        page.document()->setHead(3);
        QVERIFY(view->hasDifference());
        QVERIFY2(!view->summary().contains("max |Δ| = 0 "), qPrintable(view->summary()));
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            page.resize(1280, 800);
            page.grab().save(QString::fromLocal8Bit(dir) + "/text-difference.png");
        }
        page.findChild<QPushButton*>("unpinDifference")->click();
        QVERIFY(!view->hasDifference());
    }

    // A quantised GGUF file against its full-precision original: pin the Q4_K_M file's matrix, open the
    // folder it was converted from; the page runs the same text again and the tab shows where rounding
    // moved attention.
    void quantisedAgainstItsOriginal() {
        const QString gguf = QStringLiteral(ATTNLENS_TEST_DATA "/gguf/llama-q4k.q4_k.gguf");
        const QString folder = QStringLiteral(ATTNLENS_TEST_DATA "/llm/llama-q4k");
        TextPage page(nullptr, gguf);
        runText(page, QStringLiteral("The cat sat on the mat"), 0);
        page.document()->setLayer(1);
        page.document()->setHead(2);
        page.views()->setCurrentIndex(4);
        page.findChild<QPushButton*>("pinDifference")->click();
        DifferenceView* view = page.lenses()->differenceView();
        QVERIFY(view->summary().contains("max |Δ| = 0"));
        const auto quantised = page.document()->model();
        page.openModel(folder);
        WAIT_UNTIL(idle(page) && page.document()->model() != quantised && page.document()->run());
        page.document()->setLayer(1);
        page.document()->setHead(2);
        QVERIFY(view->hasDifference());
        QVERIFY2(!view->summary().contains("max |Δ| = 0 "), qPrintable(view->summary()));
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            page.resize(1280, 800);
            page.grab().save(QString::fromLocal8Bit(dir) + "/text-quantised-difference.png");
        }
    }

    void neuronView() {
        TextPage page(nullptr, kData + "/bert-mlm");
        runText(page, QStringLiteral("the cat sat on the [MASK]"), 0);
        page.document()->setLayer(1);
        page.document()->setHead(2);
        page.findChild<QPushButton*>("neuronButton")->click();
        NeuronDialog* dialog = page.lenses()->neuronDialog();
        QVERIFY(dialog && dialog->isVisible());
        WAIT_UNTIL(dialog->terms().has_value());
        QCOMPARE(dialog->layer(), 1);
        QCOMPARE(dialog->head(), 2);
        const Tensor& a = page.document()->run()->prompt->captured();
        QVERIFY(std::abs(dialog->terms()->weight - a.at({1, 2, dialog->query(), dialog->key()})) < 1e-5);
        QCOMPARE(dialog->query(), page.document()->visibleTokens() - 1);
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
            dialog->grab().save(QString::fromLocal8Bit(dir) + "/text-neuron.png");
        dialog->close();
    }

    void headsOffInTheSession() {
        TextPage a(nullptr, kData + "/gpt2");
        runText(a, QStringLiteral("The dog ran"), 2);
        a.lenses()->setAblated({{1, 3}, {0, 0}});
        WAIT_UNTIL(idle(a) && a.document()->run()->offHeads.size() == 2 &&
                   a.document()->run()->generated() == 2);
        const QJsonObject saved = a.saveSession();
        QVERIFY(saved.contains("off_heads"));
        TextPage b(nullptr, kData + "/gpt2");
        WAIT_UNTIL(idle(b) && b.document()->hasModel());
        QVERIFY(b.checkSession(saved).isEmpty());
        b.restoreSession(saved);
        WAIT_UNTIL(idle(b) && !b.restoringSession() && b.document()->run());
        QCOMPARE(b.document()->run()->offHeads, (HeadList{{0, 0}, {1, 3}}));
        QCOMPARE(b.document()->run()->ids, a.document()->run()->ids);
        QCOMPARE(b.saveSession(), saved);
        QVERIFY(!b.checkSession(QJsonObject{{"off_heads", "x"}}).isEmpty());
    }
};

QTEST_MAIN(TestTextLensesPage)
#include "test_text_lenses_page.moc"
