// HeatmapView's drawing, one function per layer of the picture: cells (with mask hatching, tile gaps and
// the dimming veil), value annotations, outlines (selection, marked cell, hover), labels with axis titles,
// and the colour bar. paintContent() runs them in that order for the screen, PNG and SVG alike.

#include "ui/render/heatmap_image.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/heatmap_view_p.h"

#include <QPainter>

namespace attnlens::ui {

void HeatmapView::paintContent(QPainter& p, const Layout& l, bool vector) const {
    if (m_values.size() == 0 || m_image.isNull()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(QPoint(), l.natural.expandedTo(QSize(120, 40))), Qt::AlignCenter, tr("no data"));
        return;
    }
    const QRect& g = l.gridArea;
    if (g.isEmpty()) return;
    CellRange v;
    v.c0 = std::max(0, (g.left() - l.origin.x()) / l.cell);
    v.c1 = std::min(columns() - 1, (g.right() - l.origin.x()) / l.cell);
    v.r0 = std::max(0, (g.top() - l.origin.y()) / l.cell);
    v.r1 = std::min(rows() - 1, (g.bottom() - l.origin.y()) / l.cell);
    p.save();
    p.setClipRect(g);
    paintCells(p, l, v, vector);
    if (annotationsVisible()) paintAnnotations(p, l, v);
    paintOutlines(p, l, vector);
    p.restore();
    if (m_labels) paintLabels(p, l, v);
    if (!l.bar.isNull()) paintColorBar(p, l);
}

void HeatmapView::paintCells(QPainter& p, const Layout& l, const CellRange& v, bool vector) const {
    const int cell = l.cell;
    const QRect& g = l.gridArea;
    const int r0 = v.r0, r1 = v.r1, c0 = v.c0, c1 = v.c1;
    auto rectOf = [&](int r, int c) { return v.rectOf(l, r, c); };
    const bool selecting = m_selectedRow >= 0 || m_selectedCol >= 0;
    if (vector) {
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c)
                p.fillRect(rectOf(r, c), QColor(m_image.pixel(c, r)));
    } else {
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);
        const QRect source(c0, r0, c1 - c0 + 1, r1 - r0 + 1);
        p.drawImage(QRect(rectOf(r0, c0).topLeft(), QSize(source.width() * cell, source.height() * cell)),
                    m_image, source);
    }
    if (hasMask() && cell >= 5) {
        const QBrush hatch(QColor(150, 150, 150), Qt::BDiagPattern);
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c)
                if (isMasked(r, c)) p.fillRect(rectOf(r, c), hatch);
    }
    if (cell >= 14) { // tile gaps: easier to read single cells in small matrices
        p.setPen(QPen(palette().color(QPalette::Base), 1));
        for (int c = c0 + 1; c <= c1; ++c)
            p.drawLine(l.origin.x() + c * cell, g.top(), l.origin.x() + c * cell, g.bottom());
        for (int r = r0 + 1; r <= r1; ++r)
            p.drawLine(g.left(), l.origin.y() + r * cell, g.right(), l.origin.y() + r * cell);
    }
    if (m_dimUnselected && selecting) {
        const QColor veil(255, 255, 255, 150);
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c)
                if (r != m_selectedRow && c != m_selectedCol) p.fillRect(rectOf(r, c), veil);
    }
}

void HeatmapView::paintAnnotations(QPainter& p, const Layout& l, const CellRange& v) const {
    const int cell = l.cell;
    const int r0 = v.r0, r1 = v.r1, c0 = v.c0, c1 = v.c1;
    auto rectOf = [&](int r, int c) { return v.rectOf(l, r, c); };
    const bool selecting = m_selectedRow >= 0 || m_selectedCol >= 0;
    p.setFont(heatmapAnnotationFont(font(), cell));
    for (int r = r0; r <= r1; ++r)
        for (int c = c0; c <= c1; ++c) {
            QColor bg = isMasked(r, c) ? maskedColor() : QColor(m_image.pixel(c, r));
            QColor fg = contrastingTextColor(bg);
            if (m_dimUnselected && selecting && r != m_selectedRow && c != m_selectedCol)
                fg.setAlpha(110);
            if (isMasked(r, c)) fg = QColor(70, 70, 70);
            p.setPen(fg);
            p.drawText(rectOf(r, c), Qt::AlignCenter, formatValue(r, c));
        }
}

void HeatmapView::paintOutlines(QPainter& p, const Layout& l, bool vector) const {
    const int cell = l.cell;
    auto rectOf = [&](int r, int c) { return CellRange{}.rectOf(l, r, c); };
    // Outlines: a dark and a light stroke, visible on every colour map.
    auto outline = [&](const QRect& rect, qreal width) {
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(QColor(0, 0, 0, 190), width + 2));
        p.drawRect(QRectF(rect).adjusted(1, 1, -1, -1));
        p.setPen(QPen(Qt::white, width));
        p.drawRect(QRectF(rect).adjusted(1, 1, -1, -1));
    };
    p.setRenderHint(QPainter::Antialiasing, false);
    if (m_selectedRow >= 0)
        outline(QRect(l.origin.x(), l.origin.y() + m_selectedRow * cell, columns() * cell, cell),
                cell >= 8 ? 1.5 : 1.0);
    if (m_selectedCol >= 0)
        outline(QRect(l.origin.x() + m_selectedCol * cell, l.origin.y(), cell, rows() * cell),
                cell >= 8 ? 1.5 : 1.0);
    if (m_marked.isValid()) outline(rectOf(m_marked.row, m_marked.col), cell >= 8 ? 2.5 : 1.0);
    if (m_hovered.isValid() && !vector && cell >= 4) {
        p.setPen(QPen(QColor(255, 255, 255, 220), 1));
        p.drawRect(rectOf(m_hovered.row, m_hovered.col).adjusted(0, 0, -1, -1));
    }
}

void HeatmapView::paintLabels(QPainter& p, const Layout& l, const CellRange& v) const {
    const int cell = l.cell;
    const QRect& g = l.gridArea;
    const int r0 = v.r0, r1 = v.r1, c0 = v.c0, c1 = v.c1;
    const QColor text = palette().color(QPalette::WindowText);
    const QColor dimText = palette().color(QPalette::PlaceholderText);
    const QColor accent = palette().color(QPalette::Highlight);
    const QFontMetrics fm(font());
    QFont bold = font();
    bold.setBold(true);
    const int lineH = fm.height();
    // Labels are at least a text line tall, centred on their row/column; when cells are smaller
    // than that only every rowStep-th label is drawn, and none that would touch the selected one.
    auto hiddenBy = [&](int i, int selected) {
        return selected >= 0 && i != selected && std::abs(i - selected) * cell < lineH;
    };
    p.save();
    p.setClipRect(QRect(0, g.top() - lineH / 2, l.rowLabels.right() + 4, g.height() + lineH));
    for (int r = r0; r <= r1; ++r) {
        const bool selected = r == m_selectedRow;
        if (!selected && (r % l.rowStep != 0 || hiddenBy(r, m_selectedRow))) continue;
        const int cy = l.origin.y() + r * cell + cell / 2;
        const int h = std::max(lineH, std::min(cell, lineH + 8)); // a pill, not a slab, on big cells
        const QRect rect(l.rowLabels.x(), cy - h / 2, l.rowLabels.width(), h);
        if (selected) {
            p.setPen(Qt::NoPen);
            p.setBrush(accent);
            p.drawRoundedRect(rect.adjusted(-2, 0, 2, 0), 3, 3);
        }
        p.setFont(selected ? bold : font());
        p.setPen(selected ? palette().color(QPalette::HighlightedText)
                          : (m_dimUnselected && m_selectedRow >= 0 ? dimText : text));
        p.drawText(rect, Qt::AlignRight | Qt::AlignVCenter,
                   QFontMetrics(p.font()).elidedText(rowLabel(r), Qt::ElideRight, rect.width()));
    }
    p.restore();
    p.save();
    p.setClipRect(QRect(g.left() - lineH / 2, 0, g.width() + lineH, l.colLabels.bottom() + 2));
    for (int c = c0; c <= c1; ++c) {
        const bool selected = c == m_selectedCol;
        if (!selected && (c % l.colStep != 0 || (l.rotated && hiddenBy(c, m_selectedCol)))) continue;
        p.setFont(selected ? bold : font());
        const QFontMetrics lfm(p.font());
        const QString label = lfm.elidedText(columnLabel(c), Qt::ElideRight, kHeatmapMaxLabelWidth);
        const int cx = l.origin.x() + c * cell + cell / 2;
        const int w = l.rotated ? std::max(cell, lineH) : cell;
        const QRect rect(cx - w / 2, l.colLabels.y(), w, l.colLabels.height());
        if (selected) {
            p.setPen(Qt::NoPen);
            p.setBrush(accent);
            p.drawRoundedRect(rect.adjusted(0, -1, 0, 1), 3, 3);
        }
        p.setPen(selected ? palette().color(QPalette::HighlightedText)
                          : (m_dimUnselected && m_selectedCol >= 0 ? dimText : text));
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
    QFont small = font();
    small.setItalic(true);
    p.setFont(small);
    p.setPen(dimText);
    if (!l.colTitle.isEmpty()) p.drawText(l.colTitle, Qt::AlignHCenter | Qt::AlignTop, m_colTitle);
    if (!l.rowTitle.isEmpty()) {
        p.save();
        p.translate(l.rowTitle.left(), l.rowTitle.center().y());
        p.rotate(-90);
        p.drawText(QRect(-l.rowTitle.height() / 2, 0, l.rowTitle.height(), l.rowTitle.width()),
                   Qt::AlignCenter, m_rowTitle);
        p.restore();
    }
}

void HeatmapView::paintColorBar(QPainter& p, const Layout& l) const {
    const QColor text = palette().color(QPalette::WindowText);
    const QFontMetrics fm(font());
    const Qt::Orientation orientation = l.barBelow ? Qt::Horizontal : Qt::Vertical;
    const int length = l.barBelow ? l.bar.width() : l.bar.height();
    const int thickness = l.barBelow ? l.bar.height() : l.bar.width();
    p.drawImage(l.bar, colorBarImage(m_colorMap, length, thickness, orientation));
    p.setPen(palette().color(QPalette::Mid));
    p.setBrush(Qt::NoBrush);
    p.drawRect(l.bar.adjusted(0, 0, -1, -1));
    p.setFont(font());
    p.setPen(text);
    if (l.barBelow) {
        const int y = l.bar.bottom() + 1;
        auto tick = [&](int x, float v, Qt::Alignment align) {
            p.drawLine(x, y, x, y + 2);
            QRect r(x - 100, y + 3, 200, fm.height());
            if (align & Qt::AlignLeft) r.moveLeft(x);
            if (align & Qt::AlignRight) r.moveRight(x);
            p.drawText(r, align | Qt::AlignTop, formatTick(v));
        };
        // Ends always; the middle value only where it clears both end labels.
        const float mid = 0.5f * (m_lo + m_hi);
        const int wLo = fm.horizontalAdvance(formatTick(m_lo));
        const int wHi = fm.horizontalAdvance(formatTick(m_hi));
        const int wMid = fm.horizontalAdvance(formatTick(mid));
        const int gap = fm.horizontalAdvance(QLatin1Char(' ')) * 2;
        tick(l.bar.left(), m_lo, Qt::AlignLeft);
        if (wLo + gap + wHi <= l.bar.width()) {
            tick(l.bar.right(), m_hi, Qt::AlignRight);
            const int cx = l.bar.center().x();
            if (cx - wMid / 2 >= l.bar.left() + wLo + gap &&
                cx + (wMid + 1) / 2 <= l.bar.right() - wHi - gap)
                tick(cx, mid, Qt::AlignHCenter);
        } else {
            // Too narrow for both ends side by side: the maximum goes on a second line.
            const int y2 = l.bar.bottom() + 1 + 3 + fm.height();
            p.drawText(QRect(l.bar.right() - 200, y2, 200, fm.height()), Qt::AlignRight | Qt::AlignTop,
                       formatTick(m_hi));
        }
    } else {
        const int x = l.bar.right() + 1;
        auto tick = [&](int y, float v) {
            p.drawLine(x, y, x + 3, y);
            p.drawText(QRect(x + 5, y - fm.height() / 2, 200, fm.height()),
                       Qt::AlignLeft | Qt::AlignVCenter, formatTick(v));
        };
        tick(l.bar.top(), m_hi);
        tick(l.bar.bottom(), m_lo);
        if (l.bar.height() >= 3 * fm.height()) tick(l.bar.center().y(), 0.5f * (m_lo + m_hi));
    }
}

} // namespace attnlens::ui
