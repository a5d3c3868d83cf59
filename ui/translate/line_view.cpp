#include "ui/translate/line_view.h"

#include "ui/widgets/head_toggle_bar.h"

#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QVBoxLayout>

namespace attnlens::ui {

AttentionLineCanvas::AttentionLineCanvas(TranslationDocument* document, QWidget* parent)
    : QWidget(parent), m_doc(document) {
    setMouseTracking(true);
    setObjectName(QStringLiteral("lineCanvas"));
    connect(m_doc, &TranslationDocument::hoverChanged, this, qOverload<>(&QWidget::update));
}

void AttentionLineCanvas::setScene(AttentionLineScene scene, AttentionMatrix layout) {
    m_scene = std::move(scene);
    m_matrix = std::move(layout);
    relayout();
}

void AttentionLineCanvas::relayout() {
    m_geometry = layoutAttentionLines(m_scene, std::max(width(), 420), font());
    setMinimumHeight(m_geometry.size.height());
    m_cacheValid = false;
    update();
}

QSize AttentionLineCanvas::sizeHint() const {
    return m_geometry.size;
}

void AttentionLineCanvas::resizeEvent(QResizeEvent*) {
    if (m_geometry.size.width() != std::max(width(), 420)) relayout();
}

AttentionLineFocus AttentionLineCanvas::focus() const {
    const TokenRef t = m_doc->focusToken();
    AttentionLineFocus f;
    f.left = m_matrix.rowOf(t);
    if (f.left < 0) f.right = m_matrix.columnOf(t);
    return f;
}

TokenRef AttentionLineCanvas::tokenAt(QPoint pos) const {
    if (m_geometry.leftColumn.adjusted(-8, 0, 8, 0).contains(pos))
        return m_matrix.tokenOfRow(m_geometry.rowAt(pos.y(), static_cast<int>(m_scene.left.size())));
    if (m_geometry.rightColumn.adjusted(-8, 0, 8, 0).contains(pos))
        return m_matrix.tokenOfColumn(m_geometry.rowAt(pos.y(), static_cast<int>(m_scene.right.size())));
    return {};
}

void AttentionLineCanvas::paintEvent(QPaintEvent* event) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_scene.left.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(10, 10, -10, -10), Qt::AlignLeft | Qt::AlignTop,
                   tr("Nothing to show yet: translate a sentence (and step forward for decoder attention)."));
        return;
    }
    // A long paragraph's picture is too tall to cache (1 300 tokens: 29 000 px): drawn where it is exposed.
    constexpr int kMostCachedHeight = 4000;
    const bool cached = m_geometry.size.height() <= kMostCachedHeight;
    const QRectF exposed = cached ? QRectF() : QRectF(event->rect());
    const qreal dpr = devicePixelRatioF();
    if (cached && (!m_cacheValid || m_cache.size() != m_geometry.size * dpr)) {
        m_cache = QPixmap(m_geometry.size * dpr);
        m_cache.setDevicePixelRatio(dpr);
        m_cache.fill(Qt::transparent);
        QPainter cp(&m_cache);
        m_linesDrawn = paintAttentionLines(cp, m_scene, m_geometry);
        m_cacheValid = true;
    }
    const AttentionLineFocus f = focus();
    const bool focused = f.left >= 0 || f.right >= 0;
    if (!cached) m_cache = QPixmap();
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(QRectF(0, 4, m_geometry.leftColumn.right() - 6, 20), Qt::AlignRight | Qt::AlignVCenter,
               m_matrix.rowSide == TokenSide::Source ? tr("source (query)") : tr("target (query)"));
    p.drawText(QRectF(m_geometry.rightColumn.left(), 4, m_geometry.rightColumn.width() + 40, 20),
               Qt::AlignLeft | Qt::AlignVCenter,
               m_matrix.columnSide == TokenSide::Source ? tr("source (key)") : tr("decoder input (key)"));
    if (focused) p.setOpacity(0.12);
    if (cached) {
        p.drawPixmap(0, 0, m_cache);
    } else {
        const int drawn = paintAttentionLines(p, m_scene, m_geometry, {}, exposed);
        if (!focused) m_linesDrawn = drawn;
    }
    p.setOpacity(1.0);
    if (focused) paintAttentionLines(p, m_scene, m_geometry, f, exposed);
    paintAttentionLabels(p, m_scene, m_geometry, f, palette().color(QPalette::Text), exposed);
}

void AttentionLineCanvas::mouseMoveEvent(QMouseEvent* event) {
    m_doc->setHoveredToken(tokenAt(event->position().toPoint()));
}

void AttentionLineCanvas::mousePressEvent(QMouseEvent* event) {
    const TokenRef t = tokenAt(event->position().toPoint());
    m_doc->setSelectedToken(t == m_doc->selectedToken() ? TokenRef{} : t);
}

void AttentionLineCanvas::leaveEvent(QEvent*) {
    m_doc->setHoveredToken({});
}

// --- AttentionLineView ------------------------------------------------------------------------------

AttentionLineView::AttentionLineView(TranslationDocument* document, QWidget* parent)
    : QWidget(parent), m_doc(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    m_toggles = new HeadToggleBar(tr("Hover a token to see only its lines; click to select it."), this);
    layout->addWidget(m_toggles);
    auto* scroll = new QScrollArea(this);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    m_canvas = new AttentionLineCanvas(document, scroll);
    scroll->setWidget(m_canvas);
    layout->addWidget(scroll, 1);
    connect(m_toggles, &HeadToggleBar::changed, this, &AttentionLineView::refresh);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &AttentionLineView::refresh);
    connect(m_doc, &TranslationDocument::selectionChanged, this, &AttentionLineView::refresh);
    connect(m_doc, &TranslationDocument::modelChanged, this, &AttentionLineView::rebuildToggles);
    rebuildToggles();
}

void AttentionLineView::rebuildToggles() {
    m_toggles->setHeadCount(
        std::max(m_doc->headCount(AttentionKind::EncoderSelf), m_doc->headCount(AttentionKind::Cross)));
    m_lastHead = -2;
    refresh();
}

void AttentionLineView::setHeadEnabled(int head, bool on) {
    m_toggles->setHeadEnabled(head, on);
}

std::vector<bool> AttentionLineView::enabledHeads() const {
    return m_toggles->enabled();
}

void AttentionLineView::showEvent(QShowEvent*) {
    if (m_dirty) refresh();
}

void AttentionLineView::refresh() {
    if (!isVisible()) {
        m_dirty = true;
        return;
    }
    m_dirty = false;
    // A single head chosen in the page's selector shows that head alone; the aggregate shows all.
    if (m_doc->head() != m_lastHead || m_doc->kind() != m_lastKind) {
        m_lastHead = m_doc->head();
        m_lastKind = m_doc->kind();
        m_toggles->followSelection(m_lastHead);
    }
    AttentionLineScene scene;
    const AttentionMatrix layout = m_doc->currentMatrix();
    if (!layout.empty()) {
        scene.left = layout.rowLabels;
        scene.right = layout.columnLabels;
        const int H = m_doc->headCount(m_doc->kind());
        for (int h = 0; h < H; ++h) {
            scene.heads.push_back(lineLinks(m_doc->matrix(m_doc->kind(), m_doc->layer(), h).values));
            scene.enabled.push_back(m_toggles->isEnabled(h));
        }
    }
    scene.linksPerQuery = m_toggles->linksPerQuery();
    m_canvas->setScene(std::move(scene), layout);
}

} // namespace attnlens::ui
