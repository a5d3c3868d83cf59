#include "ui/playground/head_strip.h"

#include "ui/widgets/heatmap_view.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>

namespace attnlens::ui {

namespace {
constexpr int kThumb = 58; // thumbnail edge (px)
}

HeadStrip::HeadStrip(QWidget* parent) : QWidget(parent), m_layout(new QHBoxLayout(this)) {
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setSpacing(6);
    m_layout->addStretch(1);
}

void HeadStrip::setWeights(const std::vector<RowMatrix>& perHead) {
    if (perHead.size() != m_thumbs.size()) {
        for (QWidget* card : m_cards)
            delete card;
        m_cards.clear();
        m_thumbs.clear();
        for (size_t h = 0; h < perHead.size(); ++h) {
            auto* card = new QWidget(this);
            card->setObjectName(QStringLiteral("headCard"));
            card->setAttribute(Qt::WA_StyledBackground);
            card->setCursor(Qt::PointingHandCursor);
            card->setToolTip(tr("Show head %1").arg(h));
            auto* v = new QVBoxLayout(card);
            v->setContentsMargins(4, 3, 4, 2);
            v->setSpacing(1);
            auto* thumb = new HeatmapView(card);
            thumb->setLabelsVisible(false);
            thumb->setColorBarVisible(false);
            thumb->setAnnotationsEnabled(false);
            thumb->setFixedSize(kThumb, kThumb);
            thumb->setFocusPolicy(Qt::NoFocus);
            thumb->setColorMap(m_map);
            connect(thumb, &HeatmapView::cellClicked, this,
                    [this, h] { emit headClicked(static_cast<int>(h)); });
            auto* label = new QLabel(tr("head %1").arg(h), card);
            label->setAlignment(Qt::AlignCenter);
            v->addWidget(thumb, 0, Qt::AlignHCenter);
            v->addWidget(label);
            card->installEventFilter(this);
            m_layout->insertWidget(static_cast<int>(h), card);
            m_cards.push_back(card);
            m_thumbs.push_back(thumb);
        }
    }
    for (size_t h = 0; h < perHead.size(); ++h)
        m_thumbs[h]->setMatrix(perHead[h]);
    restyle();
}

void HeadStrip::setSelectedHead(int head) {
    m_selected = head;
    restyle();
}

void HeadStrip::setColorMap(ColorMap map) {
    m_map = map;
    for (HeatmapView* thumb : m_thumbs)
        thumb->setColorMap(map);
}

bool HeadStrip::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::MouseButtonPress) {
        for (size_t h = 0; h < m_cards.size(); ++h)
            if (watched == m_cards[h]) {
                emit headClicked(static_cast<int>(h));
                return true;
            }
    }
    return QWidget::eventFilter(watched, event);
}

void HeadStrip::restyle() {
    for (size_t h = 0; h < m_cards.size(); ++h) {
        const bool selected = static_cast<int>(h) == m_selected;
        m_cards[h]->setStyleSheet(
            selected ? QStringLiteral("QWidget#headCard { background: palette(highlight);"
                                      " border-radius: 5px; } QLabel { color: palette(highlighted-text);"
                                      " font-weight: bold; }")
                     : QStringLiteral("QWidget#headCard { background: transparent; }"));
    }
}

} // namespace attnlens::ui
