#include "ui/translate/token_chips.h"

#include "ui/render/heatmap_image.h"
#include "ui/widgets/page_parts.h"

#include <QFontMetrics>
#include <QFrame>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace attnlens::ui {

namespace {
constexpr int kLabelW = 64, kPadX = 7, kChipGap = 4, kChipH = 24;
static_assert(kChipH + kChipGap == TokenChips::kLineHeight);
} // namespace

TokenChips::TokenChips(TranslationDocument* document, TokenSide side, QWidget* parent)
    : QWidget(parent), m_doc(document), m_side(side) {
    setMouseTracking(true);
    setObjectName(side == TokenSide::Source ? QStringLiteral("sourceChips") : QStringLiteral("targetChips"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &TokenChips::refresh);
    connect(m_doc, &TranslationDocument::selectionChanged, this, qOverload<>(&QWidget::update));
    connect(m_doc, &TranslationDocument::hoverChanged, this, qOverload<>(&QWidget::update));
    refresh();
}

void TokenChips::refresh() {
    m_tokens = m_doc->tokens(m_side);
    m_rects = layoutChips(width());
    const int h = heightForWidth(std::max(width(), 200));
    if (h != height()) {
        setFixedHeight(h);
        emit heightChanged(h);
    }
    update();
}

std::vector<QRect> TokenChips::layoutChips(int width) const {
    std::vector<QRect> rects;
    const QFontMetrics fm(font());
    int x = kLabelW, y = 2;
    for (const QString& t : m_tokens) {
        const int w = fm.horizontalAdvance(t) + 2 * kPadX;
        if (x + w > width - 4 && x > kLabelW) {
            x = kLabelW;
            y += kChipH + kChipGap;
        }
        rects.emplace_back(x, y, w, kChipH);
        x += w + kChipGap;
    }
    return rects;
}

int TokenChips::heightForWidth(int width) const {
    const auto r = layoutChips(width);
    return (r.empty() ? kChipH : r.back().bottom()) + 4;
}

QSize TokenChips::sizeHint() const {
    return {400, heightForWidth(std::max(width(), 400))};
}

void TokenChips::resizeEvent(QResizeEvent*) {
    m_rects = layoutChips(width());
    const int h = heightForWidth(width());
    if (h != height()) {
        setFixedHeight(h);
        emit heightChanged(h);
    }
}

QRect TokenChips::chipRect(int index) const {
    return index >= 0 && index < static_cast<int>(m_rects.size()) ? m_rects[static_cast<size_t>(index)]
                                                                  : QRect();
}

int TokenChips::chipAt(QPoint pos) const {
    for (size_t i = 0; i < m_rects.size(); ++i)
        if (m_rects[i].contains(pos)) return static_cast<int>(i);
    return -1;
}

void TokenChips::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(QRect(0, 2, kLabelW - 6, kChipH), Qt::AlignRight | Qt::AlignVCenter,
               m_side == TokenSide::Source ? tr("source") : tr("target"));
    if (m_tokens.isEmpty()) {
        p.drawText(QRect(kLabelW, 2, width() - kLabelW, kChipH), Qt::AlignLeft | Qt::AlignVCenter,
                   m_side == TokenSide::Source ? tr("—") : tr("(step forward to generate)"));
        return;
    }
    const std::vector<float> w = m_doc->focusWeights(m_side);
    const TokenRef selected = m_doc->selectedToken(), hovered = m_doc->hoveredToken();
    const QColor accent = accentColor(palette());
    for (size_t i = 0; i < m_rects.size(); ++i) {
        const QRect r = m_rects[i];
        const TokenRef me{m_side, static_cast<int>(i)};
        const float weight = i < w.size() ? std::clamp(w[i], 0.0f, 1.0f) : 0.0f;
        // The chip's tint grows with the weight, from the palette's base towards the accent.
        const QColor base = palette().color(QPalette::Base);
        QColor fill = weight > 0.0f ? mixColors(base, accent, 0.15 + 0.85 * weight) : faintFill(palette());
        const bool isSel = me == selected, isHover = me == hovered;
        p.setBrush(fill);
        p.setPen(QPen(isSel     ? currentColor(palette())
                      : isHover ? accent
                                : frameColor(palette()),
                      isSel || isHover ? 2 : 1));
        p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
        p.setPen(contrastingTextColor(fill));
        p.drawText(r, Qt::AlignCenter, m_tokens[static_cast<qsizetype>(i)]);
    }
}

void TokenChips::mouseMoveEvent(QMouseEvent* event) {
    const int i = chipAt(event->position().toPoint());
    m_doc->setHoveredToken(i >= 0 ? TokenRef{m_side, i} : TokenRef{});
    setToolTip(i >= 0 ? tr("%1 (piece %2) — click to select").arg(m_tokens[i]).arg(i) : QString());
}

void TokenChips::mousePressEvent(QMouseEvent* event) {
    const int i = chipAt(event->position().toPoint());
    if (i < 0) return;
    const TokenRef t{m_side, i};
    m_doc->setSelectedToken(t == m_doc->selectedToken() ? TokenRef{} : t);
}

void TokenChips::leaveEvent(QEvent*) {
    m_doc->setHoveredToken({});
}

QWidget* buildTokenPanel(TranslationDocument* doc, QWidget* parent, TokenChips*& sourceChips,
                         TokenChips*& targetChips, QLabel*& translation) {
    auto* chipsFrame = panelFrame(parent, QStringLiteral("chipsPanel"));
    auto* chipsLayout = new QVBoxLayout(chipsFrame);
    chipsLayout->setContentsMargins(8, 5, 8, 5);
    chipsLayout->setSpacing(3);
    sourceChips = new TokenChips(doc, TokenSide::Source, chipsFrame);
    targetChips = new TokenChips(doc, TokenSide::Target, chipsFrame);
    translation = new QLabel(chipsFrame);
    translation->setObjectName(QStringLiteral("translation"));
    translation->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Long inputs: at most four lines of source chips and three of target chips, the rest scrolls (the
    // views below keep their room).
    auto scrolled = [chipsFrame](TokenChips* chips, int lines) {
        auto* scroll = new QScrollArea(chipsFrame);
        scroll->setObjectName(chips->objectName() + QStringLiteral("Scroll"));
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        scroll->setWidget(chips);
        const int cap = lines * TokenChips::kLineHeight + 4;
        auto fit = [scroll, cap](int h) { scroll->setFixedHeight(std::min(h, cap)); };
        QObject::connect(chips, &TokenChips::heightChanged, scroll, fit);
        fit(chips->height());
        return scroll;
    };
    chipsLayout->addWidget(scrolled(sourceChips, 4));
    chipsLayout->addWidget(scrolled(targetChips, 3));
    chipsLayout->addWidget(translation);
    return chipsFrame;
}

} // namespace attnlens::ui
