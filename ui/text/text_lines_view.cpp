#include "ui/text/text_lines_view.h"

#include "ui/text/text_document.h"
#include "ui/widgets/head_toggle_bar.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace attnlens::ui {

TextLinesView::TextLinesView(TextDocument* doc, HeadToggleBar* toggles, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_toggles(toggles) {
    setObjectName(QStringLiteral("lines"));
    setMouseTracking(true);
    if (m_toggles) connect(m_toggles, &HeadToggleBar::changed, this, &TextLinesView::refresh);
}

void TextLinesView::refresh() {
    m_scene = {};
    const int heads = m_doc->model() ? m_doc->model()->heads() : 0;
    if (m_toggles && (m_toggles->headCount() != heads || m_doc->head() != m_lastHead)) {
        if (m_toggles->headCount() != heads) m_toggles->setHeadCount(heads);
        m_lastHead = m_doc->head();
        m_toggles->followSelection(m_lastHead); // one head chosen above: it alone; mean or max: all
    }
    if (m_doc->run()) {
        const auto shown = m_doc->shown(m_doc->layer(), 0);
        m_scene.left = shown.rows;
        m_scene.right = shown.columns;
        for (int h = 0; h < heads; ++h) {
            m_scene.heads.push_back(m_doc->shown(m_doc->layer(), h).values);
            m_scene.enabled.push_back(m_toggles ? m_toggles->isEnabled(h)
                                                : m_doc->head() < 0 || m_doc->head() == h);
        }
    }
    m_geometry = layoutAttentionLines(m_scene, std::max(width(), 360), font());
    setMinimumHeight(m_geometry.size.height());
    update();
}

void TextLinesView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (m_scene.left.isEmpty()) return;
    p.setRenderHint(QPainter::Antialiasing);
    const AttentionLineFocus focus{m_doc->focusToken(), -1};
    paintAttentionLines(p, m_scene, m_geometry, focus);
    paintAttentionLabels(p, m_scene, m_geometry, focus, palette().color(QPalette::Text));
}

void TextLinesView::resizeEvent(QResizeEvent*) {
    refresh();
}

void TextLinesView::mouseMoveEvent(QMouseEvent* e) {
    m_doc->setHoveredToken(m_geometry.rowAt(e->position().y(), static_cast<int>(m_scene.left.size())));
}

void TextLinesView::leaveEvent(QEvent*) {
    m_doc->setHoveredToken(-1);
}

void TextLinesView::mousePressEvent(QMouseEvent* e) {
    const int row = m_geometry.rowAt(e->position().y(), static_cast<int>(m_scene.left.size()));
    m_doc->setSelectedToken(row == m_doc->selectedToken() ? -1 : row);
}

} // namespace attnlens::ui
