// Long maps in HeatmapView and the ui/render functions (issue 40: one head at 4 096 tokens): the overview's
// and the exports' block maxima, the fit mode and zooming out below a pixel per cell (each pixel its block's
// largest value, hover naming that cell), and finding a token among thousands.

#include "ui/render/heatmap_image.h"
#include "ui/render/heatmap_scene.h"
#include "ui/widgets/heatmap_find.h"
#include "ui/widgets/heatmap_view.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

using attnlens::ColorMap;
using attnlens::RowMatrix;
using attnlens::ui::HeatmapCell;
using attnlens::ui::HeatmapView;

namespace {

QStringList indexLabels(int n) {
    QStringList labels;
    for (int i = 0; i < n; ++i)
        labels << QStringLiteral("t%1").arg(i);
    return labels;
}

QRgb viridis(float t) {
    return attnlens::ui::colorFor(ColorMap::Viridis, t).rgb();
}

bool scrolls(const HeatmapView& view) {
    return view.horizontalScrollBar()->maximum() > 0 || view.verticalScrollBar()->maximum() > 0;
}

} // namespace

class TestHeatmapLong : public QObject {
    Q_OBJECT
private slots:
    // Above 512 cells a side the scene keeps an overview of at most 256 px a side whose pixels take the
    // largest unmasked value of their block: one hot cell of a 1 100 × 700 map stays visible in it.
    void overviewKeepsBlockMaxima() {
        attnlens::ui::HeatmapScene s;
        s.values = RowMatrix::Constant(1100, 700, 0.1f);
        s.values(1000, 333) = 1.0f;
        s.mask = RowMatrix::Ones(1100, 700);
        s.mask.block(0, 0, 5, 5).setZero(); // a whole block masked: the masked colour
        s.values.block(0, 0, 5, 5).setConstant(1.0f);
        s.updateImage();
        QCOMPARE(s.overview.size(), QSize(140, 220)); // blocks of 5 × 5 (1 100 / 256 rounded up)
        const QRgb hot = attnlens::ui::colorFor(ColorMap::Viridis, 1.0f).rgb();
        const QRgb cold = attnlens::ui::colorFor(ColorMap::Viridis, 0.1f).rgb();
        QCOMPARE(s.overview.pixel(333 / 5, 1000 / 5), hot);
        QCOMPARE(s.overview.pixel(10, 10), cold);
        QCOMPARE(s.overview.pixel(0, 0), attnlens::ui::heatmapMaskedColor().rgb());
        QCOMPARE(s.image.pixel(333, 1000), hot);
        s.values.resize(500, 500);
        s.values.setZero();
        s.mask.resize(0, 0);
        s.updateImage();
        QVERIFY(s.overview.isNull()); // small matrices draw their image
    }

    // Exports of a long map (issue 40: one head at 4 096 tokens) draw its blocks' maxima: by hand on a
    // 2 100 × 1 300 map (blocks of 5: 420 × 260 cells), and the exported pictures' sizes stay bounded.
    void longMapExportsBlocks() {
        attnlens::ui::HeatmapScene s;
        s.values = RowMatrix::Constant(2100, 1300, 0.1f);
        s.values(2000, 1234) = 0.9f;
        s.mask = RowMatrix::Ones(2100, 1300);
        s.mask.block(0, 0, 5, 5).setZero();
        s.values.block(0, 0, 5, 5).setConstant(1.0f); // masked: not a maximum
        for (int i = 0; i < 2100; ++i)
            s.rowLabels << QStringLiteral("q%1").arg(i);
        s.rowTitle = QStringLiteral("query");
        s.sinks = {{1234, 0.3f}};
        s.updateImage();
        const attnlens::ui::HeatmapScene b = attnlens::ui::blockMaximaScene(s, 512);
        QCOMPARE(b.rows(), 420);
        QCOMPARE(b.columns(), 260);
        QCOMPARE(b.values(400, 246), 0.9f);
        QCOMPARE(b.values(1, 1), 0.1f);
        QVERIFY(b.isMasked(0, 0) && !b.isMasked(0, 1));
        QCOMPARE(b.values(0, 0), s.lo); // not −∞
        QCOMPARE(b.rowLabels.size(), 420);
        QCOMPARE(b.rowLabels[400], QStringLiteral("q2000"));
        QVERIFY(b.columnLabels.isEmpty() || b.columnLabels.size() == 260);
        QCOMPARE(b.columnLabel(246), QStringLiteral("1230"));
        QCOMPARE(b.sinks.front().column, 246);
        QVERIFY(b.rowTitle.startsWith(QStringLiteral("query")) &&
                b.rowTitle.contains(QStringLiteral("5 × 5")));
        QCOMPARE(b.image.pixel(246, 400), attnlens::ui::colorFor(ColorMap::Viridis, 0.9f).rgb());
        const attnlens::ui::HeatmapStyle style;
        const QImage automatic = attnlens::ui::renderHeatmap(s, style); // above 1 024 a side: the blocks
        QCOMPARE(automatic.size(), attnlens::ui::renderHeatmap(b, style).size());
        QVERIFY(automatic.width() < 4000 && automatic.height() < 4000);
        const QImage big = attnlens::ui::renderHeatmap(s, style, 8); // 16 800 px of cells: blocks of 3
        QVERIFY(big.height() <= attnlens::ui::kExportLargestSide + 400 && big.height() >= 700 * 8);
        QCOMPARE(attnlens::ui::renderHeatmap(s, style, 1).height() > 2100, true); // every cell fits at 1 px
    }

    // Ctrl+F on a fitted 4 096-token matrix (cells far below a pixel): Enter zooms until labels are legible,
    // centres the hit on the diagonal and selects its row as a click on the label would.
    void findBarRevealsToken() {
        const int n = 4096;
        attnlens::ui::HeatmapView view;
        QStringList labels;
        for (int i = 0; i < n; ++i)
            labels << QStringLiteral("t%1").arg(i);
        labels[3000] = QStringLiteral("needle"), labels[100] = QStringLiteral("Needles");
        view.setMatrix(RowMatrix::Zero(n, n), labels, labels);
        view.resize(700, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.cellSize() < 1 || view.zoomMode() == attnlens::ui::HeatmapView::ZoomMode::Fit);
        QSignalSpy selected(&view, &attnlens::ui::HeatmapView::rowSelected);
        view.setFocus();
        QTest::keyClick(&view, Qt::Key_F, Qt::ControlModifier);
        auto* find = view.findBar();
        QVERIFY(find->isVisible());
        auto* text = find->findChild<QLineEdit*>("findText");
        QTRY_VERIFY(text->hasFocus());
        QTest::keyClicks(text, "NEEDLE");
        QCOMPARE(find->findChild<QLabel*>("findCount")->text(), QStringLiteral("2 matches"));
        QTest::keyClick(text, Qt::Key_Return);
        QCOMPARE(view.selectedRow(), 100);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.last().at(0).toInt(), 100);
        QVERIFY(view.cellSize() >= view.fontMetrics().height());
        QVERIFY(view.viewport()->rect().intersects(view.cellRect(100, 100)));
        QVERIFY(view.rowLabelDrawn(100));
        QTest::keyClick(text, Qt::Key_Return);
        QCOMPARE(view.selectedRow(), 3000);
        QVERIFY(view.viewport()->rect().intersects(view.cellRect(3000, 3000)));
        QCOMPARE(find->findChild<QLabel*>("findCount")->text(), QStringLiteral("2 of 2"));
        QTest::keyClick(text, Qt::Key_Return, Qt::ShiftModifier); // back to the first
        QCOMPARE(view.selectedRow(), 100);
        QTest::keyClick(text, Qt::Key_Escape);
        QVERIFY(!find->isVisible());
        QTest::keyClicks(text, "x"); // hidden: typing elsewhere finds nothing new
        QCOMPARE(selected.count(), 3);
    }

    // A 4 096² map fitted to a 700 × 500 pane is shown whole, several cells per pixel, without scroll bars
    // or overview; one hot cell among 16 M keeps its colour on screen (a sampled picture would drop it),
    // hovering that pixel names the hot cell, a click emits it, labels come every text line, and the
    // picture copied from the menu is the export's blocks, not a 4 096 px image.
    void fitShowsLongMapWhole() {
        const int n = 4096;
        RowMatrix values = RowMatrix::Zero(n, n);
        values(3001, 1234) = 1.0f;
        HeatmapView view;
        view.setMatrix(std::move(values), indexLabels(n), indexLabels(n));
        view.resize(700, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const int per = view.cellsPerPixel();
        QVERIFY2(per >= 9 && per <= 16, qPrintable(QString::number(per)));
        QCOMPARE(view.zoomMode(), HeatmapView::ZoomMode::Fit);
        QVERIFY(!scrolls(view));
        QVERIFY(view.overviewRect().isEmpty());
        QVERIFY(view.viewport()->rect().contains(view.cellRect(n - 1, n - 1)));
        QCOMPARE(view.cellRect(n - 1, n - 1).topLeft() - view.cellRect(0, 0).topLeft(),
                 QPoint((n - 1) / per, (n - 1) / per));

        const QPoint at = view.cellRect(3001, 1234).topLeft();
        QCOMPARE(view.viewport()->grab().toImage().pixel(at), viridis(1.0f));
        QCOMPARE(view.viewport()->grab().toImage().pixel(at + QPoint(3, 0)), viridis(0.0f));
        QTest::mouseMove(view.viewport(), at);
        QCOMPARE(view.cellAt(at), (HeatmapCell{3001, 1234}));
        QVERIFY(view.toolTipText(3001, 1234).contains(QStringLiteral("t3001")));
        QVERIFY(view.toolTipText(3001, 1234).contains(QStringLiteral("the largest of rows")));
        QSignalSpy clicked(&view, &HeatmapView::cellClicked);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked.last().at(0).toInt(), 3001);
        QCOMPARE(clicked.last().at(1).toInt(), 1234);

        int labelled = 0;
        for (int r = 0; r < n; ++r)
            labelled += view.rowLabelDrawn(r) ? 1 : 0;
        const int lines = view.viewport()->height() / view.fontMetrics().height();
        QVERIFY2(labelled >= lines / 2 && labelled <= lines + 2, qPrintable(QString::number(labelled)));

        const QImage copied = view.renderImage();
        QVERIFY2(copied.width() < 4000 && copied.height() < 4000,
                 qPrintable(QString::number(copied.width())));
    }

    // Zooming out from 1 px per cell goes on below it (2, 3, 4 … cells per pixel) until the whole map is on
    // screen, and no further; the cell under the wheel stays under it (within a pixel's block); zooming in
    // comes back to a pixel per cell and beyond.
    void zoomOutBelowAPixel() {
        const int n = 2000;
        HeatmapView view;
        view.setMatrix(RowMatrix::Zero(n, n));
        view.resize(700, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setCellSize(1);
        QCOMPARE(view.cellsPerPixel(), 1);
        QVERIFY(scrolls(view));
        view.centreOn(0.5, 0.5);
        const QPoint anchor = view.viewport()->rect().center();
        const HeatmapCell before = view.cellAt(anchor);
        QWheelEvent wheel(anchor, view.viewport()->mapToGlobal(anchor), QPoint(), QPoint(0, -120),
                          Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.viewport(), &wheel);
        QCOMPARE(view.cellsPerPixel(), 2);
        QCOMPARE(view.cellSize(), 1);
        const HeatmapCell after = view.cellAt(anchor);
        QVERIFY2(std::abs(after.row - before.row) <= 2 && std::abs(after.col - before.col) <= 2,
                 qPrintable(QStringLiteral("%1,%2 → %3,%4")
                                .arg(before.row)
                                .arg(before.col)
                                .arg(after.row)
                                .arg(after.col)));
        view.zoomOut();
        QCOMPARE(view.cellsPerPixel(), 3);
        int steps = 0;
        while (scrolls(view) && steps++ < 20)
            view.zoomOut();
        const int whole = view.cellsPerPixel();
        QVERIFY2(whole >= 4 && whole <= 6, qPrintable(QString::number(whole))); // 2 000 cells in < 500 px
        view.zoomOut();
        QCOMPARE(view.cellsPerPixel(), whole);
        while (view.cellsPerPixel() > 1 && steps++ < 40)
            view.zoomIn();
        QCOMPARE(view.cellSize(), 1);
        view.zoomIn();
        QCOMPARE(view.cellSize(), 2);
        QCOMPARE(view.cellsPerPixel(), 1);
        view.setCellsPerPixel(8);
        QCOMPARE(view.cellsPerPixel(), 8);
        QVERIFY(!scrolls(view));
        view.fitToView();
        QVERIFY(view.cellsPerPixel() > 1 && !scrolls(view));
    }
};

QTEST_MAIN(TestHeatmapLong)
#include "test_heatmap_long.moc"
