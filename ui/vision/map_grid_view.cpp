#include "ui/vision/map_grid_view.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

namespace {
constexpr int kTileGap = 8;
constexpr int kMinEdge = 48;
constexpr int kMaxEdge = 220;
} // namespace

MapGridView::MapGridView(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding);
    setCursor(Qt::PointingHandCursor);
}

void MapGridView::setTiles(std::vector<QImage> tiles, QStringList titles) {
    if (tiles.size() != m_tiles.size()) m_selected = -1;
    m_tiles = std::move(tiles);
    m_titles = std::move(titles);
    updateGeometry();
    update();
}

void MapGridView::setTile(int index, QImage tile) {
    if (index < 0 || index >= count()) return;
    m_tiles[static_cast<size_t>(index)] = std::move(tile);
    update(tileRect(index));
}

void MapGridView::clear() {
    setTiles({}, {});
}

void MapGridView::setMaxColumns(int columns) {
    m_maxColumns = std::max(0, columns);
    updateGeometry();
    update();
}

int MapGridView::columns() const {
    return columnsFor(width(), height());
}

int MapGridView::rows() const {
    return rowsFor(columns());
}

int MapGridView::rowsFor(int columns) const {
    return columns ? (count() + columns - 1) / columns : 0;
}

int MapGridView::columnsFor(int width, int height) const {
    const int n = count();
    if (m_maxColumns > 0) return std::min(n, m_maxColumns);
    // Automatic: the column count that gives the largest tiles in this area.
    int best = n, bestEdge = -1;
    for (int c = 1; c <= n; ++c) {
        const int edge = tileEdge(width, height, c);
        if (edge > bestEdge) {
            bestEdge = edge;
            best = c;
        }
    }
    return best;
}

void MapGridView::setSelected(int index) {
    index = index >= 0 && index < count() ? index : -1;
    if (index == m_selected) return;
    m_selected = index;
    update();
}

QSize MapGridView::tileSize(int edge) const {
    if (m_tiles.empty() || m_tiles.front().isNull()) return {edge, edge};
    const QSize s = m_tiles.front().size();
    if (s.width() >= s.height()) return {edge, std::max(1, edge * s.height() / s.width())};
    return {std::max(1, edge * s.width() / s.height()), edge};
}

int MapGridView::titleHeight(const QFontMetrics& fm, int tileWidth) const {
    // A caption wider than its tile wraps onto a second line instead of losing its end ("step …").
    int lines = 1;
    for (const QString& t : m_titles)
        if (fm.horizontalAdvance(t) > tileWidth + kTileGap - 1) lines = 2; // the caption's box (paintTiles)
    return lines * fm.height() + 4;
}

int MapGridView::tileEdge(int width, int height, int c) const {
    const int r = rowsFor(c);
    if (!c) return kMinEdge;
    const auto fit = [&](int title) {
        int edge = (width - (c + 1) * kTileGap) / c;
        if (height > 0) {
            // Fit the height too: the tile's height is edge · unit.height / longer side.
            const QSize unit = tileSize(1000);
            const int byHeight =
                (height - r * (title + kTileGap) - kTileGap) * 1000 / std::max(1, r * unit.height());
            edge = std::min(edge, byHeight * std::max(unit.width(), unit.height()) / 1000);
        }
        return std::clamp(edge, kMinEdge / 2, kMaxEdge);
    };
    const int oneLine = fontMetrics().height() + 4;
    const int edge = fit(oneLine);
    const int title = titleHeight(fontMetrics(), tileSize(edge).width());
    return title == oneLine ? edge : fit(title);
}

QRect MapGridView::tileRect(int index) const {
    if (index < 0 || index >= count()) return {};
    const int c = columns();
    const int edge = tileEdge(width(), height(), c);
    const QSize ts = tileSize(edge);
    const int title = titleHeight(fontMetrics(), ts.width());
    const int totalW = c * ts.width() + (c - 1) * kTileGap;
    const int x0 = std::max(kTileGap, (width() - totalW) / 2);
    const int col = index % c, row = index / c;
    return {x0 + col * (ts.width() + kTileGap), kTileGap / 2 + title + row * (ts.height() + title + kTileGap),
            ts.width(), ts.height()};
}

int MapGridView::tileAt(const QPoint& pos) const {
    for (int i = 0; i < count(); ++i)
        if (const QRect r = tileRect(i);
            r.adjusted(0, -titleHeight(fontMetrics(), r.width()), 0, 0).contains(pos))
            return i;
    return -1;
}

void MapGridView::paintTiles(QPainter& p, int edge, int c, QPoint origin, bool forExport) const {
    const QSize ts = tileSize(edge);
    const int title = titleHeight(p.fontMetrics(), ts.width());
    for (int i = 0; i < count(); ++i) {
        const QRect r = forExport ? QRect(origin.x() + (i % c) * (ts.width() + kTileGap),
                                          origin.y() + title + (i / c) * (ts.height() + title + kTileGap),
                                          ts.width(), ts.height())
                                  : tileRect(i);
        const QImage& img = m_tiles[static_cast<size_t>(i)];
        p.setRenderHint(QPainter::SmoothPixmapTransform, r.width() < img.width());
        p.drawImage(r, img);
        const bool sel = i == m_selected && !forExport;
        p.setPen(sel ? palette().color(QPalette::Highlight) : palette().color(QPalette::WindowText));
        QFont f = p.font();
        f.setBold(sel);
        p.setFont(f);
        const QRect box(r.x() - kTileGap / 2, r.y() - title, r.width() + kTileGap - 1, title - 2);
        const QString text = m_titles.value(i);
        if (p.fontMetrics().horizontalAdvance(text) <= box.width())
            p.drawText(box, Qt::AlignHCenter | Qt::AlignBottom, text);
        else // two lines at most, the second elided
            p.drawText(box, Qt::AlignHCenter | Qt::AlignBottom | Qt::TextWordWrap,
                       p.fontMetrics().elidedText(text, Qt::ElideRight, 2 * box.width() - 8));
        if (sel) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 3));
            p.drawRect(r.adjusted(-2, -2, 1, 1));
        } else {
            p.setPen(QPen(QColor(0, 0, 0, 50), 1));
            p.drawRect(r.adjusted(0, 0, -1, -1));
        }
    }
}

void MapGridView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    if (m_tiles.empty()) return;
    const int c = columns();
    paintTiles(p, tileEdge(width(), height(), c), c, {}, false);
}

QImage MapGridView::renderImage(int tileEdgePx) const {
    if (m_tiles.empty()) return {};
    const QSize ts = tileSize(tileEdgePx);
    const int title = titleHeight(fontMetrics(), ts.width());
    // Export layout: the fixed maximum, else one row up to 6 tiles, else two rows.
    const int n = count();
    const int c = m_maxColumns > 0 ? std::min(n, m_maxColumns) : (n <= 6 ? n : (n + 1) / 2), r = rowsFor(c);
    QImage out(c * ts.width() + (c + 1) * kTileGap, r * (ts.height() + title + kTileGap) + kTileGap,
               QImage::Format_RGB32);
    out.fill(Qt::white);
    QPainter p(&out);
    p.setFont(font());
    paintTiles(p, tileEdgePx, c, {kTileGap, kTileGap / 2}, true);
    return out;
}

QSize MapGridView::sizeHint() const {
    const int edge = 120;
    const QSize ts = tileSize(edge);
    const int c = std::max(1, std::min(count(), 4));
    return {c * ts.width() + (c + 1) * kTileGap,
            std::max(1, rowsFor(c)) * (ts.height() + fontMetrics().height() + 4 + kTileGap) + kTileGap};
}

QSize MapGridView::minimumSizeHint() const {
    return {kMinEdge * 2, kMinEdge + fontMetrics().height() + 2 * kTileGap};
}

void MapGridView::mousePressEvent(QMouseEvent* event) {
    const int i = tileAt(event->position().toPoint());
    if (event->button() == Qt::LeftButton && i >= 0) {
        setSelected(i);
        emit tileClicked(i);
    }
}

} // namespace attnlens::ui
