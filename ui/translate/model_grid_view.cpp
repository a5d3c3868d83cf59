#include "ui/translate/model_grid_view.h"

#include "ui/render/heatmap_image.h"
#include "ui/widgets/page_parts.h"

#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QVBoxLayout>

namespace attnlens::ui {

namespace {
constexpr int kLeft = 44, kTop = 26, kGap = 10;
}

ModelGridCanvas::ModelGridCanvas(TranslationDocument* document, QWidget* parent)
    : QWidget(parent), m_doc(document) {
    setMouseTracking(true);
    setObjectName(QStringLiteral("modelGrid"));
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &ModelGridCanvas::rebuild);
    connect(m_doc, &TranslationDocument::selectionChanged, this, &ModelGridCanvas::rebuild);
    rebuild();
}

void ModelGridCanvas::showEvent(QShowEvent*) {
    if (m_dirty) rebuild();
}

void ModelGridCanvas::rebuild() {
    if (!isVisible()) {
        m_dirty = true;
        return;
    }
    m_dirty = false;
    const AttentionKind kind = m_doc->kind();
    m_layers = m_doc->trace() ? m_doc->layerCount(kind) : 0;
    m_heads = m_doc->headCount(kind);
    m_thumbs.clear();
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h <= m_heads; ++h) {
            const AttentionMatrix m = m_doc->matrix(kind, l, h < m_heads ? h : -1);
            m_thumbs.push_back(m.empty() ? QImage()
                                         : heatmapImage(m.values, ColorMap::Viridis, 0.0f, 1.0f, 1));
        }
    relayout();
    update();
}

void ModelGridCanvas::setAvailableWidth(int width) {
    m_available = width;
    relayout();
}

void ModelGridCanvas::relayout() {
    // Cells fill the width (between 48 and 150 px) so small models get readable maps.
    const int cols = m_heads + 1;
    m_cell = std::clamp((m_available - kLeft - 2 * kGap - 12) / std::max(1, cols) - kGap, 48, 150);
    setFixedSize(sizeHint());
    update();
}

QSize ModelGridCanvas::sizeHint() const {
    const int cols = m_heads + 1;
    return {kLeft + cols * (m_cell + kGap) + kGap + 12, kTop + std::max(1, m_layers) * (m_cell + kGap) + 10};
}

QRect ModelGridCanvas::cellRect(int layer, int head) const {
    const int col = head < 0 ? m_heads : head;
    const int extra = head < 0 ? kGap : 0; // the mean column stands apart
    return {kLeft + col * (m_cell + kGap) + extra, kTop + layer * (m_cell + kGap), m_cell, m_cell};
}

std::pair<int, int> ModelGridCanvas::cellAt(QPoint pos) const {
    for (int l = 0; l < m_layers; ++l)
        for (int h = -1; h < m_heads; ++h)
            if (cellRect(l, h).contains(pos)) return {l, h};
    return {-1, -1};
}

void ModelGridCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_layers == 0) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(10, 10, -10, -10), Qt::AlignLeft | Qt::AlignTop,
                   tr("Translate a sentence to see every head of every layer."));
        return;
    }
    p.setPen(palette().color(QPalette::WindowText));
    for (int h = 0; h <= m_heads; ++h) {
        const QRect r = cellRect(0, h < m_heads ? h : -1);
        p.drawText(QRect(r.left(), 4, r.width(), kTop - 6), Qt::AlignCenter,
                   h < m_heads ? tr("head %1").arg(h) : tr("mean"));
    }
    for (int l = 0; l < m_layers; ++l) {
        const QRect r = cellRect(l, 0);
        p.drawText(QRect(0, r.top(), kLeft - 6, r.height()), Qt::AlignRight | Qt::AlignVCenter,
                   tr("L%1").arg(l));
        for (int h = 0; h <= m_heads; ++h) {
            const int head = h < m_heads ? h : -1;
            const QRect c = cellRect(l, head);
            const QImage& img = m_thumbs[static_cast<size_t>(l * (m_heads + 1) + h)];
            if (!img.isNull()) {
                // Nearest-neighbour scaling keeps each token pair a crisp block.
                p.drawImage(c, img.scaled(c.size(), Qt::IgnoreAspectRatio, Qt::FastTransformation));
            }
            const bool current = l == m_doc->layer() && head == m_doc->head();
            const bool hovered = m_hover == std::make_pair(l, head);
            p.setPen(QPen(current   ? currentColor(palette())
                          : hovered ? accentColor(palette())
                                    : frameColor(palette()),
                          current || hovered ? 3 : 1));
            p.setBrush(Qt::NoBrush);
            p.drawRect(c.adjusted(-1, -1, 0, 0));
            p.setPen(palette().color(QPalette::WindowText));
        }
    }
}

void ModelGridCanvas::mousePressEvent(QMouseEvent* event) {
    const auto [layer, head] = cellAt(event->position().toPoint());
    if (layer < 0) return;
    m_doc->setLayer(layer);
    m_doc->setHead(head);
    emit headActivated(layer, head);
}

void ModelGridCanvas::mouseMoveEvent(QMouseEvent* event) {
    const auto cell = cellAt(event->position().toPoint());
    if (cell != m_hover) {
        m_hover = cell;
        setToolTip(cell.first < 0
                       ? QString()
                       : tr("Layer %1, %2 — click to open in the matrix view")
                             .arg(cell.first)
                             .arg(cell.second < 0 ? tr("mean over heads") : tr("head %1").arg(cell.second)));
        update();
    }
}

void ModelGridCanvas::leaveEvent(QEvent*) {
    m_hover = {-1, -1};
    update();
}

ModelGridView::ModelGridView(TranslationDocument* document, QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* hint =
        new QLabel(tr("Every head of every layer for the chosen attention kind. Click a map to open it "
                      "in the matrix view."),
                   this);
    mute(hint);
    layout->addWidget(hint);
    auto* scroll = new QScrollArea(this);
    scroll->setFrameShape(QFrame::NoFrame);
    m_canvas = new ModelGridCanvas(document, scroll);
    scroll->setWidget(m_canvas);
    scroll->setWidgetResizable(false);
    layout->addWidget(scroll, 1);
    m_scroll = scroll;
    connect(m_canvas, &ModelGridCanvas::headActivated, this, &ModelGridView::headActivated);
}

} // namespace attnlens::ui

namespace attnlens::ui {
void ModelGridView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_canvas->setAvailableWidth(m_scroll->viewport()->width());
}
} // namespace attnlens::ui
