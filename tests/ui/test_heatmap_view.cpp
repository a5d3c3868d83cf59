// HeatmapView and the ui/render functions: colours identical to the core renderer, labels, the
// hover value lookup, selection signals, masks, zoom and scrolling, export, and the repaint cost of
// a 200×200 matrix.

#include "support/waits.h"
#include "ui/render/heatmap_image.h"
#include "ui/render/heatmap_scene.h"
#include "ui/vision/map_grid_view.h"
#include "ui/widgets/heatmap_find.h"
#include "ui/widgets/heatmap_view.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <random>

using attnlens::ColorMap;
using attnlens::RowMatrix;
using attnlens::ui::HeatmapCell;
using attnlens::ui::HeatmapView;

namespace {

RowMatrix ramp(int rows, int cols) {
    RowMatrix m(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            m(r, c) = static_cast<float>(r * cols + c) / static_cast<float>(rows * cols - 1);
    return m;
}

QColor expectedColor(ColorMap map, float t) {
    return attnlens::ui::colorFor(map, t);
}

// A pixel of a cell away from its centre (annotation text) and its edges (tile gaps, outlines).
QPoint quietPixel(const QRect& cell) {
    return cell.topLeft() + QPoint(cell.width() / 4, cell.height() / 4);
}

QStringList tokenLabels(const char* prefix, int n) {
    QStringList labels;
    for (int i = 0; i < n; ++i)
        labels << QStringLiteral("%1%2").arg(QLatin1String(prefix)).arg(i);
    return labels;
}

// Every row and column label of the view is drawn now, or drawn while its row/column is hovered (and named
// by the cell's tooltip), or drawn once zoomed to cells a text line tall. Scrolls as needed; returns
// how many labels were drawn without hovering.
int checkEveryLabelReachable(HeatmapView& view) {
    int drawnAtFit = 0;
    for (int r = 0; r < view.rows(); ++r)
        drawnAtFit += view.rowLabelDrawn(r) ? 1 : 0;
    for (int c = 0; c < view.columns(); ++c)
        drawnAtFit += view.columnLabelDrawn(c) ? 1 : 0;
    // Hover: bring each row (column) into view, hover a cell of it, and its label is drawn and named.
    auto hoverCell = [&](int r, int c) {
        view.centreOn((c + 0.5) / view.columns(), (r + 0.5) / view.rows());
        const QPoint at = view.cellRect(r, c).center();
        if (view.cellAt(at) != HeatmapCell{r, c}) return false;
        QTest::mouseMove(view.viewport(), at);
        return view.cellAt(at) == HeatmapCell{r, c};
    };
    for (int r = 0; r < view.rows(); ++r) {
        if (!hoverCell(r, 0)) return -1;
        if (!view.rowLabelDrawn(r) || !view.toolTipText(r, 0).contains(view.rowLabel(r))) return -1;
    }
    for (int c = 0; c < view.columns(); ++c) {
        if (!hoverCell(0, c)) return -1;
        if (!view.columnLabelDrawn(c) || !view.toolTipText(0, c).contains(view.columnLabel(c))) return -1;
    }
    QTest::mouseMove(view.viewport(), QPoint(1, 1)); // off the grid
    return drawnAtFit;
}

} // namespace

class TestHeatmapView : public QObject {
    Q_OBJECT
private slots:
    // Finding a token: case and word markers ignored; rows first, then columns only where they differ.
    void findLabelsMatches() {
        using attnlens::ui::HeatmapHit;
        attnlens::ui::HeatmapScene s;
        s.values = RowMatrix::Zero(4, 4);
        s.rowLabels = s.columnLabels =
            QStringList{"<s>", QString::fromUtf8("\u2581Cat"), "sat", QString::fromUtf8("\u0120cat")};
        s.values = RowMatrix::Zero(5, 5);
        s.rowLabels << QString::fromUtf8("\u2423cats"), s.columnLabels = s.rowLabels;
        const std::vector<HeatmapHit> cat{{true, 1}, {true, 3}, {true, 4}};
        QCOMPARE(attnlens::ui::heatmapFindLabels(s, "cat"), cat);
        QCOMPARE(attnlens::ui::heatmapFindLabels(s, " CAT "), cat);
        QVERIFY(attnlens::ui::heatmapFindLabels(s, "dog").empty());
        QVERIFY(attnlens::ui::heatmapFindLabels(s, "  ").empty());
        s.values = RowMatrix::Zero(2, 5); // Translate: target rows, source columns
        s.rowLabels = QStringList{"die", "Katze"};
        const std::vector<HeatmapHit> both{{true, 1}, {false, 1}, {false, 2}, {false, 3}, {false, 4}};
        QCOMPARE(attnlens::ui::heatmapFindLabels(s, "at"), both);
        s.rowLabels.clear(), s.columnLabels.clear(); // indices when there are no labels
        QCOMPARE(attnlens::ui::heatmapFindLabels(s, "3"), (std::vector<HeatmapHit>{{false, 3}}));
    }

    // A matrix coloured on a worker is shown as it came (its image not recoloured), with its range and
    // labels.
    void colouredMatrixTakenAsItCame() {
        attnlens::ui::HeatmapScene s;
        s.values = RowMatrix::Random(6, 6).cwiseAbs();
        s.rowLabels = s.columnLabels = QStringList{"a", "b", "c", "d", "e", "f"};
        s.lo = 0.2f, s.hi = 0.8f;
        s.updateImage();
        s.image.setPixel(0, 0, qRgb(1, 2, 3)); // a mark: recolouring would remove it
        HeatmapView view;
        view.setColouredMatrix(s);
        QCOMPARE(view.scene().image.pixel(0, 0), qRgb(1, 2, 3));
        QCOMPARE(view.displayRange(), std::make_pair(0.2f, 0.8f));
        QCOMPARE(view.rowLabel(2), QStringLiteral("c"));
        QVERIFY(view.matrix() == s.values);
        s.colorMap = ColorMap::Magma; // another colour map than the view's: recoloured
        view.setColouredMatrix(s);
        QVERIFY(view.scene().image.pixel(0, 0) != qRgb(1, 2, 3));
    }

    void heatmapImageMatchesCoreRenderer() {
        RowMatrix values(3, 4);           // [rows, cols]
        values << 0.0f, 0.1f, 0.5f, 1.0f, //
            -2.0f, 0.3f, 0.7f, 3.0f,      //
            0.25f, 0.5f, 0.75f, 0.9f;
        for (ColorMap map : {ColorMap::Viridis, ColorMap::Magma}) {
            const QImage image = attnlens::ui::heatmapImage(values, map, 0.0f, 1.0f, 3);
            const attnlens::RgbImage core = attnlens::renderHeatmap(values, map, 0.0f, 1.0f, 3);
            QCOMPARE(image.size(), QSize(12, 9));
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x) {
                    const attnlens::Rgb p = core.pixel(x, y);
                    QCOMPARE(QColor(image.pixel(x, y)), QColor(p.r, p.g, p.b));
                }
        }
        const QImage viridis = attnlens::ui::heatmapImage(values, ColorMap::Viridis, 0.0f, 1.0f, 1);
        QCOMPARE(QColor(viridis.pixel(0, 0)), QColor(68, 1, 84));
        QCOMPARE(QColor(viridis.pixel(2, 0)), QColor(33, 145, 140));
        QCOMPARE(QColor(viridis.pixel(3, 0)), QColor(253, 231, 37));
        QVERIFY(attnlens::ui::heatmapImage(RowMatrix(0, 0), ColorMap::Viridis).isNull());
    }

    void colorBarImageEnds() {
        const QImage vertical = attnlens::ui::colorBarImage(ColorMap::Magma, 100, 7, Qt::Vertical);
        QCOMPARE(vertical.size(), QSize(7, 100));
        QCOMPARE(QColor(vertical.pixel(3, 0)), QColor(252, 253, 191)); // top = 1
        QCOMPARE(QColor(vertical.pixel(3, 99)), QColor(0, 0, 4));      // bottom = 0
        const QImage horizontal = attnlens::ui::colorBarImage(ColorMap::Viridis, 256, 5, Qt::Horizontal);
        QCOMPARE(horizontal.size(), QSize(256, 5));
        QCOMPARE(QColor(horizontal.pixel(0, 2)), QColor(68, 1, 84));
        QCOMPARE(QColor(horizontal.pixel(128, 2)), QColor(33, 145, 140)); // 128/255 → entry 128
        QCOMPARE(QColor(horizontal.pixel(255, 2)), QColor(253, 231, 37));
        QCOMPARE(attnlens::ui::colorMapDisplayName(ColorMap::Viridis), QStringLiteral("Viridis"));
        QCOMPARE(attnlens::ui::contrastingTextColor(QColor(253, 231, 37)), QColor(Qt::black));
        QCOMPARE(attnlens::ui::contrastingTextColor(QColor(68, 1, 84)), QColor(Qt::white));
    }

    void labels() {
        HeatmapView view;
        view.setMatrix(ramp(2, 3), {"Wie", "geht"}, {"a", "b", "c"});
        QCOMPARE(view.rows(), 2);
        QCOMPARE(view.columns(), 3);
        QCOMPARE(view.rowLabel(1), QStringLiteral("geht"));
        QCOMPARE(view.columnLabel(2), QStringLiteral("c"));
        // Labels whose count does not match are dropped: indices are shown instead.
        view.setRowLabels({"only one"});
        QCOMPARE(view.rowLabel(0), QStringLiteral("0"));
        // A new shape drops labels of the old shape.
        view.setColumnLabels({"a", "b", "c"});
        view.setMatrix(ramp(2, 3)); // same shape: labels stay
        QCOMPARE(view.columnLabel(2), QStringLiteral("c"));
        view.setMatrix(ramp(2, 4));
        QCOMPARE(view.columnLabel(2), QStringLiteral("2"));
    }

    void hoverLookupAndTooltip() {
        HeatmapView view;
        view.resize(420, 320);
        view.setAxisTitles("query", "key");
        RowMatrix values = ramp(3, 4);
        values(1, 2) = 0.12345678f;
        view.setMatrix(values, {"r0", "r1", "r2"}, {"c0", "c1", "c2", "c3"});
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c) {
                const QRect rect = view.cellRect(r, c);
                QVERIFY(rect.width() >= 10);
                QCOMPARE(view.cellAt(rect.center()), (HeatmapCell{r, c}));
                QCOMPARE(view.cellAt(rect.topLeft()), (HeatmapCell{r, c}));
                QCOMPARE(view.cellAt(rect.bottomRight()), (HeatmapCell{r, c}));
            }
        // Outside the grid: no cell.
        QVERIFY(!view.cellAt(view.cellRect(0, 0).topLeft() - QPoint(3, 3)).isValid());
        QVERIFY(!view.cellAt(view.cellRect(2, 3).bottomRight() + QPoint(2, 2)).isValid());

        const QString tip = view.toolTipText(1, 2);
        QVERIFY2(tip.contains("0.12345678"), qPrintable(tip));
        QVERIFY(tip.contains("r1") && tip.contains("c2") && tip.contains("query") && tip.contains("key"));
        QVERIFY(view.toolTipText(5, 0).isEmpty());

        QSignalSpy hovered(&view, &HeatmapView::cellHovered);
        QTest::mouseMove(view.viewport(), view.cellRect(2, 1).center());
        WAIT_UNTIL(!hovered.isEmpty());
        QCOMPARE(hovered.last().at(0).toInt(), 2);
        QCOMPARE(hovered.last().at(1).toInt(), 1);
    }

    void renderedColours() {
        HeatmapView view;
        view.resize(400, 300);
        view.setAnnotationsEnabled(false);
        const RowMatrix values = ramp(3, 3);
        view.setMatrix(values);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (ColorMap map : {ColorMap::Viridis, ColorMap::Magma}) {
            view.setColorMap(map);
            const QImage shot = view.viewport()->grab().toImage();
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    QCOMPARE(QColor(shot.pixel(quietPixel(view.cellRect(r, c)))),
                             expectedColor(map, values(r, c)));
        }
    }

    // A sink column gets an orange triangle at the top of its column and its share in the tooltip.
    void sinkColumnMarked() {
        HeatmapView view;
        view.resize(400, 300);
        view.setAnnotationsEnabled(false);
        view.setMatrix(RowMatrix::Zero(6, 6));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QRect cell = view.cellRect(0, 2);
        const QPoint top(cell.center().x(), cell.top() + 2);
        const QColor before = view.viewport()->grab().toImage().pixel(top);
        view.setSinkColumns({{2, 0.625f}});
        const QColor after = view.viewport()->grab().toImage().pixel(top);
        QVERIFY(after != before);
        QVERIFY(after.red() > 200 && after.green() > 100 && after.blue() < 60); // orange
        QVERIFY(view.toolTipText(4, 2).contains("62.5 %"));
        QVERIFY(!view.toolTipText(4, 1).contains("sink"));
        view.setSinkColumns({{9, 0.5f}}); // outside the matrix: nothing, no crash
        QCOMPARE(QColor(view.viewport()->grab().toImage().pixel(top)), before);
    }

    void rowAndColumnSelection() {
        HeatmapView view;
        view.resize(420, 320);
        view.setMatrix(ramp(4, 4), {"Wie", "geht", "es", "dir"}, {"Wie", "geht", "es", "dir"});
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy rows(&view, &HeatmapView::rowSelected);
        QSignalSpy cols(&view, &HeatmapView::columnSelected);
        QSignalSpy cells(&view, &HeatmapView::cellClicked);

        const QRect cell = view.cellRect(2, 0);
        const QPoint rowLabel(cell.left() - 12, cell.center().y());
        QCOMPARE(view.rowLabelAt(rowLabel), 2);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, rowLabel);
        QCOMPARE(rows.count(), 1);
        QCOMPARE(rows.at(0).at(0).toInt(), 2);
        QCOMPARE(view.selectedRow(), 2);
        QCOMPARE(view.selectedColumn(), -1);

        const QRect top = view.cellRect(0, 3);
        const QPoint colLabel(top.center().x(), top.top() - 8);
        QCOMPARE(view.columnLabelAt(colLabel), 3);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, colLabel);
        QCOMPARE(cols.count(), 1);
        QCOMPARE(cols.at(0).at(0).toInt(), 3);
        QCOMPARE(view.selectedColumn(), 3);
        QCOMPARE(view.selectedRow(), -1); // one selection at a time
        QVERIFY(cells.isEmpty());

        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, view.cellRect(1, 2).center());
        QCOMPARE(cells.count(), 1);
        QCOMPARE(cells.at(0).at(0).toInt(), 1);
        QCOMPARE(cells.at(0).at(1).toInt(), 2);
        QCOMPARE(rows.count(), 1); // a cell click is not a row selection

        // Programmatic selection is silent; Escape clears.
        view.selectRow(1);
        QCOMPARE(rows.count(), 1);
        QCOMPARE(view.selectedRow(), 1);
        QTest::keyClick(&view, Qt::Key_Escape);
        QCOMPARE(view.selectedRow(), -1);
        // The selection is drawn: the outline changes pixels on the row's edge.
        const QImage before = view.viewport()->grab().toImage();
        view.selectRow(2);
        const QImage after = view.viewport()->grab().toImage();
        const QRect selected = view.cellRect(2, 1);
        QVERIFY(before.pixel(selected.left() + 1, selected.top() + 1) !=
                after.pixel(selected.left() + 1, selected.top() + 1));
    }

    void dimUnselected() {
        HeatmapView view;
        view.resize(300, 240);
        view.setAnnotationsEnabled(false);
        view.setMatrix(RowMatrix::Zero(3, 3)); // every cell the darkest colour
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.selectRow(1);
        const QImage plain = view.viewport()->grab().toImage();
        view.setDimUnselected(true);
        const QImage dimmed = view.viewport()->grab().toImage();
        const QPoint other = quietPixel(view.cellRect(0, 0));
        const QPoint selected = quietPixel(view.cellRect(1, 0));
        QCOMPARE(dimmed.pixel(selected), plain.pixel(selected));
        QVERIFY(qGray(dimmed.pixel(other)) > qGray(plain.pixel(other)) + 60);
    }

    void maskedCells() {
        HeatmapView view;
        view.resize(400, 300);
        RowMatrix values(2, 2);
        values << 0.5f, -1e9f, //
            2.0f, 3.0f;
        RowMatrix keep(2, 2);
        keep << 1, 0, //
            1, 1;
        view.setRangeMode(HeatmapView::RangeMode::Auto);
        view.setMatrix(values);
        view.setMask(keep);
        QVERIFY(view.isMasked(0, 1));
        QVERIFY(!view.isMasked(0, 0));
        // The −1e9 stand-in for −∞ is left out of the auto range.
        QCOMPARE(view.displayRange().first, 0.5f);
        QCOMPARE(view.displayRange().second, 3.0f);
        QCOMPARE(QColor(view.image().pixel(1, 0)), HeatmapView::maskedColor());
        QCOMPARE(QColor(view.image().pixel(0, 0)), expectedColor(ColorMap::Viridis, 0.0f));
        QCOMPARE(view.formatValue(0, 1), QString::fromUtf8("\u2212\u221e"));
        QCOMPARE(view.formatValue(1, 1), QStringLiteral("3.00"));
        view.setMaskedText("0");
        QCOMPARE(view.formatValue(0, 1), QStringLiteral("0"));
        QVERIFY(view.toolTipText(0, 1).contains("masked"));
        // A mask of the wrong shape is refused; a new matrix shape drops the mask.
        view.setMask(RowMatrix::Ones(3, 3));
        QVERIFY(!view.hasMask());
        view.setMask(keep);
        view.setMatrix(ramp(3, 3));
        QVERIFY(!view.hasMask());
    }

    void valueFormatting() {
        HeatmapView view;
        RowMatrix values(1, 3);
        values << -0.5f, -0.0001f, 12.345f;
        view.setMatrix(values);
        QCOMPARE(view.formatValue(0, 0), QString::fromUtf8("\u22120.50")); // real minus sign
        QCOMPARE(view.formatValue(0, 1), QStringLiteral("0.00"));          // no "−0.00"
        view.setValueDecimals(1);
        QCOMPARE(view.formatValue(0, 2), QStringLiteral("12.3"));
    }

    void annotationsNeedRoom() {
        HeatmapView view;
        view.resize(400, 300);
        view.setMatrix(ramp(4, 4));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.annotationsVisible());
        view.setCellSize(6);
        QVERIFY(!view.annotationsVisible());
        view.setAnnotationsEnabled(false);
        view.fitToView();
        QVERIFY(!view.annotationsVisible());
    }

    void zoom() {
        HeatmapView view;
        view.resize(360, 300);
        view.setMatrix(ramp(200, 200));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.zoomMode(), HeatmapView::ZoomMode::Fit);
        const int fitCell = view.cellSize();
        QVERIFY(fitCell >= 1 && fitCell <= 2);
        QCOMPARE(view.horizontalScrollBar()->maximum(), 0);

        QSignalSpy zoomed(&view, &HeatmapView::zoomChanged);
        view.setCellSize(10);
        QCOMPARE(view.zoomMode(), HeatmapView::ZoomMode::Fixed);
        QCOMPARE(view.cellSize(), 10);
        QCOMPARE(zoomed.count(), 1);
        // Zoomed in, the grid scrolls: 200 · 10 px do not fit.
        QVERIFY(view.horizontalScrollBar()->maximum() > 1000);
        QVERIFY(view.verticalScrollBar()->maximum() > 1000);
        view.zoomIn();
        QCOMPARE(view.cellSize(), 12);
        view.zoomOut();
        QCOMPARE(view.cellSize(), 10);
        QTest::keyClick(&view, Qt::Key_Plus);
        QCOMPARE(view.cellSize(), 12);
        QTest::keyClick(&view, Qt::Key_Minus);
        QCOMPARE(view.cellSize(), 10);

        // Scrolling moves the grid under the pointer: 50 px right = 5 columns further.
        view.horizontalScrollBar()->setValue(0);
        view.verticalScrollBar()->setValue(0);
        const QPoint probe = view.cellRect(3, 3).center();
        const HeatmapCell atStart = view.cellAt(probe);
        view.horizontalScrollBar()->setValue(50);
        QCOMPARE(view.cellAt(probe), (HeatmapCell{atStart.row, atStart.col + 5}));

        // Ctrl+wheel zooms around the pointer: the cell under it stays under it.
        const QPoint anchor = view.cellRect(5, 10).center();
        const HeatmapCell underPointer = view.cellAt(anchor);
        QWheelEvent wheel(anchor, view.viewport()->mapToGlobal(anchor), QPoint(), QPoint(0, 120),
                          Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.viewport(), &wheel);
        QCOMPARE(view.cellSize(), 12);
        QCOMPARE(view.cellAt(anchor), underPointer);

        QTest::keyClick(&view, Qt::Key_0);
        QCOMPARE(view.zoomMode(), HeatmapView::ZoomMode::Fit);
        QCOMPARE(view.cellSize(), fitCell);
        QCOMPARE(view.horizontalScrollBar()->maximum(), 0);
    }

    // A 16 × 52 cross-attention (a 40-word sentence) fills its pane: every target row labelled at the fit,
    // the thin source columns every n-th, the rest on hover; zoomed in, every label is drawn.
    void longSentenceLabelsReachable() {
        HeatmapView view;
        view.resize(800, 440);
        view.setAxisTitles(QStringLiteral("target (query)"), QStringLiteral("source (key)"));
        view.setMatrix(ramp(16, 52), tokenLabels("_target", 16), tokenLabels("_source", 52));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        // Fitted to the pane: the grid takes most of the height, not a strip of square cells.
        const QRect grid = view.cellRect(0, 0).united(view.cellRect(15, 51));
        QVERIFY2(grid.height() > view.viewport()->height() / 2, qPrintable(QString::number(grid.height())));
        QVERIFY(grid.width() > view.viewport()->width() / 2);
        for (int r = 0; r < 16; ++r)
            QVERIFY2(view.rowLabelDrawn(r), qPrintable(view.rowLabel(r)));
        const int drawn = checkEveryLabelReachable(view);
        QVERIFY(drawn >= 16 + 52 / 3);
        // Zoomed to 20 px cells every label in view is drawn, and the overview shows where the view is.
        view.setCellSize(20);
        view.centreOn(0.5, 0.5);
        for (int c = 0; c < 52; ++c)
            if (view.viewport()->rect().contains(view.cellRect(0, c).center()) &&
                view.cellRect(0, c).right() < view.viewport()->width() - 40)
                QVERIFY2(view.columnLabelDrawn(c), qPrintable(view.columnLabel(c)));
        QVERIFY(!view.overviewRect().isEmpty());
        // A click in the overview moves there: its left end shows column 0.
        const QRect o = view.overviewRect();
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(o.left() + 1, o.center().y()));
        QCOMPARE(view.horizontalScrollBar()->value(), 0);
        view.fitToView();
        QVERIFY(view.overviewRect().isEmpty());
    }

    // 512 tokens (BertViz's limit): at the fit only every n-th label fits; every one is reachable by hover,
    // and at a text-line zoom they are all drawn. The fit scrolls when 1 px cells overflow the pane.
    void tokens512LabelsReachable() {
        HeatmapView view;
        view.resize(900, 700);
        view.setMatrix(ramp(512, 512), tokenLabels("tok", 512), tokenLabels("tok", 512));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.zoomMode(), HeatmapView::ZoomMode::Fit);
        QVERIFY(checkEveryLabelReachable(view) > 0);
        view.setCellSize(16);
        int drawnInView = 0, inView = 0;
        for (int r = 0; r < 512; ++r) {
            const QRect cell = view.cellRect(r, 0);
            if (cell.top() < 0 || cell.bottom() > view.viewport()->height()) continue;
            ++inView;
            drawnInView += view.rowLabelDrawn(r) ? 1 : 0;
        }
        QVERIFY(inView > 10);
        QCOMPARE(drawnInView, inView);
    }

    // Dragging a zoomed grid pans it; a click without movement still clicks the cell.
    void dragPansClickClicks() {
        HeatmapView view;
        view.resize(300, 240);
        view.setMatrix(ramp(100, 100));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setCellSize(10);
        QSignalSpy clicked(&view, &HeatmapView::cellClicked);
        const QPoint start = view.cellRect(4, 4).center();
        QTest::mousePress(view.viewport(), Qt::LeftButton, {}, start);
        QMouseEvent move(QEvent::MouseMove, QPointF(start - QPoint(60, 40)),
                         view.viewport()->mapToGlobal(QPointF(start - QPoint(60, 40))), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(view.viewport(), &move);
        QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, start - QPoint(60, 40));
        QCOMPARE(view.horizontalScrollBar()->value(), 60);
        QCOMPARE(view.verticalScrollBar()->value(), 40);
        QCOMPARE(clicked.count(), 0);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, start);
        QCOMPARE(clicked.count(), 1);
    }

    void fitRespectsMaximumCell() {
        HeatmapView view;
        view.resize(800, 600);
        view.setMaximumCellSize(30);
        view.setMatrix(ramp(2, 2));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.cellSize(), 30);
    }

    void exportImages() {
        HeatmapView view;
        view.resize(200, 150);
        view.setMatrix(ramp(5, 7), {"a", "b", "c", "d", "e"}, {});
        const QImage image = view.renderImage(10);
        // The whole grid at 10 px per cell plus labels and colour bar, not just the visible part.
        QVERIFY(image.width() > 70 && image.height() > 50);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString png = dir.filePath("heatmap.png");
        const QString svg = dir.filePath("heatmap.svg");
        QVERIFY(view.savePng(png, 10));
        QVERIFY(view.saveSvg(svg, "test"));
        QCOMPARE(QImage(png).size(), image.size());
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("test"));
    }

    // The picture is a function of the scene: the free functions draw without a widget, the widget's
    // export is exactly that drawing, and the style (a dark palette here) is the only source of colours
    // other than the colour map.
    void sceneDrawsWithoutWidget() {
        attnlens::ui::HeatmapScene scene;
        scene.values = ramp(4, 6);
        scene.rowLabels = {"a", "b", "c", "d"};
        scene.rowTitle = "query";
        scene.columnTitle = "key";
        scene.selectedRow = 2;
        scene.updateImage();
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
        const auto style = attnlens::ui::heatmapStyle(dark, QFont());
        const QImage image = attnlens::ui::renderHeatmap(scene, style, 20);
        const auto l = attnlens::ui::layoutWholeHeatmap(
            scene, attnlens::ui::measureHeatmap(scene, style.font), style.font, 20);
        QCOMPARE(image.size(), l.natural);
        QCOMPARE(image.pixelColor(1, 1), QColor(30, 30, 30)); // background from the style
        // Cell (1, 4): its colour from the colour map (quiet pixel: no annotation, gap or outline).
        QCOMPARE(image.pixelColor(quietPixel(l.cellRect(1, 4))),
                 expectedColor(ColorMap::Viridis, scene.values(1, 4)));

        HeatmapView view;
        view.setMatrix(scene.values, scene.rowLabels, {});
        view.setAxisTitles("query", "key");
        view.selectRow(2);
        QCOMPARE(view.renderImage(20), attnlens::ui::renderHeatmap(view.scene(), view.style(), 20));
    }

    // The colour bar's tick marks point into the bar: beside a label they read as a minus sign (issue 38: a
    // positive "0.30" looked like "-0.30", a negative one like "--0.30").
    void colourBarTicksAreNotMinusSigns() {
        attnlens::ui::HeatmapScene scene;
        scene.values = ramp(6, 6);
        scene.lo = -0.3f;
        scene.hi = 0.77f;
        scene.updateImage();
        const auto style = attnlens::ui::heatmapStyle(QPalette(), QFont());
        const QImage image = attnlens::ui::renderHeatmap(scene, style, 30);
        const auto l = attnlens::ui::layoutWholeHeatmap(
            scene, attnlens::ui::measureHeatmap(scene, style.font), style.font, 30);
        QVERIFY(!l.barBelow);
        const QColor background = image.pixelColor(1, 1);
        for (int y : {l.bar.top(), l.bar.center().y(), l.bar.bottom()})
            for (int x = l.bar.right() + 1; x <= l.bar.right() + 4; ++x)
                QCOMPARE(image.pixelColor(x, y), background);
    }

    // A 200×200 matrix is drawn from one cached image with one pixel per cell (no per-cell widgets or
    // items), so repaints cost one scaled blit. Its speed is a benchmark's business, not this test's.
    // A picture-grid caption wider than its tile takes a second line instead of being cut to "step …" (issue
    // 38: Diffusion's step strip lost its step numbers at 1024 px), in the view and in its PNG export.
    void gridCaptionsWrapInsteadOfLosingTheirEnd() {
        attnlens::ui::MapGridView grid;
        QImage tile(28, 28, QImage::Format_RGB32);
        tile.fill(Qt::gray);
        const std::vector<QImage> tiles(3, tile);
        grid.setTiles(tiles, {"0", "5", "11"});
        const int oneLine = grid.renderImage(40).height();
        grid.setTiles(tiles, {"step 0 · t=980", "step 5 · t=880", "step 11 · t=760"});
        const int twoLines = grid.renderImage(40).height();
        QCOMPARE(twoLines - oneLine, grid.fontMetrics().height());
    }

    void largeMatrixUsesOneCachedImage() {
        std::mt19937 gen(3);
        std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
        RowMatrix values(200, 200);
        for (Eigen::Index i = 0; i < values.size(); ++i)
            values.data()[i] = uniform(gen);
        HeatmapView view;
        view.resize(900, 800);
        view.setMatrix(values);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.image().size(), QSize(200, 200));
        QCOMPARE(view.image().pixelColor(199, 0),
                 attnlens::ui::toQColor(attnlens::colorAt(ColorMap::Viridis, values(0, 199))));
        const QRect last = view.cellRect(199, 199);
        if (view.viewport()->rect().contains(last.center())) {
            const HeatmapCell cell = view.cellAt(last.center());
            QCOMPARE(cell.row, 199);
            QCOMPARE(cell.col, 199);
        }
        view.viewport()->repaint(); // exercised, not timed
    }
};

QTEST_MAIN(TestHeatmapView)
#include "test_heatmap_view.moc"
