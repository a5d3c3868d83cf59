#include "ui/text/token_text_view.h"

#include "ui/widgets/page_parts.h"

#include <QEvent>
#include <QFontMetrics>
#include <QPaintEvent>
#include <QPainter>

#include <algorithm>

namespace attnlens::ui {

namespace {

// A token as drawn on one line: line breaks and tabs as spaces.
QString shownText(const QString& text) {
    QString s = text;
    for (QChar& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return s;
}

QFont boldOf(QFont font) {
    font.setBold(true);
    return font;
}

} // namespace

TokenTextView::TokenTextView(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    setMouseTracking(false);
}

void TokenTextView::setTokens(const QStringList& texts, int promptLength, bool underlineLast,
                              const QString& prefix) {
    if (texts == m_texts && promptLength == m_prompt && underlineLast == m_underlineLast &&
        prefix == m_prefix)
        return;
    m_texts = texts;
    m_prompt = promptLength;
    m_underlineLast = underlineLast;
    m_prefix = prefix;
    if (m_hovered >= m_texts.size()) m_hovered = -1;
    relayout();
}

void TokenTextView::relayout() {
    const QFontMetrics fm(font());
    m_advances.resize(static_cast<size_t>(m_texts.size()));
    for (int i = 0; i < m_texts.size(); ++i)
        m_advances[size_t(i)] = fm.horizontalAdvance(shownText(m_texts[i]));
    m_prefixAdvance = m_prefix.isEmpty() ? 0 : QFontMetrics(boldOf(font())).horizontalAdvance(m_prefix + ' ');
    m_layout = layoutFor(width());
    updateGeometry();
    update();
}

TokenTextView::Layout TokenTextView::layoutFor(int width) const {
    Layout l;
    l.width = width;
    const int lineHeight = QFontMetrics(font()).lineSpacing();
    const int right = std::max(1, width);
    int x = 0, y = 0;
    if (m_prefixAdvance > 0) {
        l.prefix = QRect(0, 0, m_prefixAdvance, lineHeight);
        x = m_prefixAdvance;
    }
    l.rects.resize(m_advances.size());
    for (size_t i = 0; i < m_advances.size(); ++i) {
        const int w = m_advances[i];
        if (x > 0 && x + w > right) { // wrap before a token that does not fit (a lone wide one overflows)
            x = 0;
            y += lineHeight;
        }
        l.rects[i] = QRect(x, y, w, lineHeight);
        x += w;
        if (m_texts[int(i)].contains('\n')) {
            x = 0;
            y += lineHeight;
        }
    }
    l.height = (x > 0 || m_advances.empty() ? y + lineHeight : y);
    if (m_texts.isEmpty() && m_prefix.isEmpty()) l.height = 0;
    return l;
}

const TokenTextView::Layout& TokenTextView::current() const {
    if (m_layout.width != width()) m_layout = layoutFor(width());
    return m_layout;
}

int TokenTextView::heightForWidth(int width) const {
    return width == m_layout.width ? m_layout.height : layoutFor(width).height;
}

QSize TokenTextView::sizeHint() const {
    return {std::max(1, width()), heightForWidth(std::max(1, width()))};
}

QRect TokenTextView::tokenRect(int i) const {
    const Layout& l = current();
    return i >= 0 && size_t(i) < l.rects.size() ? l.rects[size_t(i)] : QRect();
}

QString TokenTextView::plainText() const {
    QString s = m_prefix.isEmpty() ? QString() : m_prefix + ' ';
    for (const QString& t : m_texts)
        s += t;
    return s;
}

void TokenTextView::setHovered(int token) {
    if (token < 0 || token >= m_texts.size()) token = -1;
    if (token == m_hovered) return;
    update(tokenRect(m_hovered));
    m_hovered = token;
    update(tokenRect(m_hovered));
}

void TokenTextView::paintEvent(QPaintEvent* event) {
    QPainter p(this);
    const Layout& l = current();
    const QRect exposed = event->rect();
    const QFontMetrics fm(font());
    if (!l.prefix.isEmpty() && l.prefix.intersects(exposed)) {
        p.setFont(boldOf(font()));
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(l.prefix, Qt::AlignLeft | Qt::AlignVCenter, m_prefix);
        p.setFont(font());
    }
    const QColor text = palette().color(QPalette::WindowText),
                 generated = palette().color(QPalette::Highlight);
    const QColor hover = mixColors(palette().base().color(), palette().highlight().color(), 0.35);
    // Tokens are laid out top to bottom: start at the first line the exposed rectangle reaches.
    const auto first = std::lower_bound(l.rects.begin(), l.rects.end(), exposed.top(),
                                        [](const QRect& r, int top) { return r.bottom() < top; });
    for (auto it = first; it != l.rects.end() && it->top() <= exposed.bottom(); ++it) {
        const int i = static_cast<int>(it - l.rects.begin());
        if (!it->intersects(exposed)) continue;
        if (i == m_hovered) p.fillRect(*it, hover);
        p.setPen(i >= m_prompt ? generated : text);
        p.drawText(it->left(), it->top() + fm.ascent(), shownText(m_texts[i]));
        if (m_underlineLast && i == m_texts.size() - 1 && i >= m_prompt)
            p.drawLine(it->left(), it->top() + fm.ascent() + 2, it->right(), it->top() + fm.ascent() + 2);
    }
}

void TokenTextView::resizeEvent(QResizeEvent*) {
    if (width() != m_layout.width) {
        m_layout = layoutFor(width());
        updateGeometry();
    }
}

void TokenTextView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::FontChange) relayout();
    QWidget::changeEvent(event);
}

} // namespace attnlens::ui
