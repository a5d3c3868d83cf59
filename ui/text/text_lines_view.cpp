#include "ui/text/text_lines_view.h"

#include "ui/widgets/head_toggle_bar.h"

#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>

#include <algorithm>

namespace attnlens::ui {

TextLinesView::TextLinesView(TextDocument* doc, HeadToggleBar* toggles, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_toggles(toggles) {
    setObjectName(QStringLiteral("lines"));
    setMouseTracking(true);
    if (m_toggles) connect(m_toggles, &HeadToggleBar::changed, this, &TextLinesView::refresh);
}

std::vector<AttentionLinks> TextLinesView::makeLinks(const TextRun& run, const TextFolder& folder,
                                                     const TextDocument::ShowOptions& show, int layer) {
    std::vector<AttentionLinks> heads;
    for (int h = 0; h < folder.heads(); ++h)
        heads.push_back(lineLinks(TextDocument::shape(TextDocument::makeMap(run, folder.heads(), show.visible,
                                                                            layer, h, show.valueWeighted),
                                                      run, folder, show)
                                      .values));
    return heads;
}

void TextLinesView::refreshLinks() {
    const auto& run = m_doc->run();
    const TextDocument::ShowOptions show = m_doc->showOptions();
    const LinksKey key{
        run, show.visible, m_doc->layer(), show.hideSpecial, show.wordLevel, show.valueWeighted};
    if (key == m_linksKey) return;
    m_linksKey = key;
    m_scene.heads.clear();
    if (!run) {
        m_lane.cancel();
        m_scene.left = m_scene.right = {};
        return;
    }
    m_scene.left = m_scene.right = TextDocument::shownLabels(*run, *m_doc->model(), show); // at once
    if (!m_doc->onDemand() && show.visible <= kSyncTokens) {
        m_lane.cancel();
        m_scene.heads = makeLinks(*run, *m_doc->model(), show, key.layer);
        return;
    }
    m_lane.request<std::vector<AttentionLinks>>(
        [run, folder = m_doc->model(), show, layer = key.layer] {
            return makeLinks(*run, *folder, show, layer);
        },
        [this](std::vector<AttentionLinks> heads) {
            m_scene.heads = std::move(heads);
            update();
        });
}

void TextLinesView::refresh() {
    const int heads = m_doc->model() ? m_doc->model()->heads() : 0;
    if (m_toggles && (m_toggles->headCount() != heads || m_doc->head() != m_lastHead)) {
        if (m_toggles->headCount() != heads) m_toggles->setHeadCount(heads);
        m_lastHead = m_doc->head();
        m_toggles->followSelection(m_lastHead); // one head chosen above: it alone; mean or max: all
    }
    refreshLinks();
    m_scene.enabled.clear();
    for (int h = 0; h < heads; ++h)
        m_scene.enabled.push_back(m_toggles ? m_toggles->isEnabled(h)
                                            : m_doc->head() < 0 || m_doc->head() == h);
    m_scene.linksPerQuery = m_toggles ? m_toggles->linksPerQuery() : 0;
    m_geometry = layoutAttentionLines(m_scene, std::max(width(), 360), font());
    setMinimumHeight(m_geometry.size.height());
    update();
}

void TextLinesView::paintEvent(QPaintEvent* e) {
    QPainter p(this);
    p.fillRect(e->rect(), palette().base());
    if (m_scene.left.isEmpty()) return;
    p.setRenderHint(QPainter::Antialiasing);
    const AttentionLineFocus focus{m_doc->focusToken(), -1};
    const QRectF exposed(e->rect());
    if (m_lane.pending()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRectF(0, exposed.top() + 4, width(), 20), Qt::AlignHCenter | Qt::AlignVCenter,
                   tr("Drawing the lines of %1 tokens…").arg(m_scene.left.size()));
    }
    paintAttentionLines(p, m_scene, m_geometry, focus, exposed);
    paintAttentionLabels(p, m_scene, m_geometry, focus, palette().color(QPalette::Text), exposed);
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
