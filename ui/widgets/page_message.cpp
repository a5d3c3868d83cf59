#include "ui/widgets/page_message.h"

#include "ui/widgets/page_parts.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QToolButton>

#include <algorithm>

namespace attnlens::ui {

namespace {
constexpr int kMargin = 8; // from the parent's edges, as the pages' own margins
} // namespace

PageMessage::PageMessage(QWidget* parent)
    : QFrame(parent), m_text(new QLabel(this)), m_close(new QToolButton(this)),
      m_action(new QPushButton(this)) {
    setObjectName(QStringLiteral("message"));
    setAttribute(Qt::WA_StyledBackground);
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_close->setObjectName(QStringLiteral("dismissMessage"));
    m_close->setText(QStringLiteral("✕"));
    m_close->setToolTip(tr("Dismiss this message"));
    m_close->setAutoRaise(true);
    m_action->setObjectName(QStringLiteral("messageAction"));
    m_action->hide();
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(8, 4, 4, 4);
    row->addWidget(m_text, 1);
    row->addWidget(m_action, 0, Qt::AlignVCenter);
    row->addWidget(m_close, 0, Qt::AlignTop);
    connect(m_close, &QToolButton::clicked, this, &PageMessage::dismiss);
    connect(m_action, &QPushButton::clicked, this, [this] {
        const std::function<void()> run = m_run; // dismissing clears it
        dismiss();
        if (run) run();
    });
    hide();
    // A frame with a style sheet does not see its parent's palette change, nor its size: watch the parent.
    if (parent) parent->installEventFilter(this);
}

QString PageMessage::message() const {
    return isHidden() ? QString() : m_text->text();
}

void PageMessage::setAnchor(QWidget* anchor) {
    if (m_anchor) m_anchor->removeEventFilter(this);
    m_anchor = anchor;
    if (m_anchor) m_anchor->installEventFilter(this);
    place();
}

bool PageMessage::eventFilter(QObject* watched, QEvent* event) {
    const auto type = event->type();
    if (watched == parentWidget() && type == QEvent::PaletteChange && !isHidden()) restyle();
    if ((watched == parentWidget() && type == QEvent::Resize) ||
        (watched == m_anchor && (type == QEvent::Move || type == QEvent::Resize)))
        place();
    return QFrame::eventFilter(watched, event);
}

void PageMessage::showMessage(Kind kind, const QString& text, bool sticky) {
    m_kind = kind;
    m_sticky = sticky;
    m_text->setText(text);
    m_run = nullptr;
    m_action->hide();
    restyle();
    show();
    place();
    raise();
    emit shown(kind);
}

void PageMessage::setAction(const QString& label, std::function<void()> run) {
    m_action->setText(label);
    m_run = std::move(run);
    m_action->show();
    place();
}

void PageMessage::dismiss() {
    m_run = nullptr;
    m_action->hide();
    m_text->clear();
    m_sticky = false;
    hide();
}

void PageMessage::place() {
    const QWidget* parent = parentWidget();
    if (!parent || isHidden()) return;
    const int width = std::max(120, parent->width() - 2 * kMargin);
    const int height =
        layout()->hasHeightForWidth() ? layout()->totalHeightForWidth(width) : sizeHint().height();
    const int below = m_anchor ? m_anchor->geometry().bottom() + 4 : parent->height() - height - kMargin;
    setGeometry(kMargin, std::max(0, below), width, height);
}

void PageMessage::changeEvent(QEvent* event) {
    QFrame::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) restyle();
}

void PageMessage::restyle() {
    // The colours come from the parent's palette: the frame's own is changed by the style sheet set
    // here (which would otherwise restyle it again, without end).
    if (m_restyling) return;
    m_restyling = true;
    const QPalette pal = parentWidget() ? parentWidget()->palette() : palette();
    const QColor accent = m_kind == Kind::Error ? errorColor(pal) : pal.color(QPalette::Highlight);
    const QColor background = mixColors(pal.color(QPalette::Base), accent, 0.14);
    const QColor border = mixColors(pal.color(QPalette::Base), accent, 0.45);
    // Selector by class, not by object name: pages and the window give their banners their own names.
    const QString style =
        QStringLiteral(
            "attnlens--ui--PageMessage { background: %1; border: 1px solid %3; border-radius: 4px; }"
            " QLabel, QToolButton { color: %2; background: transparent; border: none; }")
            .arg(background.name(), pal.color(QPalette::WindowText).name(), border.name());
    if (styleSheet() != style) setStyleSheet(style);
    m_restyling = false;
}

} // namespace attnlens::ui
