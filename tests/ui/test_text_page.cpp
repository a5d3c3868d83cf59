// The Text page, offscreen, on the hub-layout fixtures (tests/data/text): typing and Run on BERT (attention
// of every head equal to the engine's, [MASK] predictions listed), GPT-2 generation stepped back and forth
// (the matrix grows a row per token, the candidates follow, ▶ at the end generates one more through the
// cache), word merging and hidden special tokens, the Model grid, Cancel of a long generation, a bad folder
// keeping the previous model, and the JSON export equal to the engine's forward pass.

#include "core/models/text_folder.h"
#include "core/util/error.h"
#include "support/text_pages.h"
#include "support/waits.h"
#include "ui/shell/inference_worker.h"
#include "ui/text/text_document.h"
#include "ui/text/text_embeddings_view.h"
#include "ui/text/text_lines_view.h"
#include "ui/text/text_page.h"
#include "ui/vision/map_grid_view.h"
#include "ui/widgets/candidate_bars.h"
#include "ui/widgets/embedding_maps.h"
#include "ui/widgets/head_toggle_bar.h"
#include "ui/widgets/heatmap_view.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

using namespace attnlens;
using namespace attnlens::ui;

using texttest::idle;

namespace {

const QString kData = texttest::kPageData;

void grab(QWidget& w, const char* name) {
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
        w.resize(1280, 800);
        w.show();
        QTest::qWait(200);
        w.grab().save(QString::fromLocal8Bit(dir) + "/" + name);
    }
}

} // namespace

class TestTextPage : public QObject {
    Q_OBJECT
private slots:
    // The text line lays out its tokens once per text and width, wraps at token boundaries and after a line
    // break, and marks the hovered token.
    void tokenTextViewWraps() {
        TokenTextView view;
        const QFontMetrics fm(view.font());
        const QStringList texts{"Hello", " world", ",\n", "next", " line", " again"};
        view.setTokens(texts, 4, true, QStringLiteral("tokens:"));
        QFont bold = view.font();
        bold.setBold(true);
        view.resize(QFontMetrics(bold).horizontalAdvance("tokens: ") + fm.horizontalAdvance("Hello world, ") +
                        2,
                    100);
        QCOMPARE(view.plainText(), QStringLiteral("tokens: Hello world,\nnext line again"));
        QCOMPARE(view.tokenRect(0).top(), 0);
        QCOMPARE(view.tokenRect(2).top(), 0);                // fits on the first line
        QCOMPARE(view.tokenRect(3).top(), fm.lineSpacing()); // after the line break
        QVERIFY(view.tokenRect(1).left() == view.tokenRect(0).right() + 1);
        const int narrow = fm.horizontalAdvance("next line") + 2; // " again" wraps
        QCOMPARE(view.heightForWidth(narrow) > view.heightForWidth(view.width()), true);
        view.resize(narrow, 100);
        for (int i = 0; i < texts.size(); ++i) { // within the width, line after line
            QVERIFY(view.tokenRect(i).right() < narrow || view.tokenRect(i).left() == 0);
            if (i > 0) QVERIFY(view.tokenRect(i).top() >= view.tokenRect(i - 1).top());
        }
        QCOMPARE(view.tokenRect(5).left(), 0); // " again" no longer fits after "next line"
        QCOMPARE(view.tokenRect(4).top(), view.tokenRect(3).top());
        view.setHovered(4);
        QCOMPARE(view.hovered(), 4);
        view.setHovered(99);
        QCOMPARE(view.hovered(), -1);
        QVERIFY(view.tokenRect(6).isEmpty());
        view.clear();
        QCOMPARE(view.heightForWidth(200), 0);
    }

    void bertRunAndMaskPredictions() {
        TextPage page(nullptr, kData + "/bert-mlm");
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        QVERIFY(!page.document()->run()); // the first run waits until the page is shown
        page.show();
        WAIT_UNTIL(idle(page) && page.document()->run());
        auto* input = page.findChild<QLineEdit*>("textInput");
        input->clear();
        QTest::keyClicks(input, QStringLiteral("The [MASK] sat on the mat."));
        QTest::keyClick(input, Qt::Key_Return); // Enter runs, as the button does
        WAIT_UNTIL(idle(page) && page.document()->run());
        const auto folder = loadTextFolder((kData + "/bert-mlm").toStdString());
        const auto e = folder.encode("The [MASK] sat on the mat.");
        const TextForward f = folder.forward(e.ids);
        QCOMPARE(page.document()->run()->ids, e.ids);
        page.document()->setLayer(1);
        page.document()->setHead(2);
        const RowMatrix shown = page.document()->tokenMatrix(1, 2);
        QCOMPARE(shown, RowMatrix(f.attentions.slice2d({1, 2})));
        QCOMPARE(page.matrixView()->matrix().rows(), Eigen::Index(e.ids.size()));
        // The mask's top 5 on the right, best first.
        QCOMPARE(page.candidatesList()->count(), 6);
        QCOMPARE(page.candidatesList()->item(0)->text(), QString("[MASK] at 2"));
        const auto top = topCandidates(f.logits.data() + 2 * f.logits.cols(), f.logits.cols(), 5);
        QVERIFY2(page.candidatesList()->item(1)->text().trimmed().startsWith(
                     QString::fromStdString(folder.token(top[0].id)) + " "),
                 qPrintable(page.candidatesList()->item(1)->text()));
        // Special tokens hidden: the sinks [CLS] and [SEP] go ([MASK] stays), rows renormalised.
        page.document()->setHideSpecial(true);
        const auto hidden = page.document()->shown();
        QCOMPARE(hidden.values.rows(), Eigen::Index(e.ids.size() - 2));
        QVERIFY(hidden.rows.contains("[MASK]"));
        QVERIFY((hidden.values.rowwise().sum().array() - 1.0f).abs().maxCoeff() < 1e-5f);
        grab(page, "text-bert.png");
    }

    void gpt2GenerationSteps() {
        TextPage page(nullptr, kData + "/gpt2");
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        page.setText(QStringLiteral("Hello, world! The cat"));
        page.setNewTokens(5);
        QSignalSpy ready(&page, &TextPage::resultReady);
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run() && page.document()->run()->generated() == 5);
        const auto& run = *page.document()->run();
        const int p = run.promptLength;
        QCOMPARE(page.document()->step(), 5);
        QCOMPARE(page.matrixView()->matrix().rows(), Eigen::Index(p + 5));
        // The page's rows are the engine's: a full forward over the same ids gives the same matrix (lower
        // triangle).
        const auto folder = loadTextFolder((kData + "/gpt2").toStdString());
        const TextForward full = folder.forward(run.ids);
        const RowMatrix mine = page.document()->tokenMatrix(1, 3);
        QVERIFY(((mine - RowMatrix(full.attentions.slice2d({1, 3}))).array().abs().maxCoeff()) < 5e-5f);
        // Generated greedily: each token is the first candidate of the step before.
        for (int s = 0; s < 5; ++s)
            QCOMPARE(run.ids[size_t(p + s)], run.candidates[size_t(s)].front().id);
        // Step back twice: two rows fewer, the candidates those after p + 3 tokens.
        page.stepBack();
        page.stepBack();
        QCOMPARE(page.document()->step(), 3);
        QCOMPARE(page.matrixView()->matrix().rows(), Eigen::Index(p + 3));
        // The next token as probability bars (a plain list before, issue 38): ten, the one taken next marked.
        const auto& bars = page.candidateBars()->candidates();
        QCOMPARE(bars.size(), size_t(10));
        QVERIFY(!page.candidateBars()->isHidden() && page.candidatesList()->isHidden());
        QCOMPARE(page.candidateBars()->chosenId(), run.ids[size_t(p + 3)]);
        QCOMPARE(bars.front().id, run.ids[size_t(p + 3)]); // greedy: the first
        QVERIFY(bars.front().prob >= bars.back().prob && bars.front().prob > 0.0f);
        page.stepForward();
        page.stepForward();
        QCOMPARE(page.document()->step(), 5);
        page.stepForward(); // at the end: one more token, generated through the cache
        WAIT_UNTIL(idle(page) && page.document()->run()->generated() == 6);
        QCOMPARE(page.document()->step(), 6);
        // Hover linking: a row hovered in the matrix is the focus of the Lines view and marked in the text
        // line.
        emit page.matrixView()->cellHovered(2, 0);
        QCOMPARE(page.document()->focusToken(), 2);
        auto* line = page.findChild<TokenTextView*>("output");
        QCOMPARE(line->hovered(), 2);
        QCOMPARE(line->tokens().size(), page.document()->visibleTokens());
        emit page.matrixView()->cellHovered(-1, -1);
        QCOMPARE(page.document()->hoveredToken(), -1);
        QCOMPARE(line->hovered(), -1);
        // Words: pieces without a leading space join the word before.
        page.document()->setWordLevel(true);
        QVERIFY(page.document()->shown().values.rows() < p + 6);
        // The Model tab: layers × heads tiles; a click shows that head.
        page.findChild<QTabWidget*>("views")->setCurrentIndex(1);
        QCOMPARE(page.modelGrid()->count(), folder.layers() * folder.heads());
        emit page.modelGrid()->tileClicked(folder.heads() + 2);
        QCOMPARE(page.document()->layer(), 1);
        QCOMPARE(page.document()->head(), 2);
        grab(page, "text-gpt2.png");
        page.findChild<QTabWidget*>("views")->setCurrentIndex(2); // Lines: head 2 of layer 1
        QVERIFY(page.findChild<QWidget*>("lines")->minimumHeight() > 0);
        grab(page, "text-lines.png");
        page.findChild<QTabWidget*>("views")->setCurrentIndex(1);
        grab(page, "text-model.png");
        // JSON export: the forward pass over the visible tokens.
        QTemporaryDir dir;
        page.exportTo(dir.filePath("run.json"));
        QFile f(dir.filePath("run.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(j["model_type"].toString(), QString("gpt2"));
        QCOMPARE(j["ids"].toArray().size(), qsizetype(p + 6));
        const QJsonArray att = j["attentions"].toArray(); // [L][H][T][T]
        QCOMPARE(att.size(), qsizetype(folder.layers()));
        QCOMPARE(att[1].toArray()[3].toArray()[2].toArray().size(), qsizetype(p + 6));
        QCOMPARE(float(att[1].toArray()[3].toArray()[2].toArray()[1].toDouble()),
                 full.attentions.at({1, 3, 2, 1}));
    }

    // Save → restore in a fresh page: every setting back, the run remade and stepped to the saved step.
    // The Lines tab has Translate's head legend and switches (issue 38): one coloured toggle per head,
    // following the head selector (one head: it alone; the mean: all), All / None.
    void linesHeadToggles() {
        TextPage page(nullptr, kData + "/gpt2");
        page.show();
        WAIT_UNTIL(idle(page) && page.document()->run());
        page.views()->setCurrentIndex(2);
        auto* bar = page.findChild<HeadToggleBar*>();
        QVERIFY(bar && bar->isVisible());
        QCOMPARE(bar->headCount(), page.document()->model()->heads());
        QCOMPARE(bar->findChild<QToolButton*>("headToggle0")->text(), QStringLiteral("0"));
        page.document()->setHead(1);
        QCOMPARE(bar->enabled(), (std::vector<bool>{false, true, false, false}));
        QTest::mouseClick(bar->findChild<QToolButton*>("headToggle3"), Qt::LeftButton);
        QCOMPARE(bar->enabled(), (std::vector<bool>{false, true, false, true}));
        page.document()->setHead(-1);
        QCOMPARE(bar->enabled(), (std::vector<bool>{true, true, true, true}));
        grab(page, "text-lines.png");
        // "Lines: top N" (issue 40): at top 1, one line per query and head whose largest weight reaches the
        // threshold, counted here on the maps as shown.
        auto* lines = static_cast<TextLinesView*>(page.findChild<QWidget*>("lines"));
        const auto drawn = [&] {
            QImage image(lines->lineGeometry().size, QImage::Format_ARGB32);
            QPainter p(&image);
            return paintAttentionLines(p, lines->scene(), lines->lineGeometry());
        };
        const int all = drawn();
        QCOMPARE(bar->linksPerQuery(), 0);
        bar->setLinksPerQuery(1);
        QCOMPARE(lines->scene().linksPerQuery, 1);
        int expected = 0;
        for (int h = 0; h < bar->headCount(); ++h) {
            const RowMatrix m = page.document()->shown(page.document()->layer(), h).values;
            for (Eigen::Index q = 0; q < m.rows(); ++q)
                expected += m.row(q).maxCoeff() >= kLineThreshold;
        }
        QCOMPARE(drawn(), expected);
        QVERIFY(expected > 0 && expected < all);
        QCOMPARE(bar->findChild<QSlider*>("linksPerQuery")->value(), 1);
        bar->setLinksPerQuery(0);
        QCOMPARE(drawn(), all);
    }

    // The Embeddings tab (Translate had one, Text none; issue 38): token and position rows and what layer 0
    // receives, for the tokens shown, equal to the model's own parts.
    void embeddingsTab() {
        TextPage page(nullptr, kData + "/gpt2");
        page.show();
        WAIT_UNTIL(idle(page) && page.document()->run());
        page.views()->setCurrentIndex(5);
        QCOMPARE(page.views()->tabText(5), QStringLiteral("Embeddings"));
        auto* tab = page.findChild<TextEmbeddingsView*>("textEmbeddings");
        QVERIFY(tab && tab->isVisible());
        const auto& run = *page.document()->run();
        const int n = page.document()->visibleTokens();
        const std::vector<int> ids(run.ids.begin(), run.ids.begin() + n);
        const TextEmbeddingParts parts = page.document()->model()->model->embeddingParts(ids);
        QCOMPARE(tab->maps()->view(0)->matrix().rows(), Eigen::Index(n));
        QVERIFY(tab->maps()->view(2)->matrix() == parts.input);
        QVERIFY(tab->maps()->view(1)->matrix() == parts.positions);
        // A step back: one row fewer.
        page.stepBack();
        QCOMPARE(tab->maps()->view(0)->matrix().rows(), Eigen::Index(page.document()->visibleTokens()));
        grab(page, "text-embeddings.png");
    }

    void sessionRoundTrip() {
        TextPage a(nullptr, kData + "/gpt2");
        a.show();
        WAIT_UNTIL(idle(a) && a.document()->run());
        a.setText(QStringLiteral("The dog ran to the park"));
        a.setNewTokens(4);
        a.runText();
        WAIT_UNTIL(idle(a) && a.document()->run()->generated() == 4 && a.text().startsWith("The dog"));
        a.stepBack();
        a.document()->setLayer(0);
        a.document()->setHead(3);
        a.document()->setHideSpecial(true);
        const QJsonObject saved = a.saveSession();
        TextPage b(nullptr, kData + "/bert-mlm"); // another model: the session's loads first
        WAIT_UNTIL(idle(b) && b.document()->hasModel());
        QVERIFY(b.checkSession(saved).isEmpty());
        b.restoreSession(saved);
        WAIT_UNTIL(idle(b) && !b.restoringSession());
        QCOMPARE(b.saveSession(), saved);
        QCOMPARE(b.document()->step(), 3);
        QCOMPARE(b.document()->shown().values, a.document()->shown().values);
        QVERIFY(b.checkSession(QJsonObject{{"layer", "one"}}).contains("pages.text.layer"));
    }

    void cancelAndBadFolder() {
        TextPage page(nullptr, kData + "/gpt2");
        page.show();
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        WAIT_UNTIL(idle(page) && page.document()->run());
        const auto before = page.document()->run();
        page.setText(QStringLiteral("The"));
        page.setNewTokens(60);
        page.runText();
        page.cancel();
        WAIT_UNTIL(idle(page));
        // Whether the job was stopped midway or had just ended, its result is never shown: the run before
        // stays.
        QCOMPARE(page.document()->run(), before);
        QVERIFY(page.findChild<QPushButton*>("runButton")->isEnabled());
        // A broken folder: the message names it, the model stays.
        QTemporaryDir bad;
        QFile::copy(kData + "/gpt2/config.json", bad.filePath("config.json"));
        QSignalSpy failed(&page, &TextPage::failed);
        page.openModel(bad.path());
        WAIT_UNTIL(idle(page) && failed.count() == 1);
        QVERIFY2(page.message().contains("vocab.json"), qPrintable(page.message()));
        QCOMPARE(page.loadedModelDir(), kData + "/gpt2");
        QVERIFY(page.document()->hasModel());
        // The banner closes with its button (issue 38: it had none).
        auto* close = page.findChild<QToolButton*>("dismissMessage");
        QVERIFY(close && close->isVisible());
        QTest::mouseClick(close, Qt::LeftButton);
        QCOMPARE(page.message(), QString());
        // Too long for the model's 64 positions: one message, nothing else changes — not even where the
        // page's controls are (the banner floats; it used to push everything below it down).
        const QRect output = page.findChild<QWidget*>("output")->geometry();
        page.setText(QString("word ").repeated(80));
        page.setNewTokens(0);
        page.runText();
        WAIT_UNTIL(idle(page) && failed.count() == 2);
        QVERIFY2(page.message().contains("too long"), qPrintable(page.message()));
        QTest::qWait(50);
        QCOMPARE(page.findChild<QWidget*>("output")->geometry(), output);
        // The next run that succeeds clears it (it stayed for ever).
        page.setText(QStringLiteral("The cat"));
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run());
        WAIT_UNTIL(page.message().isEmpty());
        QCOMPARE(failed.count(), 2);
    }
};

QTEST_MAIN(TestTextPage)
#include "test_text_page.moc"
