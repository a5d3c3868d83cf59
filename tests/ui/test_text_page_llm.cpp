// The Text page on Llama-layout folders (tests/data/llm: tiny checkpoints written by transformers'
// save_pretrained, with a byte-level tokenizer.json): generation stepped through the KV cache with every head
// captured equal to the engine's one pass, greedy ids equal the model's, grouped-query attention and sliding
// windows named in the model line and its tooltip, the window visible in the matrix.
#include "core/analysis/map_scale.h"
#include "core/io/model_folder.h"
#include "core/models/llama_model.h"
#include "core/models/text_folder.h"
#include "support/error_of.h"
#include "support/text_pages.h"
#include "support/waits.h"
#include "ui/shell/main_window.h"
#include "ui/text/chat_toggle.h"
#include "ui/text/sampling_button.h"
#include "ui/text/text_document.h"
#include "ui/text/text_lenses.h"
#include "ui/text/text_lines_view.h"
#include "ui/text/text_page.h"
#include "ui/vision/map_grid_view.h"
#include "ui/widgets/candidate_bars.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/map_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonObject>
#include <QLabel>
#include <QMimeData>
#include <QTabWidget>
#include <QTest>

using namespace attnlens;
using namespace attnlens::ui;
using texttest::idle;

namespace {

const QString kLlm = QStringLiteral(ATTNLENS_TEST_DATA "/llm");

int argmax(const RowMatrix& logits) {
    Eigen::Index best = 0;
    logits.row(logits.rows() - 1).maxCoeff(&best);
    return static_cast<int>(best);
}

} // namespace

class TestTextPageLlm : public QObject {
    Q_OBJECT
private slots:
    // A GGUF file (quantised, with its own vocabulary) opens through the window like a folder — opened or
    // dropped — on the Text page, its run the model's on the file's tokens.
    void ggufFileOpensOnTheTextPage() {
        MainWindow window;
        auto* page = new TextPage(&window);
        window.addPage("Text", page);
        WAIT_UNTIL(idle(*page));
        const QString gguf = QStringLiteral(ATTNLENS_TEST_DATA "/gguf/qwen2-bias.q8_0.gguf");
        QVERIFY(window.openModel(gguf));
        WAIT_UNTIL(idle(*page) && page->document()->hasModel() && page->loadedModelDir() == gguf);
        QCOMPARE(page->document()->model()->modelType, std::string("qwen2"));
        page->setText(QStringLiteral("Hi there"));
        page->setNewTokens(2);
        page->runText();
        WAIT_UNTIL(idle(*page) && page->document()->run() && page->document()->run()->generated() == 2);
        QCOMPARE(page->document()->run()->promptLength, 8); // a token per byte: the file's vocabulary
        QMimeData drop;
        drop.setUrls({QUrl::fromLocalFile(QStringLiteral(ATTNLENS_TEST_DATA "/gguf/llama-gqa.f32.gguf"))});
        QVERIFY(window.dropModelFolder(&drop));
        WAIT_UNTIL(idle(*page) && page->document()->model() &&
                   page->document()->model()->modelType == "llama");
    }

    void llamaGenerationSteps() {
        TextPage page(nullptr, kLlm + "/llama-gqa");
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        QVERIFY(page.document()->modelDescription().endsWith("8 heads / 2 KV"));
        QVERIFY(page.document()->modelDetails().contains("2 key/value heads, each read by 4 query heads"));
        page.setText(QStringLiteral("The cat sat."));
        page.setNewTokens(4);
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run() && page.document()->run()->generated() == 4);
        const auto& run = *page.document()->run();
        const int p = run.promptLength;
        QCOMPARE(page.matrixView()->matrix().rows(), Eigen::Index(p + 4));
        // The rows the page captured step by step are those of one pass over all the ids.
        const auto folder = loadTextFolder((kLlm + "/llama-gqa").toStdString());
        const TextForward full = folder.forward(run.ids);
        for (int head : {0, 5}) {
            const RowMatrix mine = page.document()->tokenMatrix(1, head);
            QVERIFY(((mine - RowMatrix(full.attentions.slice2d({1, head}))).array().abs().maxCoeff()) <
                    5e-5f);
        }
        // Greedy: each generated id is the argmax of the pass over the ids before it.
        for (int s = 0; s < 4; ++s) {
            const std::vector<int> before(run.ids.begin(), run.ids.begin() + p + s);
            QCOMPARE(run.ids[size_t(p + s)], argmax(folder.forward(before).logits));
        }
    }

    // Sampling with a seed: the same text on every run, and token by token (▶ at the end) the same as at
    // once.
    void samplingReproducible() {
        TextPage page(nullptr, kLlm + "/llama-gqa");
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        auto* sampling = page.findChild<SamplingButton*>("sampling");
        QVERIFY(sampling && sampling->text() == "Greedy");
        sampling->setSampling(Sampling{1.5f, 0, 0.95f, 3});
        QCOMPARE(sampling->text(), QString("Sample · T 1.5 · top-p 0.95 · seed 3"));
        auto start = [&](int count) {
            page.setText(QStringLiteral("Hi there"));
            page.setNewTokens(count);
            page.runText();
        };
        auto done = [&](int count) {
            return idle(page) && page.document()->run() && page.document()->run()->generated() == count;
        };
        start(6);
        WAIT_UNTIL(done(6));
        const std::vector<int> once = page.document()->run()->ids;
        start(6);
        WAIT_UNTIL(done(6));
        QCOMPARE(page.document()->run()->ids, once);
        start(3);
        WAIT_UNTIL(done(3));
        for (int more = 4; more <= 6; ++more) {
            page.stepForward(); // at the end: one more token through the cache
            WAIT_UNTIL(done(more));
        }
        QCOMPARE(page.document()->run()->ids, once);
        // the token taken is marked among the candidates, wherever it ranks
        page.stepBack();
        QCOMPARE(page.candidateBars()->chosenId(), once.back());
        sampling->setSampling(Sampling{});
        QCOMPARE(sampling->text(), QString("Greedy"));
        start(6);
        WAIT_UNTIL(done(6));
        QVERIFY(page.document()->run()->ids != once);
    }

    // A session keeps how tokens were chosen: restored, the sampled run is the same text.
    void samplingInSession() {
        TextPage a(nullptr, kLlm + "/llama-gqa");
        WAIT_UNTIL(idle(a) && a.document()->hasModel());
        a.findChild<SamplingButton*>("sampling")->setSampling(Sampling{0.9f, 20, 0.9f, 42});
        a.setText(QStringLiteral("Once"));
        a.setNewTokens(5);
        a.runText();
        WAIT_UNTIL(idle(a) && a.document()->run() && a.document()->run()->generated() == 5);
        const QJsonObject saved = a.saveSession();
        QCOMPARE(saved.value("seed").toInt(), 42);
        TextPage b(nullptr, kLlm + "/gemma3"); // another model: the session's loads first
        WAIT_UNTIL(idle(b) && b.document()->hasModel());
        b.restoreSession(saved);
        WAIT_UNTIL(idle(b) && !b.restoringSession() && b.document()->run());
        QCOMPARE(b.findChild<SamplingButton*>("sampling")->text(),
                 QString("Sample · T 0.9 · top-k 20 · top-p 0.90 · seed 42"));
        QCOMPARE(b.document()->run()->ids, a.document()->run()->ids);
        QCOMPARE(b.saveSession(), saved);
    }

    // Chat: the text goes in as a user turn of the folder's chat template (llama-gqa has a ChatML one); a
    // folder without one offers no chat.
    void chatToggle() {
        TextPage page(nullptr, kLlm + "/llama-gqa");
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        auto* chat = page.findChild<ChatToggle*>("chat");
        QVERIFY(chat);
        // Failed once in CI under heavy load (session 25): the tooltip says why chat was unavailable.
        QVERIFY2(chat->isEnabled() && !chat->isChecked(), qPrintable(chat->toolTip()));
        chat->setChecked(true);
        page.setText(QStringLiteral("Hi"));
        page.setNewTokens(2);
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run() && page.document()->run()->generated() == 2);
        const auto& run = *page.document()->run();
        const auto folder = loadTextFolder((kLlm + "/llama-gqa").toStdString());
        const auto want =
            folder.tokenizer->encodePlain("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n").ids;
        QCOMPARE(std::vector<int>(run.ids.begin(), run.ids.begin() + run.promptLength), want);
        QCOMPARE(page.saveSession().value("chat").toBool(), true);
        page.openModel(kLlm + "/gemma3");
        WAIT_UNTIL(idle(page) && page.document()->model()->modelType == "gemma3_text");
        QVERIFY(chat->isHidden() && !chat->isEnabled() && !chat->isChecked()); // gemma3's folder has none
    }

    // Grouped-query attention in the head selector and the layers × heads grid: 8 query heads, 2 KV heads.
    void gqaGroupingShown() {
        TextPage page(nullptr, kLlm + "/llama-gqa");
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        auto* heads = page.findChild<HeadCombo*>();
        QVERIFY(heads);
        QCOMPARE(heads->itemText(heads->findData(5)), QString("Head 5 · KV 1"));
        QCOMPARE(heads->itemData(heads->findData(2), Qt::ToolTipRole).toString().left(38),
                 QString("Query heads 0–3 share key/value head 0"));
        page.setText(QStringLiteral("Hi there"));
        page.setNewTokens(0);
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run());
        page.views()->setCurrentWidget(page.modelGrid());
        WAIT_UNTIL(page.modelGrid()->count() == 16);
        QCOMPARE(page.modelGrid()->title(8 + 3), QString("L1 H3 · KV0"));
        QCOMPARE(page.modelGrid()->title(8 + 4), QString("L1 H4 · KV1"));
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            page.resize(1280, 760);
            page.show();
            QTest::qWait(300);
            page.grab().save(QString::fromLocal8Bit(dir) + "/text-llama-gqa-grid.png");
        }
        // heads with their own keys and values (GPT-2) keep plain labels
        TextPage gpt2(nullptr, QStringLiteral(ATTNLENS_TEST_DATA "/text/gpt2"));
        WAIT_UNTIL(idle(gpt2) && gpt2.document()->hasModel());
        auto* plain = gpt2.findChild<HeadCombo*>();
        QCOMPARE(plain->itemText(plain->findData(1)), QString("Head 1"));
        QVERIFY(plain->itemData(plain->findData(1), Qt::ToolTipRole).isNull());
    }

    // Sink-aware scales (issue 40) on the built-in Llama model: the Log scale colours by log weight between
    // the smallest and largest weight shown, "Ignore first token" masks the first column and shares each row
    // over the rest, Clip ends the bar at the 99th percentile; the thumbnails follow.
    void sinkAwareScales() {
        TextPage page(nullptr, QString::fromStdString(builtinModelDir(ModelKind::Text).string()));
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        page.setText(
            QStringLiteral("The old lighthouse keeper climbed the stairs. Ships passed far out at sea, "
                           "and he wrote their names in a book."));
        page.setNewTokens(0);
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run());
        page.document()->setLayer(3);
        page.document()->setHead(0);
        HeatmapView* view = page.matrixView();
        const RowMatrix weights = view->matrix();
        QVERIFY(view->colorScale() == ColorScale::Linear &&
                view->displayRange() == std::make_pair(0.0f, 1.0f));
        auto* kind = page.findChild<QComboBox*>(QStringLiteral("mapScale"));
        kind->setCurrentIndex(kind->findData(static_cast<int>(MapScaleKind::Log)));
        emit kind->activated(kind->currentIndex());
        QVERIFY(view->colorScale() == ColorScale::Log);
        float smallest = 1.0f;
        for (Eigen::Index i = 0; i < weights.size(); ++i)
            if (weights.data()[i] > 0.0f) smallest = std::min(smallest, weights.data()[i]);
        QCOMPARE(view->displayRange().first, std::max(smallest, weights.maxCoeff() * 1e-6f));
        QCOMPARE(view->displayRange().second, weights.maxCoeff());
        page.findChild<QCheckBox*>(QStringLiteral("ignoreFirstToken"))->click();
        const RowMatrix rest = view->matrix();
        QVERIFY(view->isMasked(3, 0) && !view->isMasked(3, 1));
        for (Eigen::Index r = 1; r < rest.rows(); ++r) {
            const float others = weights.row(r).tail(weights.cols() - 1).sum();
            QVERIFY(std::abs(rest(r, 2) - weights(r, 2) / others) < 1e-5f);
            QVERIFY(std::abs(rest.row(r).sum() - 1.0f) < 1e-5f);
        }
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            page.resize(1280, 800);
            page.show();
            QTest::qWait(300);
            page.grab().save(QString::fromLocal8Bit(dir) + "/text-llama-log-ignore-first.png");
        }
        kind->setCurrentIndex(kind->findData(static_cast<int>(MapScaleKind::Clip)));
        emit kind->activated(kind->currentIndex());
        QVERIFY(view->colorScale() == ColorScale::Linear && view->displayRange().first == 0.0f);
        QVERIFY(view->displayRange().second < 1.0f);
    }

    // Above the capture budget the page keeps the prompt's attention on demand (issue 40): every view shows
    // the same maps as a captured run — the matrix bit for bit, the Model grid's tiles streamed from the
    // worker, the Heads lens measured there one map at a time — and nothing materialises every head.
    void longTextOnDemand() {
        const QString text = QStringLiteral("One, two: three. Four five six, seven.");
        TextPage captured(nullptr, kLlm + "/gemma3"), onDemand(nullptr, kLlm + "/gemma3");
        onDemand.document()->setCaptureBudget(1024);
        for (TextPage* page : {&captured, &onDemand}) {
            WAIT_UNTIL(idle(*page) && page->document()->hasModel());
            page->setText(text);
            page->setNewTokens(2);
            page->runText();
            WAIT_UNTIL(idle(*page) && page->document()->run() && page->document()->run()->generated() == 2);
        }
        QVERIFY(!captured.document()->onDemand() && onDemand.document()->onDemand());
        QVERIFY(errorOf([&] { onDemand.document()->visibleAttention(); }).contains("on demand"));
        const int layers = captured.document()->model()->layers(),
                  heads = captured.document()->model()->heads();
        for (int step : {2, 0})
            for (TextPage* page : {&captured, &onDemand})
                page->document()->setStep(step);
        for (int l = 0; l < layers; ++l)
            for (int h = 0; h < heads; ++h)
                QVERIFY(captured.document()->tokenMatrix(l, h) == onDemand.document()->tokenMatrix(l, h));
        // The matrix view: the on-demand page's comes from its map lane, equal to the captured page's.
        for (auto [l, h] : {std::pair{1, 2}, {0, -1}, {2, 0}}) {
            for (TextPage* page : {&captured, &onDemand}) {
                page->document()->setLayer(l);
                page->document()->setHead(h);
            }
            QVERIFY(onDemand.matrixPending());
            WAIT_UNTIL(!onDemand.matrixPending());
            QVERIFY(onDemand.matrixView()->matrix().rows() == captured.document()->visibleTokens());
            QVERIFY(
                (captured.matrixView()->matrix() - onDemand.matrixView()->matrix()).cwiseAbs().maxCoeff() <
                1e-6f);
            QVERIFY(captured.matrixView()->scene().image == onDemand.matrixView()->scene().image);
        }
        captured.document()->setHead(-1);
        onDemand.document()->setHead(-1);
        QVERIFY((captured.document()->tokenMatrix(1, -1) - onDemand.document()->tokenMatrix(1, -1))
                    .cwiseAbs()
                    .maxCoeff() < 1e-6f);
        // The Model tab: tiles arrive from the worker, equal to the captured page's.
        for (TextPage* page : {&captured, &onDemand})
            page->views()->setCurrentIndex(1);
        WAIT_UNTIL(idle(onDemand) && onDemand.modelGrid()->count() == layers * heads);
        for (int i = 0; i < layers * heads; ++i)
            QVERIFY(captured.modelGrid()->tile(i) == onDemand.modelGrid()->tile(i));
        const QByteArray shots = qgetenv("ATTNLENS_SCREENSHOT_DIR");
        auto grab = [&](const QString& name) {
            if (shots.isEmpty()) return;
            onDemand.resize(1280, 760);
            onDemand.show();
            QTest::qWait(300);
            onDemand.grab().save(QString::fromLocal8Bit(shots) + "/" + name);
        };
        grab("text-on-demand-grid.png");
        // The Heads lens: measured on the worker, the same numbers.
        for (TextPage* page : {&captured, &onDemand})
            page->views()->setCurrentIndex(3);
        WAIT_UNTIL(idle(onDemand) && onDemand.lenses()->headsLens()->stats().layers() == layers);
        grab("text-on-demand-heads.png");
        for (HeadStatistic st : kAllHeadStatistics) {
            const RowMatrix& a = captured.lenses()->headsLens()->stats().get(st);
            const RowMatrix& b = onDemand.lenses()->headsLens()->stats().get(st);
            for (Eigen::Index i = 0; i < a.size(); ++i)
                QVERIFY((std::isnan(a.data()[i]) && std::isnan(b.data()[i])) ||
                        std::abs(a.data()[i] - b.data()[i]) < 1e-6f);
        }
        // The Lines tab: the on-demand page's lines made on their own lane, the same as the captured page's.
        const auto lines = [](TextPage& p) {
            return static_cast<TextLinesView*>(p.findChild<QWidget*>("lines"));
        };
        onDemand.document()->setLayer(2);
        captured.document()->setLayer(2);
        for (TextPage* page : {&captured, &onDemand})
            page->views()->setCurrentIndex(2);
        QVERIFY(!lines(captured)->pending() && lines(onDemand)->pending());
        WAIT_UNTIL(!lines(onDemand)->pending());
        const AttentionLineScene &a = lines(captured)->scene(), &b = lines(onDemand)->scene();
        QCOMPARE(b.left, a.left);
        QCOMPARE(b.heads.size(), size_t(heads));
        for (int h = 0; h < heads; ++h) {
            QCOMPARE(b.heads[size_t(h)].start, a.heads[size_t(h)].start);
            QCOMPARE(b.heads[size_t(h)].key, a.heads[size_t(h)].key);
            QCOMPARE(b.heads[size_t(h)].weight, a.heads[size_t(h)].weight);
        }
        QVERIFY(a.heads[0].key.size() > 0);
    }

    void slidingWindowShown() {
        TextPage page(nullptr, kLlm + "/gemma3");
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        QVERIFY(page.document()->modelDetails().contains("Sliding window of 4 tokens in 2 of 3 layers"));
        page.setText(QStringLiteral("Hello there, world"));
        page.setNewTokens(0);
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run());
        page.document()->setLayer(0);
        page.document()->setHead(1);
        if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
            page.resize(1280, 760);
            page.show();
            QTest::qWait(300);
            page.grab().save(QString::fromLocal8Bit(dir) + "/text-gemma3-window.png");
        }
        const RowMatrix local = page.document()->tokenMatrix(0, 1); // a sliding layer: a band of 4
        const RowMatrix global = page.document()->tokenMatrix(2, 1);
        QVERIFY(local.rows() > 8);
        for (Eigen::Index i = 0; i < local.rows(); ++i)
            for (Eigen::Index j = 0; j < local.cols(); ++j) {
                QCOMPARE(local(i, j) > 0.0f, j <= i && j > i - 4);
                QCOMPARE(global(i, j) > 0.0f, j <= i);
            }
    }
};

QTEST_MAIN(TestTextPageLlm)
#include "test_text_page_llm.moc"
