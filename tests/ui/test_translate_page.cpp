// The Translate page, offscreen, on the built-in translator when it is installed, else on the tiny
// fixture checkpoint (tests/data/marian/tiny-f32): translate, reset, step forward three times and back
// once and check the state; the selected token's highlighted row and the drawn colour of a cell whose
// value is computed here from the trace; kind / layer / head switches against the raw tensors; word
// merge and hidden specials (rows still sum to 1); the beam tree and node selection; the model grid,
// line and embeddings views; exports (JSON parsed, NPY header, CSV rows, PNG/SVG); errors keep input.
//
// Set ATTNLENS_SCREENSHOT_DIR to also write PNGs of the page in the states tested (for review).

#include "core/analysis/attention_captures.h"
#include "core/analysis/attention_diff.h"
#include "core/analysis/attention_flow.h"
#include "core/analysis/attention_maps.h"
#include "core/decode/decode_session.h"
#include "core/export/colormap.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "support/waits.h"
#include "ui/render/heatmap_image.h"
#include "ui/render/heatmap_scene.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/beam_view.h"
#include "ui/translate/decode_settings.h"
#include "ui/translate/embeddings_view.h"
#include "ui/translate/line_view.h"
#include "ui/translate/matrix_view.h"
#include "ui/translate/model_grid_view.h"
#include "ui/translate/sentence_bar.h"
#include "ui/translate/step_panel.h"
#include "ui/translate/token_chips.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"
#include "ui/translate/translation_export.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/neuron_dialog.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QWheelEvent>

#include <cmath>
#include <vector>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

QString modelDir() {
    try {
        return QString::fromStdString(builtinModelDir("marian-de-en-tiny").string());
    } catch (const std::exception&) {
        return QStringLiteral(ATTNLENS_TEST_DATA "/marian/tiny-f32");
    }
}

void maybeScreenshot(QWidget* w, const QString& name) {
    const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR");
    if (!dir.isEmpty()) w->grab().save(QString::fromLocal8Bit(dir) + "/" + name + ".png");
}

QPoint quietPixel(const QRect& cell) {
    return cell.topLeft() + QPoint(cell.width() / 4, cell.height() / 4);
}

// Loads the model and waits for the automatic first translation of `input`.
bool loadAndTranslate(TranslatePage& page, const QString& input, int beam = 1) {
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    page.setInput(input);
    page.setBeamWidth(beam);
    page.openModel(modelDir());
    return test::waitUntil([&] { return ready.count() > 0; }) && page.document()->snapshot() != nullptr;
}

// A 1280 × 800 page with a translated sentence, showing the Heads tab for cross-attention.
bool showCrossAttentionHeads(TranslatePage& page) {
    page.resize(1280, 800);
    page.show();
    if (!loadAndTranslate(page, QStringLiteral("Das Haus ist sehr groß und alt."))) return false;
    page.document()->setKind(AttentionKind::Cross);
    page.showView(TranslatePage::View::Heads);
    return true;
}

// Runs one page action and waits for its result.
template <typename F> bool act(TranslatePage& page, F action) {
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    action();
    return test::waitUntil([&] { return ready.count() > 0; });
}

} // namespace

class TestTranslatePage : public QObject {
    Q_OBJECT
private slots:
    // A paragraph is translated sentence by sentence (issue 38: given whole, the built-in model collapsed):
    // the views show the sentence chosen, the bar the paragraph's translation — each sentence's own, in
    // order; "Whole input" translates it as one.
    // A long paragraph (issue 40): its sentences are translated one job each, so a sentence chosen meanwhile
    // is shown long before the paragraph is done (it waited for the whole paragraph when it was one job).
    void sentenceChosenDuringParagraph() {
        TranslatePage page;
        QStringList sentences;
        for (int i = 0; i < 40; ++i)
            sentences << QStringLiteral("Das Haus ist sehr groß und alt.");
        QVERIFY(loadAndTranslate(page, sentences.join(' ')));
        auto* bar = page.findChild<SentenceBar*>();
        QCOMPARE(bar->sentences().size(), 40);
        QVERIFY(act(page, [&] {
            bar->setCurrent(7);
            emit bar->sentenceChosen();
        }));
        QVERIFY(bar->paragraphTranslation().isEmpty()); // still on its way
        WAIT_UNTIL(!bar->paragraphTranslation().isEmpty());
        QCOMPARE(bar->paragraphTranslation().split(QStringLiteral(". ")).size(), 40);
    }

    void paragraphSentenceBySentence() {
        TranslatePage page;
        const QString paragraph = QStringLiteral("Wie geht es dir? Am 3. Oktober ist Feiertag. Danke!");
        auto* bar = page.findChild<SentenceBar*>();
        int paragraphAtSentence = -1; // the other sentences wait until the one shown is translated
        QObject::connect(
            &page, &TranslatePage::resultReady, &page,
            [&] { paragraphAtSentence = int(bar->paragraphTranslation().isEmpty()); },
            Qt::SingleShotConnection);
        QVERIFY(loadAndTranslate(page, paragraph));
        QCOMPARE(paragraphAtSentence, 1);
        QVERIFY(bar && !bar->isHidden());
        QCOMPARE(bar->sentences(),
                 (QStringList{"Wie geht es dir?", "Am 3. Oktober ist Feiertag.", "Danke!"}));
        QCOMPARE(page.document()->snapshot()->best->source, std::string("Wie geht es dir?"));
        WAIT_UNTIL(!bar->paragraphTranslation().isEmpty());
        QStringList alone; // each sentence translated by itself, greedy
        const MarianFolder& model = page.document()->model();
        for (const QString& s : bar->sentences()) {
            DecodeOptions greedy;
            greedy.numBeams = 1;
            greedy.maxNewTokens = page.findChild<DecodeSettings*>()->maxNewTokens();
            DecodeSession session(model.model, model.tokenizer, s.toStdString(), greedy);
            session.run();
            alone << QString::fromStdString(session.trace()->translation);
        }
        QCOMPARE(bar->paragraphTranslation(), alone.join(' '));
        // Another sentence: every view follows it; the paragraph, translated already, is not translated
        // again.
        const auto* label = bar->findChild<QLabel*>("paragraphTranslation");
        QString paragraphShown;
        QVERIFY(act(page, [&] {
            bar->setCurrent(1);
            emit bar->sentenceChosen();
            paragraphShown = label->text();
        }));
        QCOMPARE(paragraphShown, QStringLiteral("<b>Paragraph:</b> ") + alone.join(' ').toHtmlEscaped());
        QCOMPARE(page.document()->snapshot()->best->source, std::string("Am 3. Oktober ist Feiertag."));
        QCOMPARE(QString::fromStdString(page.document()->snapshot()->best->translation), alone[1]);
        // A session keeps the sentence shown: restored, the page shows sentence 1 again.
        const QJsonObject saved = page.saveSession();
        QCOMPARE(saved.value("sentence").toInt(), 1);
        TranslatePage again;
        again.openModel(modelDir());
        WAIT_UNTIL(again.document()->hasModel() && !again.isBusy());
        again.restoreSession(saved);
        WAIT_UNTIL(!again.restoringSession() && !again.isBusy() && again.document()->snapshot());
        QCOMPARE(again.document()->snapshot()->best->source, std::string("Am 3. Oktober ist Feiertag."));
        QCOMPARE(again.findChild<SentenceBar*>()->current(), 1);
        // Whole input: one translation of all of it; the bar stays to switch back.
        QVERIFY(act(page, [&] { bar->findChild<QCheckBox*>("wholeInput")->setChecked(true); }));
        QCOMPARE(page.document()->snapshot()->best->source, paragraph.toStdString());
        QVERIFY(!bar->isHidden());
        // One sentence: no bar.
        QVERIFY(act(page, [&] {
            page.setInput(QStringLiteral("Guten Morgen!"));
            page.translate();
        }));
        QVERIFY(bar->isHidden());
    }

    void translateStepAndBack() {
        TranslatePage page(nullptr, false);
        page.resize(1300, 850);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QVERIFY(loadAndTranslate(page, QStringLiteral("Wie geht es dir?")));
        TranslationDocument* doc = page.document();
        const auto full = doc->snapshot();
        QVERIFY(full->finished);
        QVERIFY(!full->best->translation.empty() || !full->best->targetIds.empty());
        QCOMPARE(full->step, static_cast<int>(full->best->targetIds.size()));
        QVERIFY2(full->step >= 3, "the example needs at least three target tokens");
        QVERIFY(!page.statusText().isEmpty());

        QVERIFY(act(page, [&] { page.reset(); }));
        QCOMPARE(doc->snapshot()->step, 0);
        QVERIFY(doc->trace()->targetTokens.empty());
        for (int i = 0; i < 3; ++i)
            QVERIFY(act(page, [&] { page.stepForward(); }));
        QCOMPARE(doc->snapshot()->step, 3);
        QVERIFY(act(page, [&] { page.stepBack(); }));
        const auto snap = doc->snapshot();
        QCOMPARE(snap->step, 2);
        QVERIFY(!snap->finished);
        // Greedy is deterministic: the two tokens are the first two of the full translation.
        QCOMPARE(snap->best->targetIds.size(), size_t(2));
        QCOMPARE(snap->best->targetIds[0], full->best->targetIds[0]);
        QCOMPARE(snap->best->targetIds[1], full->best->targetIds[1]);
        QCOMPARE(page.chips(TokenSide::Target)->count(), 2);
        QCOMPARE(page.chips(TokenSide::Source)->count(), static_cast<int>(snap->best->sourceTokens.size()));
        QCOMPARE(snap->candidates.size(), size_t(10));
        QCOMPARE(page.stepPanel()->candidateBars()->candidates().size(), size_t(10));

        // Cross-attention, layer 1, mean of heads: the matrix view shows [T=2, S] with the trace's values.
        doc->setKind(AttentionKind::Cross);
        doc->setLayer(0);
        doc->setHead(-1);
        doc->setFusion(HeadFusion::Mean);
        HeatmapView* heat = page.matrixView()->heatmap();
        const RowMatrix expected =
            layerAttention(snap->best->crossAttention, 0, {-1, HeadFusion::Mean}); // [T, S]
        QCOMPARE(heat->rows(), 2);
        QCOMPARE(heat->columns(), static_cast<int>(snap->best->sourceTokens.size()));
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < heat->columns(); ++c)
                QVERIFY(std::abs(heat->value(r, c) - expected(r, c)) < 1e-6f);

        // Selecting target token 1 highlights row 1 (everywhere: matrix, chips).
        doc->setSelectedToken({TokenSide::Target, 1});
        QCOMPARE(heat->selectedRow(), 1);
        const std::vector<float> w = doc->focusWeights(TokenSide::Source);
        QCOMPARE(w.size(), snap->best->sourceTokens.size());
        QVERIFY(std::abs(w[0] - expected(1, 0)) < 1e-6f);
        // The drawn colour of cell (1, 0) in the selected (undimmed) row is colorAt(viridis, value).
        heat->setAnnotationsEnabled(false);
        QApplication::processEvents();
        const QImage shot = heat->viewport()->grab().toImage();
        const Rgb rgb = colorAt(ColorMap::Viridis, expected(1, 0));
        QCOMPARE(QColor(shot.pixel(quietPixel(heat->cellRect(1, 0)))), QColor(rgb.r, rgb.g, rgb.b));
        // A source token is a column of the cross matrix; hovering it moves the highlight there.
        doc->setHoveredToken({TokenSide::Source, 0});
        QCOMPARE(heat->selectedColumn(), 0);
        doc->setHoveredToken({});
        QCOMPARE(heat->selectedRow(), 1);
        // Clicking a row label selects that token in the document.
        QSignalSpy sel(doc, &TranslationDocument::selectionChanged);
        emit heat->rowSelected(0);
        QCOMPARE(doc->selectedToken(), (TokenRef{TokenSide::Target, 0}));
        // Moving the pointer over a cell hovers its query token (row 1 = target token 1) and the
        // highlight follows; off the grid the focus returns to the selected token (row 0).
        QTest::mouseMove(heat->viewport(), heat->cellRect(1, 0).center());
        QCOMPARE(doc->hoveredToken(), (TokenRef{TokenSide::Target, 1}));
        QCOMPARE(heat->selectedRow(), 1);
        QTest::mouseMove(heat->viewport(), QPoint(1, 1));
        QCOMPARE(doc->hoveredToken(), TokenRef{});
        QCOMPARE(heat->selectedRow(), 0);
        maybeScreenshot(&page, "translate-step2");
    }

    void translationIsShownAsItGrows() {
        // The first slice is a single step: a partial snapshot (step 1, not finished) is shown before
        // the complete one; each partial one extends the previous.
        TranslatePage page(nullptr, false);
        page.resize(1000, 700);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Das Wetter ist heute schön.")));
        std::vector<int> partialSteps;
        connect(&page, &TranslatePage::partialResult, &page, [&] {
            const auto snap = page.document()->snapshot();
            QVERIFY(snap && !snap->finished);
            partialSteps.push_back(snap->step);
        });
        QVERIFY(act(page, [&] { page.translate(); }));
        const auto full = page.document()->snapshot();
        QVERIFY(full->finished);
        QVERIFY(!partialSteps.empty());
        QCOMPARE(partialSteps.front(), 1);
        for (size_t i = 1; i < partialSteps.size(); ++i)
            QVERIFY(partialSteps[i] > partialSteps[i - 1]);
        QVERIFY(partialSteps.back() < full->step);
        QVERIFY(page.lastTranslateMs() >= 0);
        // Steps queued back to back (fast clicks, the screenshot driver) each deliver their result.
        QVERIFY(act(page, [&] { page.reset(); }));
        QSignalSpy ready(&page, &TranslatePage::resultReady);
        for (int i = 0; i < 3; ++i)
            page.stepForward();
        WAIT_UNTIL_COMPARE(ready.count(), 3);
        QCOMPARE(page.document()->snapshot()->step, 3);
    }

    void switchKindLayerHead() {
        TranslatePage page(nullptr, false);
        page.resize(1300, 850);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Wie geht es dir?")));
        TranslationDocument* doc = page.document();
        const auto trace = doc->trace();
        HeatmapView* heat = page.matrixView()->heatmap();
        const int S = static_cast<int>(trace->sourceTokens.size()),
                  T = static_cast<int>(trace->targetTokens.size());
        const int Le = doc->layerCount(AttentionKind::EncoderSelf),
                  Ld = doc->layerCount(AttentionKind::DecoderSelf);
        QVERIFY(Le >= 2 && Ld >= 2);

        auto* kind = page.findChild<QComboBox*>(QStringLiteral("attentionKind"));
        QVERIFY(kind);
        kind->setCurrentIndex(0);
        emit kind->activated(0);
        QCOMPARE(doc->kind(), AttentionKind::EncoderSelf);
        QCOMPARE(heat->rows(), S);
        QCOMPARE(heat->columns(), S);
        doc->setLayer(Le - 1);
        doc->setHead(1);
        QVERIFY(page.matrixView()->title().contains(QStringLiteral("head 1"))); // numbered from 0
        const auto enc = trace->encoderAttention.slice2d({Le - 1, 1});          // [S, S]
        for (int r = 0; r < S; ++r)
            for (int c = 0; c < S; ++c)
                QCOMPARE(heat->value(r, c), enc(r, c));

        doc->setKind(AttentionKind::DecoderSelf);
        QCOMPARE(heat->rows(), T);
        QCOMPARE(heat->columns(), T);
        QCOMPARE(heat->value(0, 1), 0.0f);                       // causal zero
        QCOMPARE(heat->columnLabel(0), QStringLiteral("<pad>")); // decoder input 0 = start token
        doc->setFusion(HeadFusion::Max);
        doc->setHead(-1);
        const RowMatrix mx = layerAttention(trace->decoderAttention, doc->layer(), {-1, HeadFusion::Max});
        QCOMPARE(heat->value(T - 1, 0), mx(T - 1, 0));
        auto* head = page.findChild<HeadCombo*>(QStringLiteral("head"));
        QCOMPARE(head->selection().head, -1); // the selector follows the document
        QCOMPARE(head->selection().fusion, HeadFusion::Max);

        // Word level and hidden specials: rows still sum to 1.
        doc->setKind(AttentionKind::Cross);
        doc->setHideSpecial(true);
        QCOMPARE(heat->columns(), S - 1); // </s> hidden
        doc->setWordLevel(true);
        const AttentionMatrix m = doc->currentMatrix();
        QVERIFY(m.values.cols() <= S - 1);
        for (Eigen::Index r = 0; r < m.values.rows(); ++r) {
            const float sum = m.values.row(r).sum();
            QVERIFY2(std::abs(sum - 1.0f) < 1e-5f || sum == 0.0f, qPrintable(QString::number(sum)));
        }
        QCOMPARE(heat->columns(), static_cast<int>(m.values.cols()));

        // Model grid: one thumbnail per layer × (heads + mean); a click opens the map in the matrix view.
        doc->setHideSpecial(false);
        doc->setWordLevel(false);
        page.showView(TranslatePage::View::Model);
        ModelGridCanvas* grid = page.modelView()->canvas();
        const int H = doc->headCount(AttentionKind::Cross);
        QCOMPARE(grid->thumbnailCount(), Ld * (H + 1));
        QTest::mouseClick(grid, Qt::LeftButton, {}, grid->cellRect(1, 2).center());
        QCOMPARE(doc->layer(), 1);
        QCOMPARE(doc->head(), 2);
        QCOMPARE(page.currentView(), TranslatePage::View::Matrix);

        // Lines: all heads when aggregated, one when a head is chosen, toggles respected.
        page.showView(TranslatePage::View::Lines);
        doc->setHead(-1);
        AttentionLineView* lines = page.lineView();
        QApplication::processEvents();
        lines->canvas()->grab();
        const int all = lines->canvas()->linesDrawn();
        QVERIFY(all > 0);
        doc->setHead(0);
        QCOMPARE(lines->enabledHeads()[0], true);
        QCOMPARE(lines->enabledHeads()[1], false);
        // Numbered from 0 like every other head label (issue 38: the toggles said 1–4).
        QCOMPARE(lines->findChild<QToolButton*>(QStringLiteral("headToggle0"))->text(), QStringLiteral("0"));
        lines->canvas()->grab();
        QVERIFY(lines->canvas()->linesDrawn() < all);
        maybeScreenshot(&page, "translate-lines");

        // Embeddings: [S, d_model] maps whose sum is tokens + positions.
        page.showView(TranslatePage::View::Embeddings);
        EmbeddingsView* emb = page.embeddingsView();
        QCOMPARE(emb->view(EmbeddingsView::Tokens)->rows(), S);
        QCOMPARE(emb->view(EmbeddingsView::Sum)->columns(),
                 static_cast<int>(doc->model().model->config().dModel));
        QCOMPARE(emb->view(EmbeddingsView::Sum)->value(1, 3),
                 emb->view(EmbeddingsView::Tokens)->value(1, 3) +
                     emb->view(EmbeddingsView::Positions)->value(1, 3));
    }

    void beamTreeAndNodeSelection() {
        TranslatePage page(nullptr, false);
        page.resize(1300, 850);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Guten Morgen!"), 3));
        TranslationDocument* doc = page.document();
        const auto snap = doc->snapshot();
        QCOMPARE(snap->numBeams, 3);
        page.showView(TranslatePage::View::Beam); // hidden views rebuild lazily when shown
        BeamTreeCanvas* tree = page.beamView()->canvas();
        QCOMPARE(tree->items().size(), snap->nodes.size());
        QVERIFY(snap->nodes.size() > snap->best->targetIds.size() + 1); // alternatives were kept
        // A node off the best path: its hypothesis becomes the shown one.
        int other = -1;
        for (const BeamTreeItem& it : tree->items())
            if (!it.best && it.depth >= 2) other = it.id;
        QVERIFY(other > 0);
        // The tree opens fitted to the pane (never above 100 %); boxes are clicked where they are drawn.
        QVERIFY(page.beamView()->fitMode());
        QVERIFY(tree->zoom() <= 1.0);
        QVERIFY(tree->width() <= page.beamView()->width());
        const QRect box = tree->nodeRect(other); // items are in node-id order
        QTest::mouseClick(tree, Qt::LeftButton, {}, box.center());
        QCOMPARE(doc->selectedBeamNode(), other);
        const int depth = snap->nodes[static_cast<size_t>(other)].depth;
        QCOMPARE(static_cast<int>(doc->trace()->targetIds.size()), depth);
        doc->setKind(AttentionKind::Cross);
        QCOMPARE(page.matrixView()->heatmap()->rows(), depth);
        // The node's last cross-attention row is the one captured when it was produced.
        const auto& node = snap->nodes[static_cast<size_t>(other)];
        const RowMatrix mean = layerAttention(doc->trace()->crossAttention, 0, {-1, HeadFusion::Mean});
        Eigen::VectorXf direct = Eigen::VectorXf::Zero(node.crossAttention.dim(2));
        for (int h = 0; h < node.crossAttention.dim(1); ++h)
            direct += node.crossAttention.slice2d({0}).row(h).transpose();
        direct /= float(node.crossAttention.dim(1));
        for (int s = 0; s < direct.size(); ++s)
            QVERIFY(std::abs(mean(depth - 1, s) - direct(s)) < 1e-5f);
        maybeScreenshot(&page, "translate-beam");
        QTest::mouseClick(tree, Qt::LeftButton, {}, tree->nodeRect(0).center());
        QCOMPARE(doc->selectedBeamNode(), -1);
        // Zoom: Ctrl+wheel and the buttons leave the fit; Fit returns to it.
        const double fitted = tree->zoom();
        QWheelEvent wheel(QPointF(10, 10), tree->mapToGlobal(QPointF(10, 10)), QPoint(), QPoint(0, 120),
                          Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(tree, &wheel);
        QVERIFY(tree->zoom() > fitted);
        QVERIFY(!page.beamView()->fitMode());
        page.beamView()->findChild<QToolButton*>(QStringLiteral("zoomFit"))->click();
        QVERIFY(page.beamView()->fitMode());
        QCOMPARE(tree->zoom(), fitted);
    }

    void exportsWriteValidFiles() {
        TranslatePage page(nullptr, false);
        page.resize(1300, 850);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Wie geht es dir?")));
        TranslationDocument* doc = page.document();
        doc->setKind(AttentionKind::Cross);
        doc->setLayer(1);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto trace = doc->trace();
        const int T = static_cast<int>(trace->targetIds.size()),
                  S = static_cast<int>(trace->sourceIds.size());

        page.exportData(dir.filePath("a.json"));
        const Json j = readJsonFile(dir.filePath("a.json").toStdString());
        QCOMPARE(j["translation"].get<std::string>(), trace->translation);
        QCOMPARE(j["selection"]["kind"].get<std::string>(), std::string("cross"));
        QCOMPARE(j["selection"]["layer"].get<int>(), 1);
        const auto shape = j["tensors"]["cross"]["shape"].get<std::vector<int64_t>>();
        QCOMPARE(shape, trace->crossAttention.shape());
        QCOMPARE(j["tensors"]["cross"]["data"].size(), static_cast<size_t>(trace->crossAttention.numel()));
        QCOMPARE(j["matrix"]["values"].size(), static_cast<size_t>(T));
        QCOMPARE(j["tensors"]["encoder_self"]["shape"][2].get<int>(), S);
        // attnlens-cli diff reads the page's export: the view as shown, or one matrix of its tensors.
        {
            QProcess diff;
            diff.start(
                QStringLiteral(ATTNLENS_CLI_PATH),
                {"diff", dir.filePath("a.json"), dir.filePath("a.json"), "--json", dir.filePath("d.json")});
            QVERIFY(diff.waitForFinished(attnlens::test::kHangMs) && diff.exitCode() == 0);
            const Json d = readJsonFile(dir.filePath("d.json").toStdString());
            QCOMPARE(d["max_abs_diff"].get<double>(), 0.0);
            QCOMPARE(d["rows"].size(), static_cast<size_t>(T));
            diff.start(QStringLiteral(ATTNLENS_CLI_PATH),
                       {"diff", dir.filePath("a.json"), dir.filePath("a.json"), "--kind", "decoder", "--head",
                        "0", "--json", dir.filePath("d.json")});
            QVERIFY2(diff.waitForFinished(attnlens::test::kHangMs) && diff.exitCode() == 0,
                     diff.readAllStandardError().constData());
            QCOMPARE(readJsonFile(dir.filePath("d.json").toStdString())["columns"].size(),
                     static_cast<size_t>(T));
        }

        page.exportData(dir.filePath("a.npy"));
        QFile npy(dir.filePath("a.npy"));
        QVERIFY(npy.open(QIODevice::ReadOnly));
        const QByteArray bytes = npy.readAll();
        QVERIFY(bytes.startsWith("\x93NUMPY"));
        const QByteArray header = bytes.mid(10, 200);
        QVERIFY(header.contains("'descr': '<f4'"));
        const QString shapeText = QStringLiteral("(%1, %2, %3, %4)")
                                      .arg(trace->crossAttention.dim(0))
                                      .arg(trace->crossAttention.dim(1))
                                      .arg(T)
                                      .arg(S);
        QVERIFY2(header.contains(shapeText.toLatin1()), header.constData());
        const int headerLen =
            static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
        QCOMPARE(bytes.size() - 10 - headerLen, static_cast<qsizetype>(trace->crossAttention.numel() * 4));

        page.exportData(dir.filePath("a.csv"));
        QFile csv(dir.filePath("a.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), T + 1);
        const AttentionMatrix m = doc->currentMatrix();
        QStringList firstRow = lines[1].split(',');
        QCOMPARE(firstRow.size(), S + 1);
        QVERIFY(std::abs(firstRow[1].toFloat() - m.values(0, 0)) < 1e-6f);

        for (auto view : {TranslatePage::View::Matrix, TranslatePage::View::Model, TranslatePage::View::Lines,
                          TranslatePage::View::Embeddings, TranslatePage::View::Beam}) {
            page.showView(view);
            QApplication::processEvents();
            const QString base = dir.filePath(QStringLiteral("view%1").arg(static_cast<int>(view)));
            page.exportView(base + ".png");
            QImage img(base + ".png");
            QVERIFY(!img.isNull());
            QVERIFY(img.width() > 50 && img.height() > 20);
            page.exportView(base + ".svg");
            QFile svg(base + ".svg");
            QVERIFY(svg.open(QIODevice::ReadOnly));
            QVERIFY(svg.readAll().contains("<svg"));
        }
        QVERIFY_THROWS_EXCEPTION(attnlens::Error, page.exportData(dir.filePath("a.txt")));
    }

    void shortcutsAndPlay() {
        TranslatePage page(nullptr, false);
        page.resize(1200, 800);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Wie geht es dir?")));
        page.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&page));
        TranslationDocument* doc = page.document();
        const int full = doc->snapshot()->step;
        QVERIFY(act(page, [&] { QTest::keyClick(&page, Qt::Key_Left, Qt::AltModifier); }));
        QCOMPARE(doc->snapshot()->step, full - 1);
        QVERIFY(act(page, [&] { QTest::keyClick(&page, Qt::Key_BracketLeft, Qt::ControlModifier); }));
        QCOMPARE(doc->snapshot()->step, full - 2);
        QVERIFY(act(page, [&] { QTest::keyClick(&page, Qt::Key_Right, Qt::AltModifier); }));
        QCOMPARE(doc->snapshot()->step, full - 1);
        // Play from the finished state starts again at step 0 and advances on its timer until the end.
        QVERIFY(act(page, [&] { page.stepForward(); }));
        QVERIFY(doc->snapshot()->finished);
        page.setPlaying(true);
        QVERIFY(page.isPlaying());
        WAIT_UNTIL(doc->snapshot()->step >= 2 && doc->snapshot()->step < full);
        page.setPlaying(false);
        QVERIFY(!page.isPlaying());
        const int paused = doc->snapshot()->step;
        QTest::qWait(1200);
        QVERIFY(doc->snapshot()->step <= paused + 1); // at most the step already queued
    }

    // `attnlens-cli translate --heatmap` draws the matrix the page shows with the page's own drawing code:
    // its PNG is the page's heatmap scene (interaction state cleared) rendered at the same cell size.
    void cliHeatmapIsThePagesHeatmap() {
        TranslatePage page(nullptr, false);
        page.resize(1200, 800);
        page.show();
        const QString sentence = QStringLiteral("Der Hund schläft im Garten.");
        page.setMaxNewTokens(24);
        QVERIFY(loadAndTranslate(page, sentence));
        TranslationDocument* doc = page.document();
        const int layer = doc->layerCount(AttentionKind::Cross) - 1;
        doc->setKind(AttentionKind::Cross);
        doc->setLayer(layer);
        doc->setHead(1);
        HeatmapScene scene = page.matrixView()->heatmap()->scene();
        scene.selectedRow = scene.selectedColumn = -1;
        scene.hovered = scene.marked = {};
        scene.dimUnselected = false;
        QTemporaryDir tmp;
        const QString png = tmp.filePath(QStringLiteral("cross.png"));
        QProcess cli;
        cli.start(QStringLiteral(ATTNLENS_CLI_PATH),
                  {"translate", "--model", modelDir(), "--max-new-tokens", "24", "--heatmap", png, "--kind",
                   "cross", "--layer", QString::number(layer), "--head", "1", "--cell", "14", sentence});
        QVERIFY(cli.waitForFinished(attnlens::test::kHangMs));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        QCOMPARE(QString::fromUtf8(cli.readAllStandardOutput()).trimmed(),
                 QString::fromStdString(doc->trace()->translation));
        const QImage fromCli(png);
        const QImage expected =
            renderHeatmap(scene, defaultHeatmapStyle(), 14).convertToFormat(fromCli.format());
        QCOMPARE(fromCli.size(), expected.size());
        QCOMPARE(fromCli, expected);
        maybeScreenshot(page.matrixView(), QStringLiteral("cli-heatmap-source"));
    }

    // The Heads tab: the statistics of the shown kind equal core's on the same trace; the grid follows the
    // chosen statistic; the table sorts; clicking a head opens it in the Matrix view.
    void headsLensShowsStatisticsAndOpensHeads() {
        TranslatePage page(nullptr, false);
        QVERIFY(showCrossAttentionHeads(page));
        HeadsLensView* lens = page.headsView();
        QVERIFY(lens->hasStats());
        const auto trace = page.document()->trace();
        const HeadStats expected = captureHeadStats(
            translationCapture(*trace, decoderStartPiece(page.document()->model())), AttentionKind::Cross);
        QCOMPARE(lens->stats().layers(), expected.layers());
        QCOMPARE(lens->stats().entropy, expected.entropy);
        QVERIFY(lens->caption().startsWith("Cross-attention"));
        QCOMPARE(lens->grid()->rows(), expected.layers());
        QCOMPARE(lens->grid()->columns(), expected.heads());
        lens->setStatistic(HeadStatistic::Sink);
        QCOMPARE(lens->grid()->scene().values, expected.sink);
        // Cross-attention has no diagonal: the table leaves the column out.
        QTableWidget* table = lens->table();
        QCOMPARE(table->rowCount(), expected.layers() * expected.heads());
        for (int c = 0; c < table->columnCount(); ++c)
            QVERIFY(table->horizontalHeaderItem(c)->text() != "diagonal");
        // Sort by entropy, ascending: the first row holds the most focused head.
        int entropyColumn = -1;
        for (int c = 0; c < table->columnCount(); ++c)
            if (table->horizontalHeaderItem(c)->text() == "entropy") entropyColumn = c;
        QVERIFY(entropyColumn > 1);
        table->sortItems(entropyColumn, Qt::AscendingOrder);
        QCOMPARE(table->item(0, entropyColumn)->data(Qt::UserRole).toDouble(),
                 double(expected.entropy.minCoeff()));
        // The encoder kind switches the statistics (and has a diagonal).
        page.document()->setKind(AttentionKind::EncoderSelf);
        QVERIFY(!std::isnan(lens->stats().diagonal(0, 0)));
        // A click on the grid opens that head in the matrix.
        emit lens->grid()->cellClicked(1, 2);
        QCOMPARE(page.currentView(), TranslatePage::View::Matrix);
        QCOMPARE(page.document()->layer(), 1);
        QCOMPARE(page.document()->head(), 2);
    }

    // Ticking "off" in the Heads tab translates again without that head (its captured attention zero, the
    // output that of a DecodeSession with the same ablation), the translation line says so and, once known,
    // gives the plain translation; Rank by importance measures each head of the kind alone; Switch all on
    // goes back.
    void headAblationFromTheHeadsTab() {
        TranslatePage page(nullptr, false);
        QVERIFY(showCrossAttentionHeads(page));
        HeadsLensView* lens = page.headsView();
        QTableWidget* table = lens->table();
        const int row = lens->tableRow(1, 2);
        QVERIFY(row >= 0);
        table->item(row, 0)->setCheckState(Qt::Checked);
        QVERIFY(page.ablation().any());
        WAIT_UNTIL(page.worker()->pendingJobs() == 0 && !page.baselineTranslation().isEmpty());
        const auto trace = page.document()->trace();
        QCOMPARE(trace->crossAttention.sub({1, 2}).matrix().cwiseAbs().maxCoeff(), 0.0f);
        const MarianFolder& folder = page.document()->model();
        DecodeOptions options;
        options.numBeams = 1;
        options.maxNewTokens = page.document()->snapshot()->maxNewTokens;
        options.ablation = page.ablation();
        DecodeSession direct(folder.model, folder.tokenizer, trace->source, options);
        direct.run();
        QCOMPARE(trace->targetIds, direct.trace()->targetIds);
        const QString line = page.findChild<QLabel*>("translation")->text();
        QVERIFY2(line.contains("1 head off") && line.contains("with all heads"), qPrintable(line));
        WAIT_UNTIL(page.findChild<QLabel*>("translation")->text().contains("p(<b>"));
        QVERIFY2(page.ablationDetails().contains("top 5 with all heads") &&
                     page.ablationDetails().contains("top 5 with the heads off"),
                 qPrintable(page.ablationDetails()));
        QCOMPARE(lens->ablated(), (std::vector<std::pair<int, int>>{{1, 2}}));

        page.findChild<QPushButton*>("headsRank")->click();
        WAIT_UNTIL(page.worker()->pendingJobs() == 0 && lens->hasImportance());
        QVERIFY(lens->showingImportance());
        const RowMatrix drop = lens->grid()->scene().values;
        QCOMPARE(drop.rows(), Eigen::Index(folder.model->config().decoderLayers));
        QVERIFY(drop.allFinite() && drop.cwiseAbs().maxCoeff() > 0);
        maybeScreenshot(&page, QStringLiteral("translate-ablation"));

        page.findChild<QPushButton*>("headsAllOn")->click();
        WAIT_UNTIL(page.worker()->pendingJobs() == 0 && !page.ablation().any());
        QVERIFY(!page.findChild<QLabel*>("translation")->text().contains("head off"));
        QVERIFY(page.document()->trace()->crossAttention.sub({1, 2}).matrix().cwiseAbs().maxCoeff() > 0);
    }

    // The neuron view from a matrix cell (word level on: the displayed cell maps to its first pieces): the
    // window shows that layer, head, query and key; its weight equals the captured attention; other heads,
    // layers and kinds recompute; a new translation keeps the positions.
    void neuronViewTakesOneScoreApart() {
        TranslatePage page(nullptr, false);
        page.resize(1280, 800);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Das Haus ist sehr groß und alt.")));
        TranslationDocument* doc = page.document();
        doc->setKind(AttentionKind::Cross);
        doc->setLayer(1);
        doc->setHead(2);
        page.showView(TranslatePage::View::Matrix);
        page.showNeuronView(1, 3);
        NeuronDialog* dialog = page.neuronDialog();
        QVERIFY(dialog);
        WAIT_UNTIL(dialog->terms().has_value());
        const AttentionMatrix m = doc->currentMatrix();
        QCOMPARE(dialog->layer(), 1);
        QCOMPARE(dialog->head(), 2);
        QCOMPARE(dialog->query(), m.rowFirstPiece[1]);
        QCOMPARE(dialog->key(), m.columnFirstPiece[3]);
        const auto trace = doc->trace();
        const float captured = trace->crossAttention.at({1, 2, dialog->query(), dialog->key()});
        QVERIFY(std::abs(dialog->terms()->weight - captured) < 1e-5);
        QCOMPARE(*dialog->capturedWeight(), captured);
        QVERIFY(dialog->caption().contains("cross-attention"));
        QCOMPARE(dialog->findChild<QTableWidget*>("neuronTable")->rowCount(), dialog->terms()->headDim);
        // Another head of the same layer: no new job; the strongest key is the row's argmax.
        dialog->findChild<QSpinBox*>("neuronHead")->setValue(0);
        QVERIFY(dialog->terms().has_value());
        dialog->findChild<QPushButton*>("neuronArgmax")->click();
        Eigen::Index best = 0;
        trace->crossAttention.slice2d({1, 0}).row(dialog->query()).maxCoeff(&best);
        QCOMPARE(dialog->key(), int(best));
        // Layer 0 is computed on the worker.
        dialog->findChild<QComboBox*>("neuronLayer")->setCurrentIndex(0);
        WAIT_UNTIL(dialog->terms().has_value());
        QVERIFY(std::abs(dialog->terms()->weight -
                         trace->crossAttention.at({0, 0, dialog->query(), dialog->key()})) < 1e-5);
        maybeScreenshot(dialog, QStringLiteral("translate-neuron"));
        // The encoder kind: the window follows.
        doc->setKind(AttentionKind::EncoderSelf);
        WAIT_UNTIL(dialog->terms().has_value() && dialog->caption().contains("encoder"));
        QVERIFY(std::abs(dialog->terms()->weight -
                         trace->encoderAttention.at(
                             {dialog->layer(), dialog->head(), dialog->query(), dialog->key()})) < 1e-5);
    }

    // Encoder attention through layers: the head box offers rollout and flow for the encoder only; rollout is
    // core's attentionRollout, flow arrives from the worker and each row is core's attentionFlow; a head goes
    // back to one layer.
    void encoderRolloutAndFlow() {
        TranslatePage page(nullptr, false);
        page.resize(1280, 800);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Das Haus ist sehr groß und alt.")));
        TranslationDocument* doc = page.document();
        auto* head = page.findChild<HeadCombo*>("head");
        QVERIFY(head);
        doc->setKind(AttentionKind::Cross);
        QCOMPARE(head->findText(QStringLiteral("Flow, layers 0…L")), -1); // not for cross-attention
        doc->setKind(AttentionKind::EncoderSelf);
        doc->setLayer(1);
        page.showView(TranslatePage::View::Matrix);
        const Tensor t = doc->attentionTensor(AttentionKind::EncoderSelf);
        head->setCurrentIndex(head->findText(QStringLiteral("Rollout, layers 0…L"))); // as a user picks it
        QVERIFY(doc->showsThrough());
        RolloutOptions ro;
        ro.lastLayer = 1;
        QVERIFY((doc->currentMatrix().values - attentionRollout(t, ro)).cwiseAbs().maxCoeff() < 1e-6);
        QVERIFY(page.matrixView()->title().contains("rollout through layers 0–1"));
        head->setCurrentIndex(head->findText(QStringLiteral("Flow, layers 0…L")));
        WAIT_UNTIL(!doc->flowPending() && !doc->currentMatrix().empty());
        const RowMatrix flow = doc->currentMatrix().values;
        FlowOptions fo;
        fo.lastLayer = 1;
        for (int q = 0; q < flow.rows(); ++q) {
            const std::vector<float> row = attentionFlow(t, q, fo);
            for (int k = 0; k < flow.cols(); ++k)
                QVERIFY(std::abs(flow(q, k) - row[size_t(k)]) < 1e-6);
        }
        QVERIFY(page.matrixView()->title().contains("attention flow"));
        maybeScreenshot(&page, QStringLiteral("translate-flow"));
        head->setCurrentIndex(head->findText(QStringLiteral("Head 2")));
        QVERIFY(!doc->showsThrough());
        QCOMPARE(doc->currentMatrix().values, RowMatrix(t.slice2d({1, 2})));
    }

    // Difference maps: pin the cross-attention of one sentence as A, translate a sentence with one more word:
    // the Difference tab shows A, B and A − B matched by token ("sehr"/"very" listed), equal to core's
    // diffAttention; another layer updates B; Unpin clears.
    void differenceOfTwoSentences() {
        TranslatePage page(nullptr, false);
        page.resize(1280, 800);
        page.show();
        QVERIFY(loadAndTranslate(page, QStringLiteral("Das Haus ist klein.")));
        TranslationDocument* doc = page.document();
        doc->setKind(AttentionKind::Cross);
        doc->setLayer(2);
        const AttentionMatrix a = doc->currentMatrix();
        page.findChild<QPushButton*>("pinDifference")->click();
        QVERIFY(page.hasPin());
        QCOMPARE(page.currentView(), TranslatePage::View::Difference);
        QVERIFY(act(page, [&] {
            page.setInput(QStringLiteral("Das Haus ist sehr klein."));
            page.translate();
        }));
        DifferenceView* view = page.differenceView();
        WAIT_UNTIL(view->hasDifference() && view->summary().contains("sehr"));
        const AttentionMatrix b = doc->currentMatrix();
        const auto toStd = [](const QStringList& l) {
            std::vector<std::string> out;
            for (const QString& x : l)
                out.push_back(x.toStdString());
            return out;
        };
        const AttentionDiff d = diffAttention({a.values, toStd(a.rowLabels), toStd(a.columnLabels)},
                                              {b.values, toStd(b.rowLabels), toStd(b.columnLabels)});
        QCOMPARE(view->viewDelta()->scene().values, d.diff);
        QVERIFY(view->summary().contains("matched by token"));
        maybeScreenshot(&page, QStringLiteral("translate-difference"));
        doc->setLayer(0);
        QVERIFY(view->viewB()->scene().values != d.b);
        page.findChild<QPushButton*>("unpinDifference")->click();
        QVERIFY(!page.hasPin() && !view->hasDifference());
    }

    void errorsKeepInput() {
        TranslatePage page(nullptr, false);
        page.show();
        // No model: a clear message, nothing crashes.
        page.setInput(QStringLiteral("Hallo"));
        page.translate();
        QVERIFY(page.message().contains(QStringLiteral("No model")));
        QVERIFY(loadAndTranslate(page, QStringLiteral("Hallo")));
        // An input longer than max_position_embeddings fails on the worker; the text stays.
        QStringList words;
        for (int i = 0; i < 1500; ++i)
            words << QStringLiteral("Haus");
        const QString longText = words.join(' ');
        page.setInput(longText);
        QSignalSpy failed(&page, &TranslatePage::failed);
        page.translate();
        WAIT_UNTIL(failed.count() > 0);
        QVERIFY(page.message().contains(QStringLiteral("too long")));
        QCOMPARE(page.input(), longText);
        QVERIFY(page.document()->snapshot() != nullptr); // the previous result is still shown
    }
};

QTEST_MAIN(TestTranslatePage)
#include "test_translate_page.moc"
