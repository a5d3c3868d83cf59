// The heatmap's drawing, one function per layer of the picture: cells (with mask hatching, tile gaps and
// the dimming veil), value annotations, outlines (selection, marked cell, hover), labels with axis titles,
// and the colour bar. paintHeatmap() runs them in that order for the screen, PNG and SVG alike; the
// exports at the end lay out the whole picture and paint it once.

#include "ui/render/heatmap_image.h"
#include "ui/render/heatmap_scene.h"
#include "ui/render/heatmap_scene_p.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QPolygonF>
#include <QRegion>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <optional>

namespace attnlens::ui {

namespace {

// The cells of the grid that intersect the visible area.
struct CellRange {
    int r0 = 0, r1 = -1, c0 = 0, c1 = -1;
};

QString trHeatmap(const char* text) {
    return QCoreApplication::translate("attnlens::ui::HeatmapView", text);
}

void paintCells(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l, const CellRange& v,
                const HeatmapStyle& style) {
    const int cw = l.cw, ch = l.ch;
    const QRect& g = l.gridArea;
    const int r0 = v.r0, r1 = v.r1, c0 = v.c0, c1 = v.c1;
    auto rectOf = [&](int r, int c) { return l.cellRect(r, c); };
    const bool selecting = s.selecting();
    if (style.vector) {
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c)
                p.fillRect(rectOf(r, c), QColor(s.image.pixel(c, r)));
    } else if (l.per > 1) { // a pixel per block: its largest value (`image` sampled where none are made)
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);
        const int per = l.per;
        const QRect blocks(c0 / per, r0 / per, c1 / per - c0 / per + 1, r1 / per - r0 / per + 1);
        const QRect target(rectOf(r0, c0).topLeft(), blocks.size());
        if (s.blocksPer == per && !s.blocks.isNull())
            p.drawImage(target, s.blocks, blocks);
        else
            p.drawImage(target, s.image, QRect(c0, r0, c1 - c0 + 1, r1 - r0 + 1));
    } else {
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);
        const QRect source(c0, r0, c1 - c0 + 1, r1 - r0 + 1);
        p.drawImage(QRect(rectOf(r0, c0).topLeft(), QSize(source.width() * cw, source.height() * ch)),
                    s.image, source);
    }
    if (s.hasMask() && l.cell >= 5) {
        const QBrush hatch(QColor(150, 150, 150), Qt::BDiagPattern);
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c)
                if (s.isMasked(r, c)) p.fillRect(rectOf(r, c), hatch);
    }
    if (l.cell >= 14) { // tile gaps: easier to read single cells in small matrices
        p.setPen(QPen(style.background, 1));
        for (int c = c0 + 1; c <= c1; ++c)
            p.drawLine(l.origin.x() + c * cw, g.top(), l.origin.x() + c * cw, g.bottom());
        for (int r = r0 + 1; r <= r1; ++r)
            p.drawLine(g.left(), l.origin.y() + r * ch, g.right(), l.origin.y() + r * ch);
    }
    if (s.dimUnselected && selecting) {
        QColor veil = style.background; // fades the cells towards the background, light or dark
        veil.setAlpha(150);
        QRegion veiled(g);
        if (s.selectedRow >= 0) veiled -= QRect(g.left(), l.rowY(s.selectedRow), g.width(), ch);
        if (s.selectedColumn >= 0) veiled -= QRect(l.columnX(s.selectedColumn), g.top(), cw, g.height());
        for (const QRect& rect : veiled)
            p.fillRect(rect, veil);
    }
}

void paintAnnotations(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l, const CellRange& v,
                      const HeatmapStyle& style) {
    const int r0 = v.r0, r1 = v.r1, c0 = v.c0, c1 = v.c1;
    auto rectOf = [&](int r, int c) { return l.cellRect(r, c); };
    const bool selecting = s.selecting();
    p.setFont(heatmapAnnotationFont(style.font, l.cell));
    const QFontMetrics fm(p.font());
    const bool texts = s.cellTexts.size() == s.rows() * s.columns();
    for (int r = r0; r <= r1; ++r)
        for (int c = c0; c <= c1; ++c) {
            QColor bg = s.isMasked(r, c) ? heatmapMaskedColor() : QColor(s.image.pixel(c, r));
            QColor fg = contrastingTextColor(bg);
            if (s.dimUnselected && selecting && r != s.selectedRow && c != s.selectedColumn) fg.setAlpha(110);
            if (s.isMasked(r, c)) fg = QColor(70, 70, 70);
            p.setPen(fg);
            const QRect rect = rectOf(r, c);
            p.drawText(rect, Qt::AlignCenter,
                       texts ? fm.elidedText(s.formatValue(r, c), Qt::ElideRight, rect.width() - 4)
                             : s.formatValue(r, c));
        }
}

void paintOutlines(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l, const HeatmapStyle& style) {
    const int cell = l.cell;
    auto rectOf = [&](int r, int c) { return l.cellRect(r, c); };
    // Outlines: a dark and a light stroke, visible on every colour map.
    auto outline = [&](const QRect& rect, qreal width) {
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(QColor(0, 0, 0, 190), width + 2));
        p.drawRect(QRectF(rect).adjusted(1, 1, -1, -1));
        p.setPen(QPen(Qt::white, width));
        p.drawRect(QRectF(rect).adjusted(1, 1, -1, -1));
    };
    p.setRenderHint(QPainter::Antialiasing, false);
    const QSize content = l.content(s.rows(), s.columns());
    if (s.selectedRow >= 0)
        outline(QRect(l.origin.x(), l.rowY(s.selectedRow), content.width(), l.ch), cell >= 8 ? 1.5 : 1.0);
    if (s.selectedColumn >= 0)
        outline(QRect(l.columnX(s.selectedColumn), l.origin.y(), l.cw, content.height()),
                cell >= 8 ? 1.5 : 1.0);
    if (s.marked.isValid()) outline(rectOf(s.marked.row, s.marked.col), cell >= 8 ? 2.5 : 1.0);
    if (s.hovered.isValid() && !style.vector && cell >= 4) {
        p.setPen(QPen(QColor(255, 255, 255, 220), 1));
        p.drawRect(rectOf(s.hovered.row, s.hovered.col).adjusted(0, 0, -1, -1));
    }
}

// Sink columns: an orange triangle at the top of each one's column (within the grid, so it scrolls with
// it), visible at any zoom, also where the column is one pixel wide.
void paintSinkMarks(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l) {
    if (s.sinks.empty()) return;
    p.setRenderHint(QPainter::Antialiasing, true);
    const double top = std::max(l.gridArea.top(), l.origin.y());
    const double half = std::clamp(l.cw / 2.0, 5.0, 9.0);
    for (const KeyShare& k : s.sinks) {
        if (k.column < 0 || k.column >= s.columns()) continue;
        const double x = l.columnX(k.column) + 0.5 * l.cw;
        const QPolygonF triangle{QPointF(x - half, top), QPointF(x + half, top),
                                 QPointF(x, top + 1.6 * half)};
        p.setPen(QPen(QColor(0, 0, 0, 200), 1));
        p.setBrush(QColor(255, 140, 0));
        p.drawPolygon(triangle);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

// Labels are at least a text line tall, centred on their row/column. When cells are smaller than that
// only every rowStep-th label is drawn (see heatmapRowLabelDrawn), with a tick at the rows between.
void paintLabels(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l, const CellRange& v,
                 const HeatmapStyle& style) {
    const QRect& g = l.gridArea;
    const int r0 = v.r0, r1 = v.r1, c0 = v.c0, c1 = v.c1;
    const QColor text = style.text;
    const QColor dimText = style.dimText;
    const QColor accent = style.accent;
    QFont bold = style.font;
    bold.setBold(true);
    const int lineH = l.lineH;
    p.save();
    p.setClipRect(QRect(0, g.top() - lineH / 2, l.rowLabels.right() + 4, g.height() + lineH));
    for (int r = r0; r <= r1; ++r) {
        const int cy = l.rowY(r) + l.ch / 2;
        if (!heatmapRowLabelDrawn(s, l, r)) {
            if (l.ch >= 3) {
                p.setPen(dimText);
                p.drawLine(l.rowLabels.right() + 1, cy, l.rowLabels.right() + 3, cy);
            }
            continue;
        }
        const bool selected = r == s.selectedRow;
        const bool hovered = r == s.hovered.row && !selected;
        const int h = std::max(lineH, std::min(l.ch, lineH + 8)); // a pill, not a slab, on big cells
        const QRect rect(l.rowLabels.x(), cy - h / 2, l.rowLabels.width(), h);
        if (selected || hovered) {
            p.setPen(Qt::NoPen);
            p.setBrush(selected ? accent : style.background);
            p.drawRoundedRect(rect.adjusted(-2, 0, 2, 0), 3, 3);
        }
        p.setFont(selected ? bold : style.font);
        p.setPen(selected ? style.accentText
                          : (s.dimUnselected && s.selectedRow >= 0 && !hovered ? dimText : text));
        p.drawText(rect, Qt::AlignRight | Qt::AlignVCenter,
                   QFontMetrics(p.font()).elidedText(s.rowLabel(r), Qt::ElideRight, rect.width()));
    }
    p.restore();
    p.save();
    p.setClipRect(QRect(g.left() - lineH / 2, 0, g.width() + lineH, l.colLabels.bottom() + 2));
    for (int c = c0; c <= c1; ++c) {
        const int cx = l.columnX(c) + l.cw / 2;
        if (!heatmapColumnLabelDrawn(s, l, c)) {
            if (l.cw >= 3) {
                p.setPen(dimText);
                p.drawLine(cx, l.colLabels.bottom() - 1, cx, l.colLabels.bottom() + 1);
            }
            continue;
        }
        const bool selected = c == s.selectedColumn;
        const bool hovered = c == s.hovered.col && !selected;
        p.setFont(selected ? bold : style.font);
        const QFontMetrics lfm(p.font());
        const QString label = lfm.elidedText(s.columnLabel(c), Qt::ElideRight, kHeatmapMaxLabelWidth);
        const int w = l.rotated ? std::max(l.cw, lineH) : l.cw;
        const QRect rect(cx - w / 2, l.colLabels.y(), w, l.colLabels.height());
        if (selected || hovered) {
            p.setPen(Qt::NoPen);
            p.setBrush(selected ? accent : style.background);
            p.drawRoundedRect(rect.adjusted(0, -1, 0, 1), 3, 3);
        }
        p.setPen(selected ? style.accentText
                          : (s.dimUnselected && s.selectedColumn >= 0 && !hovered ? dimText : text));
        if (l.rotated) {
            p.save();
            p.translate(cx + 1, rect.bottom());
            p.rotate(-90);
            p.drawText(QRect(2, -w / 2, rect.height() - 2, w), Qt::AlignLeft | Qt::AlignVCenter, label);
            p.restore();
        } else {
            p.drawText(rect.adjusted(-4, 0, 4, 0), Qt::AlignHCenter | Qt::AlignBottom, label);
        }
    }
    p.restore();
    // Axis titles.
    QFont small = style.font;
    small.setItalic(true);
    p.setFont(small);
    p.setPen(dimText);
    if (!l.colTitle.isEmpty()) p.drawText(l.colTitle, Qt::AlignHCenter | Qt::AlignTop, s.columnTitle);
    if (!l.rowTitle.isEmpty()) {
        p.save();
        p.translate(l.rowTitle.left(), l.rowTitle.center().y());
        p.rotate(-90);
        p.drawText(QRect(-l.rowTitle.height() / 2, 0, l.rowTitle.height(), l.rowTitle.width()),
                   Qt::AlignCenter, s.rowTitle);
        p.restore();
    }
}

void paintColorBar(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l, const HeatmapStyle& style) {
    const QColor text = style.text;
    const QFontMetrics fm(style.font);
    const Qt::Orientation orientation = l.barBelow ? Qt::Horizontal : Qt::Vertical;
    const int length = l.barBelow ? l.bar.width() : l.bar.height();
    const int thickness = l.barBelow ? l.bar.height() : l.bar.width();
    p.drawImage(l.bar, colorBarImage(s.colorMap, length, thickness, orientation));
    p.setPen(style.frame);
    p.setBrush(Qt::NoBrush);
    p.drawRect(l.bar.adjusted(0, 0, -1, -1));
    p.setFont(style.font);
    p.setPen(text);
    if (l.barBelow) {
        const int y = l.bar.bottom() + 1;
        auto tick = [&](int x, float v, Qt::Alignment align) {
            p.drawLine(x, y, x, y + 2);
            QRect r(x - 100, y + 3, 200, fm.height());
            if (align & Qt::AlignLeft) r.moveLeft(x);
            if (align & Qt::AlignRight) r.moveRight(x);
            p.drawText(r, align | Qt::AlignTop, formatHeatmapTick(v));
        };
        // Ends always; the middle value only where it clears both end labels.
        const float mid = s.middleValue();
        const int wLo = fm.horizontalAdvance(formatHeatmapTick(s.lo));
        const int wHi = fm.horizontalAdvance(formatHeatmapTick(s.hi));
        const int wMid = fm.horizontalAdvance(formatHeatmapTick(mid));
        const int gap = fm.horizontalAdvance(QLatin1Char(' ')) * 2;
        tick(l.bar.left(), s.lo, Qt::AlignLeft);
        if (wLo + gap + wHi <= l.bar.width()) {
            tick(l.bar.right(), s.hi, Qt::AlignRight);
            const int cx = l.bar.center().x();
            if (cx - wMid / 2 >= l.bar.left() + wLo + gap && cx + (wMid + 1) / 2 <= l.bar.right() - wHi - gap)
                tick(cx, mid, Qt::AlignHCenter);
        } else {
            // Too narrow for both ends side by side: the maximum goes on a second line.
            const int y2 = l.bar.bottom() + 1 + 3 + fm.height();
            p.drawText(QRect(l.bar.right() - 200, y2, 200, fm.height()), Qt::AlignRight | Qt::AlignTop,
                       formatHeatmapTick(s.hi));
        }
    } else {
        const int x = l.bar.right() + 1;
        auto tick = [&](int y, float v) {
            // The tick points into the bar: outside it, beside the label, it read as a minus ("-0.77").
            p.drawLine(x - 4, y, x - 1, y);
            p.drawText(QRect(x + 5, y - fm.height() / 2, 200, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                       formatHeatmapTick(v));
        };
        tick(l.bar.top(), s.hi);
        tick(l.bar.bottom(), s.lo);
        if (l.bar.height() >= 3 * fm.height()) tick(l.bar.center().y(), s.middleValue());
    }
}

// Whether label i (of n, every `step`-th, `edge` px apart) is drawn, given the labels that are always
// drawn (selected, hovered): those win, and regular labels closer than a text line to them are left out.
bool labelDrawn(int i, int step, double edge, int lineH, std::initializer_list<int> forced) {
    for (int f : forced)
        if (f == i) return true;
    if (i % step != 0) return false;
    for (int f : forced)
        if (f >= 0 && std::abs(i - f) * edge < lineH) return false;
    return true;
}

} // namespace

bool heatmapRowLabelDrawn(const HeatmapScene& s, const HeatmapLayout& l, int row) {
    if (!s.labels || row < 0 || row >= s.rows()) return false;
    return labelDrawn(row, l.rowStep, l.pixelsPerRow(), l.lineH, {s.selectedRow, s.hovered.row});
}

bool heatmapColumnLabelDrawn(const HeatmapScene& s, const HeatmapLayout& l, int col) {
    if (!s.labels || col < 0 || col >= s.columns()) return false;
    // Horizontal labels are as wide as their cells: every one fits.
    if (!l.rotated) return true;
    return labelDrawn(col, l.colStep, l.pixelsPerColumn(), l.lineH, {s.selectedColumn, s.hovered.col});
}

void paintHeatmapOverview(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l, const QRect& where,
                          const HeatmapStyle& style) {
    if (s.empty() || s.image.isNull() || where.isEmpty()) return;
    p.save();
    p.setRenderHint(QPainter::SmoothPixmapTransform, true);
    p.fillRect(where.adjusted(-3, -3, 3, 3), style.background);
    p.drawImage(where, s.overview.isNull() ? s.image : s.overview);
    // The visible part, in matrix coordinates scaled to the overview.
    const QSize content = l.content(s.rows(), s.columns());
    const double sx = where.width() / static_cast<double>(content.width());
    const double sy = where.height() / static_cast<double>(content.height());
    const QRectF visible((l.gridArea.left() - l.origin.x()) * sx + where.left(),
                         (l.gridArea.top() - l.origin.y()) * sy + where.top(), l.gridArea.width() * sx,
                         l.gridArea.height() * sy);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(QColor(0, 0, 0, 200), 3));
    p.drawRect(visible.adjusted(0.5, 0.5, -0.5, -0.5));
    p.setPen(QPen(Qt::white, 1.5));
    p.drawRect(visible.adjusted(0.5, 0.5, -0.5, -0.5));
    p.setPen(style.frame);
    p.drawRect(where.adjusted(-1, -1, 0, 0));
    p.restore();
}

void paintHeatmap(QPainter& p, const HeatmapScene& s, const HeatmapLayout& l, const HeatmapStyle& style) {
    if (s.empty() || s.image.isNull()) {
        p.setPen(style.dimText);
        p.drawText(QRect(QPoint(), l.natural.expandedTo(QSize(120, 40))), Qt::AlignCenter,
                   trHeatmap("no data"));
        return;
    }
    const QRect& g = l.gridArea;
    if (g.isEmpty()) return;
    CellRange v;
    v.c0 = std::max(0, l.columnAt(g.left()));
    v.c1 = std::min(s.columns() - 1, l.columnAt(g.right()) + l.per - 1);
    v.r0 = std::max(0, l.rowAt(g.top()));
    v.r1 = std::min(s.rows() - 1, l.rowAt(g.bottom()) + l.per - 1);
    p.save();
    p.setClipRect(g);
    paintCells(p, s, l, v, style);
    if (l.annotate) paintAnnotations(p, s, l, v, style);
    paintOutlines(p, s, l, style);
    paintSinkMarks(p, s, l);
    p.restore();
    if (s.labels) paintLabels(p, s, l, v, style);
    if (!l.bar.isNull()) paintColorBar(p, s, l, style);
}

// --- export ----------------------------------------------------------------------------------

int defaultExportCell(const HeatmapScene& scene) {
    const int longest = std::max({1, scene.rows(), scene.columns()});
    return std::clamp(640 / longest, 6, 36);
}

namespace {

// A long map's blocks (blockMaximaScene) where the export would otherwise be drawn cell by cell past the
// limits (heatmap_scene.h); null where the scene is drawn as it is.
std::optional<HeatmapScene> exportBlocks(const HeatmapScene& scene, int cell, bool svg) {
    const int longest = std::max(scene.rows(), scene.columns());
    if (cell <= 0 && longest > kExportEveryCell) return blockMaximaScene(scene, kExportBlocks);
    if (cell > 0 && static_cast<long long>(cell) * longest > kExportLargestSide)
        return blockMaximaScene(scene, kExportLargestSide / cell);
    if (svg && static_cast<long long>(scene.rows()) * scene.columns() > kExportBlocks * kExportBlocks)
        return blockMaximaScene(scene, kExportBlocks);
    return std::nullopt;
}

} // namespace

QImage renderHeatmap(const HeatmapScene& scene, const HeatmapStyle& style, int cell) {
    if (const auto blocks = exportBlocks(scene, cell, false)) return renderHeatmap(*blocks, style, cell);
    if (cell <= 0) cell = defaultExportCell(scene);
    const HeatmapLayout l = layoutWholeHeatmap(scene, measureHeatmap(scene, style.font), style.font, cell);
    QImage image(l.natural, QImage::Format_ARGB32_Premultiplied);
    image.fill(style.background);
    QPainter p(&image);
    p.setFont(style.font);
    HeatmapStyle raster = style;
    raster.vector = false;
    paintHeatmap(p, scene, l, raster);
    return image;
}

bool saveHeatmapPng(const HeatmapScene& scene, const HeatmapStyle& style, const QString& path, int cell) {
    return renderHeatmap(scene, style, cell).save(path, "PNG");
}

bool saveHeatmapSvg(const HeatmapScene& scene, const HeatmapStyle& style, const QString& path, int cell,
                    const QString& title) {
    if (const auto blocks = exportBlocks(scene, cell, true))
        return saveHeatmapSvg(*blocks, style, path, cell, title);
    if (cell <= 0) cell = defaultExportCell(scene);
    const HeatmapLayout l = layoutWholeHeatmap(scene, measureHeatmap(scene, style.font), style.font, cell);
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(l.natural);
    generator.setViewBox(QRect(QPoint(), l.natural));
    generator.setTitle(title.isEmpty() ? trHeatmap("Heatmap") : title);
    generator.setDescription(trHeatmap("Attention Lens heatmap, %1 × %2, colour map %3")
                                 .arg(scene.rows())
                                 .arg(scene.columns())
                                 .arg(colorMapDisplayName(scene.colorMap)));
    QPainter p;
    if (!p.begin(&generator)) return false;
    p.setFont(style.font);
    HeatmapStyle vector = style;
    vector.vector = true;
    paintHeatmap(p, scene, l, vector);
    return p.end();
}

} // namespace attnlens::ui
