#include "ui/diffusion/u_shape_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <set>

namespace attnlens::ui {

namespace {
constexpr int kMargin = 8;
constexpr int kGapX = 10;
constexpr int kGapY = 12;
constexpr int kMaxEdge = 168;
} // namespace

UShapeView::UShapeView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(false);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void UShapeView::setLayers(std::vector<UNetAttentionInfo> layers, QStringList labels) {
    m_layers = std::move(layers);
    m_labels = std::move(labels);
    m_tiles.assign(m_layers.size(), QImage());
    // Rows: the levels the contracting/expansive layers use, top = shallowest; the bottleneck below.
    std::set<int> levels;
    for (const auto& l : m_layers)
        if (l.path != UNetPath::Bottleneck) levels.insert(l.level);
    const std::vector<int> order(levels.begin(), levels.end());
    m_rowOf.clear();
    for (const auto& l : m_layers) {
        if (l.path == UNetPath::Bottleneck) {
            m_rowOf.push_back(static_cast<int>(order.size()));
        } else {
            m_rowOf.push_back(
                static_cast<int>(std::find(order.begin(), order.end(), l.level) - order.begin()));
        }
    }
    if (m_selected >= count()) m_selected = -1;
    updateGeometry();
    update();
}

void UShapeView::setTiles(std::vector<QImage> tiles) {
    tiles.resize(m_layers.size());
    m_tiles = std::move(tiles);
    update();
}

void UShapeView::setSelected(int layer) {
    layer = layer < 0 || layer >= count() ? -1 : layer;
    if (layer == m_selected) return;
    m_selected = layer;
    update();
}

void UShapeView::setPlaceholderText(const QString& text) {
    m_placeholder = text;
    update();
}

int UShapeView::columnOf(int layer) const {
    return layer;
}
int UShapeView::rowOf(int layer) const {
    return m_rowOf.at(static_cast<size_t>(layer));
}

int UShapeView::rows() const {
    int r = 0;
    for (int row : m_rowOf)
        r = std::max(r, row + 1);
    return r;
}

int UShapeView::tileEdge(QSize area) const {
    const int n = std::max(1, count()), r = std::max(1, rows());
    const int label = 2 * fontMetrics().height() + 4;
    const int byWidth = (area.width() - 2 * kMargin - (n - 1) * kGapX) / n;
    const int byHeight = (area.height() - 2 * kMargin - r * label - (r - 1) * kGapY) / r;
    return std::clamp(std::min(byWidth, byHeight), 16, kMaxEdge);
}

QRect UShapeView::tileRectFor(int layer, int edge, QPoint origin) const {
    const int label = 2 * fontMetrics().height() + 4;
    return {origin.x() + columnOf(layer) * (edge + kGapX), origin.y() + rowOf(layer) * (edge + label + kGapY),
            edge, edge};
}

QRect UShapeView::tileRect(int layer) const {
    if (layer < 0 || layer >= count()) return {};
    const int edge = tileEdge(size());
    const int n = count(), r = rows();
    const int label = 2 * fontMetrics().height() + 4;
    const int w = n * edge + (n - 1) * kGapX, h = r * (edge + label) + (r - 1) * kGapY;
    const QPoint origin((width() - w) / 2, std::max(kMargin, (height() - h) / 2));
    return tileRectFor(layer, edge, origin);
}

int UShapeView::tileAt(const QPoint& pos) const {
    for (int i = 0; i < count(); ++i)
        if (tileRect(i).contains(pos)) return i;
    return -1;
}

void UShapeView::paintU(QPainter& p, int edge, QPoint origin, bool forExport) const {
    const QPalette pal = palette();
    const QColor line = forExport ? QColor(120, 120, 120) : pal.color(QPalette::Mid);
    auto rectOf = [&](int i) { return tileRectFor(i, edge, origin); };

    // Execution order: a path from each tile to the next.
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(QPen(line, 2));
    for (int i = 0; i + 1 < count(); ++i) {
        const QRect a = rectOf(i), b = rectOf(i + 1);
        const QPointF from(a.right() + 1, a.center().y()), to(b.left(), b.center().y());
        QPainterPath path(from);
        const double mid = (from.x() + to.x()) / 2;
        path.cubicTo(QPointF(mid, from.y()), QPointF(mid, to.y()), to);
        p.drawPath(path);
    }
    // Skip connections: the last contracting layer of a level → the first expansive layer there.
    p.setPen(QPen(line, 1.5, Qt::DashLine));
    for (int i = 0; i < count(); ++i) {
        if (m_layers[static_cast<size_t>(i)].path != UNetPath::Contracting) continue;
        const bool lastOfLevel =
            i + 1 >= count() ||
            m_layers[static_cast<size_t>(i + 1)].level != m_layers[static_cast<size_t>(i)].level ||
            m_layers[static_cast<size_t>(i + 1)].path != UNetPath::Contracting;
        if (!lastOfLevel) continue;
        for (int j = i + 1; j < count(); ++j) {
            const auto& e = m_layers[static_cast<size_t>(j)];
            if (e.path == UNetPath::Expansive && e.level == m_layers[static_cast<size_t>(i)].level) {
                const QRect a = rectOf(i), b = rectOf(j);
                const int y = a.top() + edge / 5;
                p.drawLine(QPoint(a.right() + 4, y), QPoint(b.left() - 4, y));
                break;
            }
        }
    }

    const QFontMetrics fm = p.fontMetrics();
    for (int i = 0; i < count(); ++i) {
        const QRect r = rectOf(i);
        const QImage& img = m_tiles[static_cast<size_t>(i)];
        p.setRenderHint(QPainter::SmoothPixmapTransform, !img.isNull() && img.width() > r.width());
        if (img.isNull()) {
            p.fillRect(r, forExport ? QColor(235, 235, 235) : pal.color(QPalette::AlternateBase));
        } else {
            p.drawImage(r, img);
        }
        const bool sel = i == m_selected;
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setPen(sel ? QPen(forExport ? QColor(0, 120, 215) : pal.color(QPalette::Highlight), 3)
                     : QPen(line, 1));
        p.drawRect(r.adjusted(sel ? -2 : 0, sel ? -2 : 0, sel ? 1 : -1, sel ? 1 : -1));
        p.setRenderHint(QPainter::Antialiasing, true);
        const auto& l = m_layers[static_cast<size_t>(i)];
        p.setPen(forExport ? Qt::black : pal.color(QPalette::WindowText));
        QFont f = p.font();
        f.setBold(sel);
        p.setFont(f);
        const QString name = m_labels.value(i, QString::fromStdString(l.name));
        const QRect labelRect(r.left() - kGapX / 2, r.bottom() + 3, r.width() + kGapX, fm.height());
        p.drawText(labelRect, Qt::AlignHCenter | Qt::AlignTop,
                   fm.elidedText(name, Qt::ElideRight, labelRect.width()));
        f.setBold(false);
        p.setFont(f);
        p.setPen(forExport ? QColor(90, 90, 90) : pal.color(QPalette::PlaceholderText));
        p.drawText(labelRect.translated(0, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
                   QStringLiteral("%1×%2").arg(l.height).arg(l.width));
    }
}

void UShapeView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    if (count() == 0) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    const int edge = tileEdge(size());
    const int n = count(), r = rows();
    const int label = 2 * fontMetrics().height() + 4;
    const int w = n * edge + (n - 1) * kGapX, h = r * (edge + label) + (r - 1) * kGapY;
    paintU(p, edge, QPoint((width() - w) / 2, std::max(kMargin, (height() - h) / 2)), false);
}

QImage UShapeView::renderImage(int tileSize) const {
    const int n = std::max(1, count()), r = std::max(1, rows());
    const int label = 2 * fontMetrics().height() + 4;
    const QSize size(2 * kMargin + n * tileSize + (n - 1) * kGapX,
                     2 * kMargin + r * (tileSize + label) + (r - 1) * kGapY);
    QImage out(size, QImage::Format_RGB32);
    out.fill(Qt::white);
    if (count() == 0) return out;
    QPainter p(&out);
    p.setFont(font());
    paintU(p, tileSize, QPoint(kMargin, kMargin), true);
    return out;
}

void UShapeView::mousePressEvent(QMouseEvent* event) {
    const int i = tileAt(event->position().toPoint());
    if (i >= 0) {
        setSelected(i);
        emit layerClicked(i);
    }
}

} // namespace attnlens::ui
