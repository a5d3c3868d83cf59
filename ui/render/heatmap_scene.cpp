// HeatmapScene's data helpers, the style, the label measurements and the layout. Drawing and export
// are in heatmap_paint.cpp.

#include "ui/render/heatmap_scene.h"

#include "ui/render/heatmap_image.h"
#include "ui/render/heatmap_scene_p.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QPalette>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlens::ui {

namespace {

constexpr int kPad = 4;
constexpr int kBarWidth = 12;
constexpr int kBarGap = 10;

} // namespace

QString withMinusSign(QString text) {
    text.replace(QLatin1Char('-'), QChar(0x2212));
    return text;
}

QFont heatmapAnnotationFont(const QFont& base, int cell) {
    QFont f = base;
    f.setPixelSize(std::clamp(static_cast<int>(std::lround(cell * 0.3)), 9, 16));
    return f;
}

// --- scene -----------------------------------------------------------------------------------

QString HeatmapScene::rowLabel(int row) const {
    return row < rowLabels.size() ? rowLabels[row] : QString::number(row);
}

QString HeatmapScene::columnLabel(int col) const {
    return col < columnLabels.size() ? columnLabels[col] : QString::number(col);
}

QString HeatmapScene::formatValue(int row, int col) const {
    if (isMasked(row, col)) return maskedText;
    if (cellTexts.size() == rows() * columns()) return cellTexts[row * columns() + col];
    const float v = values(row, col);
    if (std::isnan(v)) return QStringLiteral("NaN");
    if (std::abs(v) >= 1e4f) return withMinusSign(QString::number(v, 'g', 2));
    QString text = QString::number(v, 'f', decimals);
    // "-0.00" reads as a real negative number; show it as "0.00".
    if (text.startsWith(QLatin1Char('-')) && text.mid(1).toDouble() == 0.0) text = text.mid(1);
    return withMinusSign(text);
}

namespace {

constexpr int kOverviewAbove = 512, kOverviewSide = 256;

// The edge of the square blocks that fit the matrix in at most `most` cells a side (its aspect kept).
int blockEdge(const HeatmapScene& s, int most) {
    return std::max((s.rows() + most - 1) / most, (s.columns() + most - 1) / most);
}

// Block maxima of the unmasked values (−∞ where a whole block is masked), blocks `side` cells a side. Each
// block row's rows are folded into one row first (whole rows at a time: a 4 096² map in a few ms), then
// its columns.
RowMatrix blockMaxima(const HeatmapScene& s, int side) {
    const int nr = s.rows(), nc = s.columns();
    RowMatrix out((nr + side - 1) / side, (nc + side - 1) / side);
    const float lowest = -std::numeric_limits<float>::infinity();
    Eigen::ArrayXf fold(nc);
    for (int b = 0; b < out.rows(); ++b) {
        fold.setConstant(lowest);
        for (int r = b * side; r < std::min(nr, (b + 1) * side); ++r) {
            const auto v = s.values.row(r).transpose().array();
            if (s.hasMask())
                fold = fold.max((s.mask.row(r).transpose().array() != 0.0f).select(v, lowest));
            else
                fold = fold.max(v);
        }
        for (int k = 0, c = 0; c < nc; ++k, c += side)
            out(b, k) = fold.segment(c, std::min(side, nc - c)).maxCoeff();
    }
    return out;
}

void paintMasked(QImage& image, const RowMatrix& keep) {
    const QRgb masked = heatmapMaskedColor().rgb();
    for (int r = 0; r < image.height(); ++r) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
        for (int c = 0; c < image.width(); ++c)
            if (keep(r, c) == 0.0f) line[c] = masked;
    }
}

// values into `image` (reused when it has their shape), one pixel per cell.
void colour(QImage& image, const RowMatrix& values, ColorMap map, float lo, float hi, ColorScale scale) {
    if (!(hi > lo)) { // the matrix's own range (renderHeatmap's rule)
        image = heatmapImage(values, map, lo, hi, 1, scale);
        return;
    }
    const QSize size(static_cast<int>(values.cols()), static_cast<int>(values.rows()));
    if (image.size() != size || image.format() != QImage::Format_RGB32)
        image = QImage(size, QImage::Format_RGB32);
    renderHeatmapArgb(values, map, lo, hi, scale, reinterpret_cast<uint32_t*>(image.bits()),
                      image.bytesPerLine() / 4);
}

// The colours of blockMaxima(s, side): wholly masked blocks in the masked colour.
void colourMaxima(QImage& image, const HeatmapScene& s, int side) {
    RowMatrix maxima = blockMaxima(s, side);
    const RowMatrix keep = maxima.unaryExpr([](float v) { return std::isinf(v) && v < 0 ? 0.0f : 1.0f; });
    maxima = (keep.array() == 0.0f).select(RowMatrix::Constant(maxima.rows(), maxima.cols(), s.lo), maxima);
    colour(image, maxima, s.colorMap, s.lo, s.hi, s.scale);
    if ((keep.array() == 0.0f).any()) paintMasked(image, keep);
}

} // namespace

void HeatmapScene::updateImage() {
    blocks = QImage();
    blocksPer = 0;
    if (empty()) {
        image = overview = QImage();
        return;
    }
    colour(image, values, colorMap, lo, hi, scale);
    if (hasMask()) paintMasked(image, mask);
    if (rows() <= kOverviewAbove && columns() <= kOverviewAbove) {
        overview = QImage();
        return;
    }
    colourMaxima(overview, *this, blockEdge(*this, kOverviewSide));
}

void HeatmapScene::updateBlocks(int per) {
    if (empty() || per <= 1) {
        blocks = QImage();
        blocksPer = 0;
    } else if (per != blocksPer || blocks.isNull()) {
        colourMaxima(blocks, *this, per);
        blocksPer = per;
    }
}

HeatmapScene blockMaximaScene(const HeatmapScene& s, int most) {
    const int side = blockEdge(s, std::max(1, most));
    HeatmapScene out;
    out.values = blockMaxima(s, side);
    out.mask = out.values.unaryExpr([](float v) { return std::isinf(v) && v < 0 ? 0.0f : 1.0f; });
    if ((out.mask.array() != 0.0f).all()) {
        out.mask = RowMatrix();
    } else { // a wholly masked block: −∞ there, lo instead (its colour is the masked one)
        out.values = (out.mask.array() == 0.0f)
                         .select(RowMatrix::Constant(out.rows(), out.columns(), s.lo), out.values);
    }
    const auto firsts = [side](const QStringList& labels, int count, const auto& label) {
        QStringList first;
        for (int i = 0; i < count; i += side)
            first << label(i);
        return labels.isEmpty() && side == 1 ? QStringList() : first;
    };
    out.rowLabels = firsts(s.rowLabels, s.rows(), [&s](int i) { return s.rowLabel(i); });
    out.columnLabels = firsts(s.columnLabels, s.columns(), [&s](int i) { return s.columnLabel(i); });
    const QString per = side > 1 ? QCoreApplication::translate("attnlens::ui::HeatmapView",
                                                               " · %1 × %1 per cell, the largest")
                                       .arg(side)
                                 : QString();
    out.rowTitle = s.rowTitle.isEmpty() ? s.rowTitle : s.rowTitle + per;
    out.columnTitle = s.columnTitle;
    out.maskedText = s.maskedText;
    out.colorMap = s.colorMap;
    out.lo = s.lo;
    out.hi = s.hi;
    out.scale = s.scale;
    out.decimals = s.decimals;
    out.annotate = s.annotate && side == 1;
    out.colorBar = s.colorBar;
    out.labels = s.labels;
    for (KeyShare sink : s.sinks) {
        sink.column /= side;
        out.sinks.push_back(sink);
    }
    out.updateImage();
    return out;
}

QString heatmapToolTip(const HeatmapScene& s, int row, int col, int per) {
    if (row < 0 || row >= s.rows() || col < 0 || col >= s.columns()) return {};
    const auto tr = [](const char* text) {
        return QCoreApplication::translate("attnlens::ui::HeatmapView", text);
    };
    const QString rowTitle = s.rowTitle.isEmpty() ? tr("row") : s.rowTitle;
    const QString colTitle = s.columnTitle.isEmpty() ? tr("column") : s.columnTitle;
    QString text = QStringLiteral("%1 <b>%2</b> (%3) \u2192 %4 <b>%5</b> (%6)<br>")
                       .arg(rowTitle.toHtmlEscaped(), s.rowLabel(row).toHtmlEscaped())
                       .arg(row)
                       .arg(colTitle.toHtmlEscaped(), s.columnLabel(col).toHtmlEscaped())
                       .arg(col);
    if (s.cellTexts.size() == s.rows() * s.columns())
        text += QStringLiteral("<b>%1</b>, ").arg(s.cellTexts[row * s.columns() + col].toHtmlEscaped());
    text += tr("value: <b>%1</b>")
                .arg(withMinusSign(QString::number(static_cast<double>(s.values(row, col)), 'g', 8)));
    if (s.isMasked(row, col))
        text += QStringLiteral("<br><i>") + tr("masked (%1)").arg(s.maskedText) + QStringLiteral("</i>");
    if (per > 1) {
        const int r0 = row / per * per, c0 = col / per * per;
        text +=
            QStringLiteral("<br>") + tr("the largest of rows %1–%2 × columns %3–%4 (one pixel at this zoom)")
                                         .arg(r0)
                                         .arg(std::min(s.rows(), r0 + per) - 1)
                                         .arg(c0)
                                         .arg(std::min(s.columns(), c0 + per) - 1);
    }
    for (const KeyShare& sink : s.sinks)
        if (sink.column == col)
            text += QStringLiteral("<br>") +
                    tr("attention sink: this key takes %1 % of all the attention in the map")
                        .arg(static_cast<double>(sink.share) * 100.0, 0, 'f', 1);
    return text;
}

std::pair<float, float> HeatmapScene::autoRange() const {
    float a = std::numeric_limits<float>::infinity(), b = -a;
    for (int r = 0; r < rows(); ++r)
        for (int c = 0; c < columns(); ++c) {
            const float v = values(r, c);
            if (!std::isfinite(v) || isMasked(r, c)) continue;
            if (scale != ColorScale::Log || v > 0.0f) a = std::min(a, v);
            b = std::max(b, v);
        }
    if (!std::isfinite(a)) return {0.0f, 1.0f};
    if (scale == ColorScale::Log) return {logRangeLow(a, b), b > a ? b : a * 10.0f};
    return {a, b > a ? b : a + 1.0f}; // a constant matrix maps to the low end, as renderHeatmap does
}

QColor heatmapMaskedColor() {
    return QColor(214, 214, 214);
}

QString formatHeatmapTick(float v) {
    const float a = std::abs(v);
    if (a != 0.0f && (a >= 1e4f || a < 1e-2f)) return withMinusSign(QString::number(v, 'g', 3));
    return withMinusSign(QString::number(v, 'f', 2));
}

// --- style and metrics -----------------------------------------------------------------------

HeatmapStyle heatmapStyle(const QPalette& palette, const QFont& font) {
    HeatmapStyle s;
    s.font = font;
    s.text = palette.color(QPalette::WindowText);
    s.dimText = palette.color(QPalette::PlaceholderText);
    s.accent = palette.color(QPalette::Highlight);
    s.accentText = palette.color(QPalette::HighlightedText);
    s.background = palette.color(QPalette::Base);
    s.frame = palette.color(QPalette::Mid);
    return s;
}

HeatmapStyle defaultHeatmapStyle() {
    return heatmapStyle(QGuiApplication::palette(), QGuiApplication::font());
}

HeatmapMetrics measureHeatmap(const HeatmapScene& scene, const QFont& font) {
    HeatmapMetrics m;
    QFont bold = font;
    bold.setBold(true); // the selected label is drawn bold: reserve its width
    const QFontMetrics fm(bold);
    for (int r = 0; r < scene.rows(); ++r)
        m.rowLabelWidth = std::max(m.rowLabelWidth, fm.horizontalAdvance(scene.rowLabel(r)));
    for (int c = 0; c < scene.columns(); ++c)
        m.columnLabelWidth = std::max(m.columnLabelWidth, fm.horizontalAdvance(scene.columnLabel(c)));
    m.annotationSamples = heatmapAnnotationSamples(scene);
    return m;
}

QStringList heatmapAnnotationSamples(const HeatmapScene& scene) {
    // With fixed decimals the widest text comes from the most negative or the largest value.
    QStringList samples = {scene.maskedText};
    // cell texts are elided to their cells: they need room for a few letters
    if (scene.cellTexts.size() == scene.rows() * scene.columns()) return {QStringLiteral("Mmm")};
    float lo = 0.0f, hi = 0.0f;
    const float* v = scene.values.data();
    for (Eigen::Index i = 0; i < scene.values.size(); ++i) {
        const float x = std::abs(v[i]) < 1e4f ? v[i] : 0.0f; // NaN and ±∞ fail the test
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    for (float x : {lo, hi})
        samples.append(withMinusSign(QString::number(x, 'f', scene.decimals)));
    return samples;
}

// --- layout ----------------------------------------------------------------------------------

int HeatmapLayout::columnAt(int x) const {
    const int d = x - origin.x();
    return per > 1 ? d * per : (d >= 0 ? d / cw : -1 - (-d - 1) / cw);
}

int HeatmapLayout::rowAt(int y) const {
    const int d = y - origin.y();
    return per > 1 ? d * per : (d >= 0 ? d / ch : -1 - (-d - 1) / ch);
}

HeatmapCell HeatmapLayout::cellAt(QPoint pos, int rows, int cols) const {
    if (!gridArea.contains(pos)) return {};
    const int c = columnAt(pos.x());
    const int r = rowAt(pos.y());
    if (r < 0 || r >= rows || c < 0 || c >= cols) return {};
    return {r, c};
}

namespace {

bool annotationsFit(const HeatmapScene& scene, const HeatmapMetrics& metrics, const QFont& font, int cw,
                    int ch) {
    if (!scene.annotate || scene.empty()) return false;
    const QFontMetrics fm(heatmapAnnotationFont(font, std::min(cw, ch)));
    int width = 0;
    for (const QString& sample : metrics.annotationSamples)
        width = std::max(width, fm.horizontalAdvance(sample));
    return cw >= width + 6 && ch >= fm.height() + 2;
}

// Space around the grid: titles, labels and the two places the colour bar can take.
struct Margins {
    int rowTitleW = 0, colTitleH = 0, rowLabelW = 0, colLabelW = 0;
    int barRight = 0, barBottom = 0; // room for a bar right of / below the grid
    int left = 0;
};

Margins marginsOf(const HeatmapScene& scene, const HeatmapMetrics& metrics, const QFontMetrics& fm) {
    Margins m;
    const int lineH = fm.height();
    const bool labels = scene.labels && !scene.empty();
    if (labels) {
        m.rowTitleW = scene.rowTitle.isEmpty() ? 0 : lineH + 2;
        m.colTitleH = scene.columnTitle.isEmpty() ? 0 : lineH + 2;
        m.rowLabelW = std::min(metrics.rowLabelWidth, kHeatmapMaxLabelWidth) + 10;
        m.colLabelW = std::min(metrics.columnLabelWidth, kHeatmapMaxLabelWidth);
    }
    if (scene.colorBar && !scene.empty()) {
        int tickW = 0;
        for (float v : {scene.lo, scene.hi, scene.middleValue()})
            tickW = std::max(tickW, fm.horizontalAdvance(formatHeatmapTick(v)));
        m.barRight = kBarGap + kBarWidth + 4 + tickW + 2;
        m.barBottom = 8 + kBarWidth - 2 + 3 + lineH;
    }
    m.left = kPad + m.rowTitleW + m.rowLabelW;
    return m;
}

// The cell edges, whether labels are rotated and where the bar goes.
void chooseCell(HeatmapLayout& l, const HeatmapScene& scene, const Margins& m, const HeatmapFrame& f,
                int lineH, int& top) {
    const int nr = std::max(1, scene.rows()), nc = std::max(1, scene.columns());
    const bool labels = scene.labels && !scene.empty();
    auto fitCells = [&](int t, int right, int below) {
        const int availW = f.area.width() - m.left - right - kPad;
        const int availH = f.area.height() - t - below - kPad;
        const int hi = std::max(1, f.maxCell);
        int w = std::clamp(availW / nc, kHeatmapMinCell, hi);
        int h = std::clamp(availH / nr, kHeatmapMinCell, hi);
        const int square = std::min(w, h);
        const int longest = static_cast<int>(std::floor(square * std::max(1.0, f.maxAspect)));
        return QSize(std::min(w, longest), std::min(h, longest));
    };
    // In fit mode the bar goes below the grid when that leaves bigger cells (narrow, tall panels).
    auto place = [&](int t) {
        if (f.bar != HeatmapFrame::Bar::Auto)
            l.barBelow = m.barRight > 0 && f.bar == HeatmapFrame::Bar::Below;
        if (f.fixedCell > 0) return QSize(f.fixedCell, f.fixedCell);
        const QSize beside = fitCells(t, m.barRight, 0);
        const QSize below = fitCells(t, 0, m.barBottom);
        if (f.bar == HeatmapFrame::Bar::Auto) {
            auto score = [](QSize s) {
                return std::pair(std::min(s.width(), s.height()), s.width() * s.height());
            };
            l.barBelow = m.barRight > 0 && score(below) > score(beside);
        }
        return l.barBelow ? below : beside;
    };
    auto apply = [&](QSize s) {
        l.cw = s.width();
        l.ch = s.height();
        l.cell = std::min(l.cw, l.ch);
    };
    top = kPad + m.colTitleH + (labels ? lineH + 4 : 0);
    apply(place(top));
    if (labels && m.colLabelW + 6 > l.cw) {
        l.rotated = true;
        top = kPad + m.colTitleH + m.colLabelW + 8;
        apply(place(top));
    }
    l.barSpace = l.barBelow ? 0 : m.barRight;
    l.barBelowSpace = l.barBelow ? m.barBottom : 0;
    l.lineH = lineH;
    if (labels) {
        l.rowStep = std::max(1, (lineH + l.ch - 1) / l.ch);
        l.colStep = l.rotated ? std::max(1, (lineH + l.cw - 1) / l.cw) : 1;
    }
}

// Cells per pixel: the frame's when zoomed out that far, in fit mode what shows a map that overflows the
// area at a pixel per cell whole (square blocks, the aspect kept), else 1.
int cellsPerPixel(const HeatmapScene& scene, const HeatmapLayout& l, const HeatmapFrame& f) {
    if (f.fixedCell == 1) return std::max(1, f.fixedPer);
    if (f.fixedCell > 0 || scene.empty()) return 1;
    const int w = std::max(1, l.available.width()), h = std::max(1, l.available.height());
    if (!(l.cw == 1 && scene.columns() > w) && !(l.ch == 1 && scene.rows() > h)) return 1;
    return std::max((scene.columns() + w - 1) / w, (scene.rows() + h - 1) / h);
}

} // namespace

HeatmapLayout layoutHeatmap(const HeatmapScene& scene, const HeatmapMetrics& metrics, const QFont& font,
                            const HeatmapFrame& f) {
    HeatmapLayout l;
    const QFontMetrics fm(font);
    const int lineH = fm.height();
    const Margins m = marginsOf(scene, metrics, fm);
    int top = 0;
    chooseCell(l, scene, m, f, lineH, top);
    l.available = QSize(std::max(0, f.area.width() - m.left - l.barSpace - kPad),
                        std::max(0, f.area.height() - top - l.barBelowSpace - kPad));
    l.per = cellsPerPixel(scene, l, f);
    if (l.per > 1) {
        l.cw = l.ch = l.cell = 1;
        l.rowStep = l.colStep = lineH * l.per; // a label every text line, on a block's first row
        if (!l.rotated) l.colStep = 1;
    }
    l.annotate = l.per == 1 && annotationsFit(scene, metrics, font, l.cw, l.ch);

    const QSize content = l.content(scene.rows(), scene.columns());
    const int contentW = content.width(), contentH = content.height();
    const int gridW = std::min(contentW, l.available.width());
    const int gridH = std::min(contentH, l.available.height());
    const int shift = f.centre ? std::max(0, (l.available.width() - gridW) / 2) : 0;
    l.gridArea = QRect(m.left + shift, top, gridW, gridH);
    l.origin = l.gridArea.topLeft();
    if (contentW > l.available.width())
        l.origin.rx() -= std::clamp(f.scroll.x(), 0, contentW - l.available.width());
    if (contentH > l.available.height())
        l.origin.ry() -= std::clamp(f.scroll.y(), 0, contentH - l.available.height());
    l.rowLabels = QRect(kPad + m.rowTitleW + shift, top, std::max(0, m.rowLabelW - 6), gridH);
    l.colLabels = QRect(l.gridArea.x(), kPad + m.colTitleH, gridW, std::max(0, top - kPad - m.colTitleH - 3));
    l.rowTitle = QRect(kPad + shift, top, m.rowTitleW, gridH);
    l.colTitle = QRect(l.gridArea.x(), kPad, gridW, m.colTitleH);
    if (l.barBelow) {
        l.bar = QRect(l.gridArea.x(), l.gridArea.bottom() + 1 + 8, std::max(gridW, 40), kBarWidth - 2);
    } else if (l.barSpace > 0) {
        const int barH = std::max(gridH, std::min(96, f.area.height() - top - kPad));
        l.bar = QRect(l.gridArea.right() + 1 + kBarGap, top, kBarWidth, std::max(1, barH));
    }
    const int bottom =
        std::max(l.gridArea.bottom() + 1,
                 l.bar.isNull() ? 0 : l.bar.bottom() + 1 + (l.barBelow ? 3 + lineH : lineH / 2));
    l.natural = QSize(m.left + gridW + l.barSpace + kPad, bottom + kPad);
    return l;
}

HeatmapLayout layoutWholeHeatmap(const HeatmapScene& scene, const HeatmapMetrics& metrics, const QFont& font,
                                 int cell, HeatmapFrame::Bar bar, int per) {
    HeatmapFrame frame;
    frame.area = QSize(1 << 20, 1 << 20);
    frame.fixedCell = cell;
    frame.fixedPer = per;
    frame.bar = bar;
    frame.area = layoutHeatmap(scene, metrics, font, frame).natural;
    return layoutHeatmap(scene, metrics, font, frame);
}

} // namespace attnlens::ui
