// The attention playground, offscreen: the model against an independent double-precision
// computation, and the page reacting to the user — mask changes reach the weights view (values and
// drawn colours), heads split d_model, editing Q changes the scores, clicking the mask grid toggles a
// cell.
//
// Set ATTNLENS_SCREENSHOT_DIR to also write PNGs of the page in the states tested (for review).

#include "ui/playground/explanation.h"
#include "ui/playground/head_strip.h"
#include "ui/playground/matrix_editor.h"
#include "ui/playground/matrix_table_model.h"
#include "ui/playground/multi_head_panel.h"
#include "ui/playground/playground_model.h"
#include "ui/playground/playground_page.h"
#include "ui/playground/stage_panel.h"
#include "ui/render/heatmap_image.h"
#include "ui/widgets/heatmap_view.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

#include <cmath>

using attnlens::ColorMap;
using attnlens::RowMatrix;
using attnlens::ui::HeatmapView;
using attnlens::ui::MatrixEditor;
using attnlens::ui::MultiHeadPanel;
using attnlens::ui::PlaygroundModel;
using attnlens::ui::PlaygroundPage;
using attnlens::ui::withMinusSign;
using Stage = PlaygroundModel::Stage;
using Input = PlaygroundModel::Input;
using MaskMode = PlaygroundModel::MaskMode;

namespace {

// Independent reference: softmax(Q_h K_hᵀ / √d_k + mask) in double, one head.
Eigen::MatrixXd referenceWeights(const PlaygroundModel& m, int head) {
    const int n = m.sequenceLength(), dk = m.dK();
    const RowMatrix& q = m.input(Input::Query);
    const RowMatrix& k = m.input(Input::Key);
    const RowMatrix keep = m.effectiveMask();
    Eigen::MatrixXd w(n, n);
    for (int i = 0; i < n; ++i) {
        std::vector<double> s(static_cast<size_t>(n));
        double maxValue = -1e300;
        for (int j = 0; j < n; ++j) {
            double dot = 0.0;
            for (int c = head * dk; c < (head + 1) * dk; ++c)
                dot += double(q(i, c)) * double(k(j, c));
            s[j] = keep(i, j) == 0.0f ? -1e9 : dot / std::sqrt(double(dk));
            maxValue = std::max(maxValue, s[j]);
        }
        double sum = 0.0;
        for (int j = 0; j < n; ++j)
            sum += std::exp(s[j] - maxValue);
        for (int j = 0; j < n; ++j)
            w(i, j) = std::exp(s[j] - maxValue) / sum;
    }
    return w;
}

void choose(QComboBox* combo, const QVariant& data) {
    const int index = combo->findData(data);
    QVERIFY2(index >= 0, qPrintable(data.toString()));
    combo->setCurrentIndex(index);
    emit combo->activated(index); // what a user's choice emits
}

void saveShot(QWidget* w, const char* name) {
    const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR");
    if (!dir.isEmpty()) w->grab().save(QString::fromLocal8Bit(dir) + "/" + name + ".png");
}

QPoint quietPixel(const QRect& cell) {
    return cell.topLeft() + QPoint(cell.width() / 5 + 1, cell.height() / 5 + 1);
}

} // namespace

class TestPlayground : public QObject {
    Q_OBJECT
private slots:
    void modelMatchesReference_data() {
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("mask");
        QTest::newRow("1 head, no mask") << 1 << int(MaskMode::None);
        QTest::newRow("1 head, causal") << 1 << int(MaskMode::Causal);
        QTest::newRow("2 heads, padding") << 2 << int(MaskMode::Padding);
        QTest::newRow("3 heads, causal (d_k 2)") << 3 << int(MaskMode::Causal);
    }
    void modelMatchesReference() {
        QFETCH(int, heads);
        QFETCH(int, mask);
        PlaygroundModel m;
        m.setSequenceLength(5);
        m.setDModel(6);
        m.applyRandom(11);
        QVERIFY(m.setHeads(heads));
        m.setMaskMode(static_cast<MaskMode>(mask));
        m.setPaddingCount(2);
        QCOMPARE(m.result().weights.shape(), (attnlens::Shape{heads, 5, 5}));
        for (int h = 0; h < heads; ++h) {
            const RowMatrix w = m.stage(Stage::Weights, h);
            const Eigen::MatrixXd ref = referenceWeights(m, h);
            QCOMPARE(w.rows(), 5);
            for (int i = 0; i < 5; ++i) {
                QVERIFY(std::abs(w.row(i).sum() - 1.0f) < 1e-6f);
                for (int j = 0; j < 5; ++j)
                    QVERIFY2(std::abs(w(i, j) - ref(i, j)) < 1e-6,
                             qPrintable(QString("%1 %2").arg(i).arg(j)));
            }
            QCOMPARE(m.stage(Stage::Output, h).cols(), 6 / heads);
        }
        QCOMPARE(m.output().cols(), 6);
    }

    void workedExample() {
        PlaygroundModel m;
        QCOMPARE(m.tokens(), (QStringList{"Wie", "geht", "es", "dir"}));
        QCOMPARE(m.sequenceLength(), 4);
        QCOMPARE(m.dModel(), 4);
        QCOMPARE(m.heads(), 1);
        // The example is built so that "geht" looks at its subject "es" most.
        const RowMatrix w = m.stage(Stage::Weights, 0);
        Eigen::Index best = 0;
        w.row(1).maxCoeff(&best);
        QCOMPARE(int(best), 2);
        QCOMPARE(m.stage(Stage::Scores, 0)(1, 2), 2.0f); // q_geht · k_es = 2·1
        QCOMPARE(m.stage(Stage::Scaled, 0)(1, 2), 1.0f); // ÷ √4
        const QString text = attnlens::ui::explainFocus(m);
        QVERIFY2(text.contains("geht") && text.contains("es") &&
                     text.contains(attnlens::ui::formatNumber(w(1, 2))),
                 qPrintable(text));
    }

    void headsMustDivideDModel() {
        // (d_v follows the worked example's 4 here; valueWidthIsIndependent changes it.)
        PlaygroundModel m;
        QCOMPARE(PlaygroundModel::validHeadCounts(4), (QList<int>{1, 2, 4}));
        QCOMPARE(PlaygroundModel::validHeadCounts(6), (QList<int>{1, 2, 3, 6}));
        QVERIFY(!m.setHeads(3));
        QCOMPARE(m.heads(), 1);
        QVERIFY(m.setHeads(4));
        QCOMPARE(m.dK(), 1);
        // A new d_model keeps the largest valid head count not above the current one.
        m.setDModel(6);
        QCOMPARE(m.heads(), 3);
        m.setDModel(5);
        QCOMPARE(m.heads(), 1);
    }

    // V has its own width d_v: the output follows it, the heads divide both widths, V's editor has d_v
    // columns, and the numbers are the reference's (the core function with d_v != d_k).
    void valueWidthIsIndependent() {
        PlaygroundModel m;
        m.setDValue(6);
        QCOMPARE(m.dValue(), 6);
        QCOMPARE(m.input(Input::Value).cols(), 6);
        QCOMPARE(m.input(Input::Query).cols(), 4);
        QCOMPARE(m.output().cols(), 6);
        QCOMPARE(PlaygroundModel::validHeadCounts(4, 6), (QList<int>{1, 2}));
        QVERIFY(!m.setHeads(4)); // divides d_model = 4, not d_v = 6
        QVERIFY(m.setHeads(2));
        QCOMPARE(m.dK(), 2);
        QCOMPARE(m.dV(), 3);
        QCOMPARE(m.stage(Stage::Output, 1).cols(), 3);
        const auto ref = attnlens::multiHeadAttention(attnlens::Tensor::fromMatrix(m.input(Input::Query)),
                                                      attnlens::Tensor::fromMatrix(m.input(Input::Key)),
                                                      attnlens::Tensor::fromMatrix(m.input(Input::Value)),
                                                      nullptr, 2, false);
        QCOMPARE(m.output(), RowMatrix(ref.output.matrix()));
        m.setDValue(3); // 2 heads do not divide 3: the largest common divisor below is kept
        QCOMPARE(m.heads(), 1);

        PlaygroundPage page;
        page.resize(1150, 780);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto* dValue = page.findChild<QSpinBox*>("dValue");
        QVERIFY(dValue);
        dValue->setValue(8);
        QCOMPARE(page.model()->dValue(), 8);
        QCOMPARE(page.stageView(Stage::Output)->columns(), 8);
        QCOMPARE(page.findChild<QComboBox*>("heads")->count(), 3); // 1, 2, 4 divide both 4 and 8
        QApplication::processEvents();
        saveShot(&page, "playground_dv");
    }

    void randomPresetIsReproducible() {
        PlaygroundModel a, b;
        a.applyRandom(7);
        b.applyRandom(7);
        QCOMPARE(a.input(Input::Key), b.input(Input::Key));
        b.applyRandom(8);
        QVERIFY(a.input(Input::Key) != b.input(Input::Key));
        // Growing keeps the existing values.
        const RowMatrix before = a.input(Input::Query);
        a.setSequenceLength(6);
        QCOMPARE(RowMatrix(a.input(Input::Query).topRows(4)), before);
        QCOMPARE(a.tokens().size(), 6);
        QCOMPARE(a.tokens().at(5), QStringLiteral("t6"));
        // Shrinking and growing again gives back the same values (nothing is thrown away).
        const RowMatrix six = a.input(Input::Value);
        a.setSequenceLength(1);
        a.setDModel(2);
        QCOMPARE(a.input(Input::Value).rows(), 1);
        a.setDModel(4);
        a.setSequenceLength(6);
        QCOMPARE(a.input(Input::Value), six);
    }

    void fullyMaskedRowIsUniform() {
        PlaygroundModel m;
        RowMatrix keep = RowMatrix::Ones(4, 4);
        keep.row(2).setZero();
        m.setCustomMask(keep);
        QCOMPARE(m.maskMode(), MaskMode::Custom);
        QCOMPARE(m.fullyMaskedRows(), QList<int>{2});
        const RowMatrix w = m.stage(Stage::Weights, 0);
        for (int j = 0; j < 4; ++j)
            QVERIFY(std::abs(w(2, j) - 0.25f) < 1e-6f); // as PyTorch does
    }

    void tableModelIsSane() {
        PlaygroundModel m;
        attnlens::ui::MatrixTableModel table(&m, Input::Query);
        QAbstractItemModelTester tester(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table.rowCount(), 4);
        QCOMPARE(table.headerData(1, Qt::Vertical).toString(), QStringLiteral("geht"));
        QVERIFY(table.setData(table.index(0, 1), 1.5));
        QCOMPARE(m.inputValue(Input::Query, 0, 1), 1.5f);
        m.setSequenceLength(6); // shape change → reset, checked by the tester
        m.setDModel(2);
        QCOMPARE(table.rowCount(), 6);
        QCOMPARE(table.columnCount(), 2);
        QVERIFY(!table.setData(table.index(0, 0), QStringLiteral("not a number")));
    }

    // --- the page ------------------------------------------------------------------------------

    void maskChangeUpdatesWeightsView() {
        PlaygroundPage page;
        page.resize(1150, 780);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        HeatmapView* weights = page.stageView(Stage::Weights);
        QVERIFY(!weights->hasMask());
        QVERIFY(weights->matrix()(0, 3) > 0.05f); // no mask: Wie sees dir

        auto* maskMode = page.findChild<QComboBox*>("maskMode");
        QVERIFY(maskMode);
        choose(maskMode, int(MaskMode::Causal));
        QCOMPARE(page.model()->maskMode(), MaskMode::Causal);
        QApplication::processEvents();
        saveShot(&page, "playground_causal");

        const RowMatrix& w = weights->matrix();
        QCOMPARE(w.rows(), 4);
        for (int i = 0; i < 4; ++i) {
            QVERIFY(std::abs(w.row(i).sum() - 1.0f) < 1e-6f);
            for (int j = i + 1; j < 4; ++j) {
                QCOMPARE(w(i, j), 0.0f); // exp(−1e9 − max) underflows to exactly 0
                QVERIFY(weights->isMasked(i, j));
                QCOMPARE(QColor(weights->image().pixel(j, i)), HeatmapView::maskedColor());
            }
        }
        QCOMPARE(w(0, 0), 1.0f); // the first token can only see itself
        // Drawn colours: the cell (Wie, Wie) = 1 is the top of viridis; (es, Wie) has its own weight.
        const QImage shot = weights->viewport()->grab().toImage();
        QCOMPARE(QColor(shot.pixel(quietPixel(weights->cellRect(0, 0)))), QColor(253, 231, 37));
        QCOMPARE(QColor(shot.pixel(quietPixel(weights->cellRect(3, 0)))),
                 attnlens::ui::colorFor(ColorMap::Viridis, w(3, 0)));
        // The masked stage shows −∞ where the weights are 0, and the formula says so.
        QVERIFY(page.stageView(Stage::Masked)->isMasked(0, 1));
        QCOMPARE(page.stageView(Stage::Masked)->matrix()(0, 1), attnlens::kPlaygroundMaskValue);
        QVERIFY(page.stagePanel(Stage::Masked)->formula().contains(QString::fromUtf8("−∞")));
        // The mask grid shows the causal triangle.
        QCOMPARE(page.maskView()->matrix()(0, 1), 0.0f);
        QCOMPARE(page.maskView()->matrix()(1, 0), 1.0f);

        // Colour map and range switches reach the view.
        auto* colors = page.findChild<QComboBox*>("colorMap");
        choose(colors, int(ColorMap::Magma));
        QCOMPARE(weights->colorMap(), ColorMap::Magma);
        const QImage magma = weights->viewport()->grab().toImage();
        QCOMPARE(QColor(magma.pixel(quietPixel(weights->cellRect(0, 0)))), QColor(252, 253, 191));
        page.findChild<QCheckBox*>("weightsAutoRange")->setChecked(true);
        QCOMPARE(weights->rangeMode(), HeatmapView::RangeMode::Auto);

        // Back to no mask: the zeros are gone.
        choose(maskMode, int(MaskMode::None));
        QVERIFY(weights->matrix()(0, 3) > 0.05f);
        QVERIFY(!weights->hasMask());
    }

    void paddingMask() {
        PlaygroundPage page;
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        choose(page.findChild<QComboBox*>("maskMode"), int(MaskMode::Padding));
        page.findChild<QSpinBox*>("paddingCount")->setValue(2);
        QCOMPARE(page.model()->paddingCount(), 2);
        const RowMatrix& w = page.stageView(Stage::Weights)->matrix();
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(w(i, 2), 0.0f);
            QCOMPARE(w(i, 3), 0.0f);
            QVERIFY(std::abs(w(i, 0) + w(i, 1) - 1.0f) < 1e-6f);
        }
    }

    void clickingTheMaskGridToggles() {
        PlaygroundPage page;
        page.resize(1150, 780);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        HeatmapView* grid = page.maskView();
        QTest::mouseClick(grid->viewport(), Qt::LeftButton, {}, grid->cellRect(1, 3).center());
        QCOMPARE(page.model()->maskMode(), MaskMode::Custom);
        QCOMPARE(page.model()->effectiveMask()(1, 3), 0.0f);
        QCOMPARE(page.stageView(Stage::Weights)->matrix()(1, 3), 0.0f);
        QCOMPARE(page.findChild<QComboBox*>("maskMode")->currentData().toInt(), int(MaskMode::Custom));
        QTest::mouseClick(grid->viewport(), Qt::LeftButton, {}, grid->cellRect(1, 3).center());
        QCOMPARE(page.model()->effectiveMask()(1, 3), 1.0f);
        QVERIFY(page.stageView(Stage::Weights)->matrix()(1, 3) > 0.0f);
    }

    void changingHeads() {
        PlaygroundPage page;
        page.resize(1150, 780);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        auto* heads = page.findChild<QComboBox*>("heads");
        QVERIFY(heads);
        QCOMPARE(heads->count(), 3); // 1, 2, 4: only divisors of d_model = 4
        QVERIFY(!page.headStrip()->isVisible());
        choose(heads, 2);
        QCOMPARE(page.model()->heads(), 2);
        QCOMPARE(page.model()->dK(), 2);
        QVERIFY(page.headStrip()->isVisible());
        QCOMPARE(page.headStrip()->headCount(), 2);
        QCOMPARE(page.stageView(Stage::Output)->columns(), 2);
        QCOMPARE(page.stagePanel(Stage::Scaled)->formula().contains(QString::fromUtf8("√2")), true);
        // Head 2's panels show head 2's numbers once its thumbnail is clicked.
        HeatmapView* thumb = page.headStrip()->thumbnail(1);
        QTest::mouseClick(thumb->viewport(), Qt::LeftButton, {}, thumb->cellRect(0, 0).center());
        QCOMPARE(page.model()->selectedHead(), 1);
        QCOMPARE(page.stageView(Stage::Weights)->matrix(), page.model()->stage(Stage::Weights, 1));
        QVERIFY(page.stageView(Stage::Weights)->matrix() != page.model()->stage(Stage::Weights, 0));
        QCOMPARE(page.stageView(Stage::Output)->columnLabel(0), QStringLiteral("2")); // features 2–3
        QApplication::processEvents();
        saveShot(&page, "playground_heads");
    }

    void editingQChangesScores() {
        PlaygroundPage page;
        page.resize(1150, 780);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        HeatmapView* scores = page.stageView(Stage::Scores);
        const float before = scores->matrix()(1, 2);
        QCOMPARE(before, 2.0f);
        // Open the real editor of Q[geht, 2] and change it as a user would (the spin box commits live).
        attnlens::ui::MatrixEditor* q = page.editor(Input::Query);
        const QModelIndex index = q->model()->index(1, 2);
        q->setCurrentIndex(index);
        q->edit(index);
        auto* spin = q->findChild<QDoubleSpinBox*>();
        QVERIFY(spin);
        spin->setValue(3.0);
        QCOMPARE(page.model()->inputValue(Input::Query, 1, 2), 3.0f);
        // q_geht · k_es = 0.5·0 + 0·0.2 + 3·1 + 0·0 = 3
        QCOMPARE(scores->matrix()(1, 2), 3.0f);
        QCOMPARE(page.stageView(Stage::Scaled)->matrix()(1, 2), 1.5f);
        QVERIFY(page.stagePanel(Stage::Scores)->detail().contains("3.00"));
        QCOMPARE(page.model()->preset(), PlaygroundModel::Preset::Edited);
        // The reference agrees with what the weights view shows.
        const Eigen::MatrixXd ref = referenceWeights(*page.model(), 0);
        QVERIFY(std::abs(page.stageView(Stage::Weights)->matrix()(1, 2) - ref(1, 2)) < 1e-6);
    }

    void focusFollowsClicks() {
        PlaygroundPage page;
        page.resize(1150, 780);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        HeatmapView* weights = page.stageView(Stage::Weights);
        QTest::mouseClick(weights->viewport(), Qt::LeftButton, {}, weights->cellRect(3, 0).center());
        QCOMPARE(page.model()->focusQuery(), 3);
        QCOMPARE(page.model()->focusKey(), 0);
        for (Stage s : {Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights}) {
            QCOMPARE(page.stageView(s)->selectedRow(), 3);
            QCOMPARE(page.stageView(s)->markedCell(), (attnlens::ui::HeatmapCell{3, 0}));
        }
        QVERIFY(page.explanationText().contains("dir"));
        QVERIFY(page.explanationText().contains("Wie"));
    }

    void largestSizes() {
        PlaygroundPage page;
        page.resize(1150, 780);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.findChild<QSpinBox*>("sequenceLength")->setValue(PlaygroundModel::kMaxLength);
        page.findChild<QSpinBox*>("dModel")->setValue(PlaygroundModel::kMaxDModel);
        auto* preset = page.findChild<QComboBox*>("preset");
        preset->setCurrentIndex(1);
        emit preset->activated(1); // random
        choose(page.findChild<QComboBox*>("heads"), 4);
        choose(page.findChild<QComboBox*>("maskMode"), int(MaskMode::Causal));
        const PlaygroundModel& m = *page.model();
        QCOMPARE(m.sequenceLength(), 16);
        QCOMPARE(m.dModel(), 32);
        QCOMPARE(m.heads(), 4);
        QCOMPARE(page.headStrip()->headCount(), 4);
        HeatmapView* weights = page.stageView(Stage::Weights);
        QCOMPARE(weights->rows(), 16);
        QApplication::processEvents();
        saveShot(&page, "playground_16x16");
        QVERIFY(weights->cellSize() >= 8); // still readable in a 1150 × 780 page
        // Legible at 16 tokens: every row and column label of every stage drawn; cell values on the cells
        // where they fit, else in the tooltip of the hovered cell (which names query, key and value).
        for (Stage stage : {Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights}) {
            HeatmapView* v = page.stageView(stage);
            for (int i = 0; i < 16; ++i) {
                QVERIFY2(v->rowLabelDrawn(i), qPrintable(QString("stage %1 row %2").arg(int(stage)).arg(i)));
                QVERIFY2(v->columnLabelDrawn(i),
                         qPrintable(QString("stage %1 column %2").arg(int(stage)).arg(i)));
            }
            const QString tip = v->toolTipText(3, 2);
            QVERIFY2(tip.contains(m.tokens()[3]) && tip.contains(m.tokens()[2]), qPrintable(tip));
        }
        for (int h = 0; h < 4; ++h) {
            const Eigen::MatrixXd ref = referenceWeights(m, h);
            const RowMatrix w = m.stage(Stage::Weights, h);
            for (int i = 0; i < 16; ++i)
                for (int j = 0; j < 16; ++j)
                    QVERIFY(std::abs(w(i, j) - ref(i, j)) < 1e-6);
        }
        QApplication::processEvents();
        QTest::qWait(100);
        saveShot(&page, "playground_16x16");
    }

    // Seven tokens (the size that used to lose every other label) in a 1280 × 800 window: every label, three
    // stages per row; values on the cells where they fit (cells ≥ 42 px for "−13.64"), else on hover.
    void sevenTokensKeepEveryLabel() {
        PlaygroundPage page;
        page.resize(1130, 760); // the page inside a 1280 × 800 window
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.model()->setSequenceLength(7);
        page.model()->setDModel(8);
        QApplication::processEvents();
        QTest::qWait(50);
        saveShot(&page, "playground_7");
        for (Stage stage : {Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights, Stage::Output}) {
            HeatmapView* v = page.stageView(stage);
            for (int i = 0; i < 7; ++i)
                QVERIFY(v->rowLabelDrawn(i));
            if (!v->annotationsVisible()) {
                const QString tip = v->toolTipText(2, 1);
                QVERIFY2(tip.contains("value: <b>"), qPrintable(tip)); // the exact value on hover
            }
        }
        // The worked example (4 tokens) shows every value on the cells of every stage.
        page.model()->applyWorkedExample();
        QApplication::processEvents();
        for (Stage stage : {Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights, Stage::Output})
            QVERIFY2(page.stageView(stage)->annotationsVisible(),
                     qPrintable(QString("stage %1").arg(int(stage))));
    }

    void tinySizes() {
        PlaygroundModel m;
        m.setSequenceLength(1);
        m.setDModel(1);
        m.setMaskMode(MaskMode::Padding); // nothing to pad with one token
        QCOMPARE(m.paddingCount(), 0);
        QCOMPARE(m.stage(Stage::Weights, 0)(0, 0), 1.0f);
        m.setMaskMode(MaskMode::Causal);
        QCOMPARE(m.stage(Stage::Weights, 0)(0, 0), 1.0f);
    }

    // The multi-head formula: every head's output, their concatenation, the editable W_O and the result
    // Concat · W_O, checked against a plain Eigen product; editing W_O changes only the result.
    // Issue 42: stage ④ value-weighted — each weight times ‖its key's columns of V through the head's rows of
    // W_O‖, rows renormalised, by hand; the formula and the focused cell's arithmetic say so; sessions keep
    // it.
    void valueWeightedWeightsStage() {
        PlaygroundPage page;
        page.resize(1280, 800);
        page.show();
        PlaygroundModel& m = *page.model();
        m.setSequenceLength(5);
        m.setDModel(8);
        m.applyRandom(11);
        QVERIFY(m.setHeads(2));
        m.setSelectedHead(1);
        m.setFocus(2, 3);
        auto* box = page.findChild<QCheckBox*>("valueWeighted");
        QVERIFY(box);
        box->setChecked(true);
        const RowMatrix a = m.stage(Stage::Weights, 1), v = m.input(Input::Value),
                        wo = m.input(Input::OutputProjection);
        const RowMatrix& shown = page.stageView(Stage::Weights)->matrix();
        for (int i = 0; i < 5; ++i) {
            std::vector<double> sent(5);
            double total = 0;
            for (int j = 0; j < 5; ++j) {
                double sq = 0;
                for (int c = 0; c < 8; ++c) {
                    double x = 0;
                    for (int r = 0; r < 4; ++r) // head 1: columns / rows 4..7
                        x += double(v(j, 4 + r)) * wo(4 + r, c);
                    sq += x * x;
                }
                sent[size_t(j)] = a(i, j) * std::sqrt(sq);
                total += sent[size_t(j)];
            }
            for (int j = 0; j < 5; ++j)
                QVERIFY(std::abs(shown(i, j) - sent[size_t(j)] / total) < 1e-5);
        }
        QVERIFY(shown != a);
        QVERIFY(page.stagePanel(Stage::Weights)->formula().contains(QString::fromUtf8("‖")));
        QVERIFY(page.stagePanel(Stage::Weights)->detail().contains(QStringLiteral("Ã[")));
        QVERIFY(page.saveSession().value("value_weighted").toBool());
        saveShot(&page, "playground_value_weighted");
        box->setChecked(false);
        QCOMPARE(page.stageView(Stage::Weights)->matrix(), a);
    }

    void multiHeadConcatAndOutputProjection() {
        PlaygroundPage page;
        page.resize(1280, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        PlaygroundModel& m = *page.model();
        m.setSequenceLength(6);
        m.setDModel(8);
        m.applyRandom(7);
        QVERIFY(m.setHeads(4));
        page.stageTabs()->setCurrentIndex(1);
        QApplication::processEvents();
        MultiHeadPanel* panel = page.multiHeadPanel();
        QCOMPARE(panel->headViewCount(), 4);
        // Concat is the heads side by side.
        const RowMatrix concat = m.output();
        QCOMPARE(concat.cols(), 8);
        for (int h = 0; h < 4; ++h) {
            const RowMatrix head = m.stage(Stage::Output, h);
            QCOMPARE(panel->headView(h)->columns(), 2);
            for (int i = 0; i < 6; ++i)
                for (int c = 0; c < 2; ++c)
                    QCOMPARE(concat(i, h * 2 + c), head(i, c));
        }
        QCOMPARE(panel->concatView()->columns(), 8);
        // Result = Concat · W_O (random W_O, not the identity).
        const RowMatrix wo = m.input(Input::OutputProjection);
        QCOMPARE(wo.rows(), 8);
        QVERIFY(!wo.isIdentity());
        Eigen::MatrixXd ref = concat.cast<double>() * wo.cast<double>();
        QVERIFY((m.projected().cast<double>() - ref).cwiseAbs().maxCoeff() < 1e-5);
        QCOMPARE(panel->resultView()->rows(), 6);
        // Edit W_O through its editor: the result follows, the heads do not move.
        MatrixEditor* editor = page.editor(Input::OutputProjection);
        QVERIFY(editor && editor->isVisible());
        QCOMPARE(editor->model()->rowCount(), 8);
        QVERIFY(editor->model()->setData(editor->model()->index(0, 0), 5.0, Qt::EditRole));
        QCOMPARE(m.input(Input::OutputProjection)(0, 0), 5.0f);
        QCOMPARE(m.output(), concat);
        ref = concat.cast<double>() * m.input(Input::OutputProjection).cast<double>();
        QVERIFY((m.projected().cast<double>() - ref).cwiseAbs().maxCoeff() < 1e-5);
        QVERIFY2(panel->detail().contains(
                     withMinusSign(QString::number(double(m.projected()(m.focusQuery(), 0)), 'f', 2))),
                 qPrintable(panel->detail()));
        QVERIFY(panel->formula().contains("Concat"));
        // Clicking a head's output selects that head for the stages tab.
        emit panel->headView(2)->cellClicked(1, 0);
        QCOMPARE(m.selectedHead(), 2);
        // Fewer heads: fewer cards; the worked example resets W_O to the identity (result = concat).
        QVERIFY(m.setHeads(2));
        QCOMPARE(panel->headViewCount(), 2);
        m.applyWorkedExample();
        QVERIFY(m.input(Input::OutputProjection).isIdentity());
        QVERIFY((m.projected() - m.output()).cwiseAbs().maxCoeff() == 0.0f);
        // One colour-bar placement on the whole page.
        for (HeatmapView* v : page.findChildren<HeatmapView*>())
            if (v->colorBarVisible() && v->isVisible())
                QVERIFY2(v->colorBarBelow(), qPrintable(v->objectName()));
        QApplication::processEvents();
        saveShot(&page, "playground_multihead");
    }

    void typingTokensSetsLength() {
        PlaygroundPage page;
        page.show();
        auto* tokens = page.findChild<QLineEdit*>("tokens");
        QVERIFY(tokens);
        tokens->selectAll();
        QTest::keyClicks(tokens, "the cat sat on mats");
        QCOMPARE(page.model()->sequenceLength(), 5);
        QCOMPARE(page.model()->tokens().at(4), QStringLiteral("mats"));
        QCOMPARE(page.stageView(Stage::Weights)->rows(), 5);
        QCOMPARE(page.stageView(Stage::Weights)->rowLabel(1), QStringLiteral("cat"));
        QCOMPARE(page.findChild<QSpinBox*>("sequenceLength")->value(), 5);
        // Typing went through n = 1, 2, … on the way: the example's values came back intact.
        QCOMPARE(page.model()->inputValue(Input::Query, 1, 2), 2.0f);
        QCOMPARE(page.model()->inputValue(Input::Key, 3, 3), 1.0f);
    }
};

QTEST_MAIN(TestPlayground)
#include "test_playground.moc"
