#include "ui/vision/patch_image_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

PatchImageView::PatchImageView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setCursor(Qt::CrossCursor);
}

void PatchImageView::setPicture(const QImage& picture, const PatchGrid& grid) {
    m_picture = picture;
    m_grid = grid;
    m_hovered = -1;
    update();
}

void PatchImageView::setPicture(const QImage& picture) {
    m_picture = picture;
    update();
}

void PatchImageView::clear() {
    m_picture = QImage();
    m_grid = PatchGrid();
    m_selection.clear();
    update();
}

void PatchImageView::setSelection(const std::vector<int>& patches, bool clsSelected) {
    m_selection = patches;
    m_cls = clsSelected;
    update();
}

void PatchImageView::setGridVisible(bool visible) {
    m_showGrid = visible;
    update();
}

void PatchImageView::setPlaceholderText(const QString& text) {
    m_placeholder = text;
    update();
}

QRectF PatchImageView::imageRect() const {
    if (m_picture.isNull() || m_grid.imageWidth() <= 0) return {};
    const QRectF area = QRectF(rect()).adjusted(4, 4, -4, -4);
    const double aspect = static_cast<double>(m_grid.imageWidth()) / m_grid.imageHeight();
    double w = area.width(), h = w / aspect;
    if (h > area.height()) {
        h = area.height();
        w = h * aspect;
    }
    // Whole pixels, so grid lines and image pixels line up.
    w = std::floor(w);
    h = std::floor(h);
    return {std::floor(area.x() + (area.width() - w) / 2), std::floor(area.y() + (area.height() - h) / 2), w,
            h};
}

QRectF PatchImageView::patchRect(int patch) const {
    const QRectF target = imageRect();
    if (target.isEmpty() || patch < 0 || patch >= m_grid.count()) return {};
    const RectF r = m_grid.imageRect(patch);
    const double sx = target.width() / m_grid.imageWidth(), sy = target.height() / m_grid.imageHeight();
    return {target.x() + r.x * sx, target.y() + r.y * sy, r.width * sx, r.height * sy};
}

int PatchImageView::patchAt(const QPointF& pos) const {
    const QRectF target = imageRect();
    if (target.isEmpty() || !target.contains(pos)) return -1;
    const double sx = m_grid.imageWidth() / target.width(), sy = m_grid.imageHeight() / target.height();
    return m_grid.patchAt((pos.x() - target.x()) * sx, (pos.y() - target.y()) * sy);
}

std::vector<int> PatchImageView::patchesInRect(const QRectF& rect) const {
    std::vector<int> out;
    for (int i = 0; i < m_grid.count(); ++i)
        if (rect.intersects(patchRect(i))) out.push_back(i);
    return out;
}

void PatchImageView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QRectF target = imageRect();
    if (target.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    // Enlarging or reducing a little: nearest (crisp pixels). Reducing by more than a quarter: smooth,
    // else the picture shimmers. (A smooth 448 -> 393 px reduction of a small image's enlargement cost
    // 5 ms of every patch click and looked the same.)
    const bool reducing = target.width() < 0.75 * m_picture.width();
    p.setRenderHint(QPainter::SmoothPixmapTransform, reducing);
    p.drawImage(target, m_picture);

    p.setRenderHint(QPainter::Antialiasing, false);
    if (m_showGrid && m_grid.count() > 0) {
        QColor line(255, 255, 255, m_grid.count() > 400 ? 40 : 70);
        p.setPen(QPen(line, 1));
        for (int c = 1; c < m_grid.cols(); ++c) {
            const double x = std::round(patchRect(m_grid.index(0, c)).left());
            p.drawLine(QPointF(x, patchRect(0).top()),
                       QPointF(x, patchRect(m_grid.index(m_grid.rows() - 1, c)).bottom()));
        }
        for (int r = 1; r < m_grid.rows(); ++r) {
            const double y = std::round(patchRect(m_grid.index(r, 0)).top());
            p.drawLine(QPointF(patchRect(0).left(), y),
                       QPointF(patchRect(m_grid.index(r, m_grid.cols() - 1)).right(), y));
        }
    }
    // The query patches: their union outlined, so a block reads as one region.
    if (!m_cls && !m_selection.empty()) {
        QPainterPath path;
        for (int patch : m_selection)
            path.addRect(patchRect(patch));
        path = path.simplified();
        p.setRenderHint(QPainter::Antialiasing, true);
        p.fillPath(path, QColor(0, 229, 255, 45));
        p.setPen(QPen(QColor(0, 0, 0, 160), 4));
        p.drawPath(path);
        p.setPen(QPen(QColor(0, 229, 255), 2));
        p.drawPath(path);
    }
    if (m_hovered >= 0 && !m_dragging) {
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setPen(QPen(QColor(255, 255, 255, 200), 1, Qt::DashLine));
        p.drawRect(patchRect(m_hovered).adjusted(0, 0, -1, -1));
    }
    if (m_dragging) {
        const QRectF band = QRectF(m_pressPos, m_dragPos).normalized();
        for (int patch : patchesInRect(band))
            p.fillRect(patchRect(patch), QColor(0, 229, 255, 60));
        p.setPen(QPen(QColor(0, 229, 255), 1, Qt::DashLine));
        p.drawRect(band);
    }
}

void PatchImageView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || imageRect().isEmpty()) return QWidget::mousePressEvent(event);
    m_pressed = true;
    m_dragging = false;
    m_additive = event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier);
    m_pressPos = m_dragPos = event->position();
}

void PatchImageView::mouseMoveEvent(QMouseEvent* event) {
    const int patch = patchAt(event->position());
    if (patch != m_hovered) {
        m_hovered = patch;
        emit patchHovered(patch);
        update();
    }
    if (m_pressed) {
        m_dragPos = event->position();
        if (!m_dragging && (m_dragPos - m_pressPos).manhattanLength() >= 6) m_dragging = true;
        if (m_dragging) update();
    }
}

void PatchImageView::mouseReleaseEvent(QMouseEvent* event) {
    if (!m_pressed || event->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(event);
    m_pressed = false;
    if (m_dragging) {
        m_dragging = false;
        auto patches = patchesInRect(QRectF(m_pressPos, event->position()).normalized());
        update();
        if (!patches.empty()) emit patchesSelected(std::move(patches), m_additive);
        return;
    }
    const int patch = patchAt(event->position());
    if (patch >= 0) emit patchClicked(patch, m_additive);
}

void PatchImageView::leaveEvent(QEvent*) {
    if (m_hovered != -1) {
        m_hovered = -1;
        emit patchHovered(-1);
        update();
    }
}

} // namespace attnlens::ui
