#include "ui/widgets/page_message.h"

#include "ui/widgets/page_parts.h"

#include <QEvent>

namespace attnlens::ui {

PageMessage::PageMessage(QWidget* parent) : QLabel(parent) {
    setObjectName(QStringLiteral("message"));
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    hide();
    // A label with a style sheet does not see its parent's palette change: watch the parent.
    if (parent) parent->installEventFilter(this);
}

bool PageMessage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == parentWidget() && event->type() == QEvent::PaletteChange && !isHidden()) restyle();
    return QLabel::eventFilter(watched, event);
}

void PageMessage::showMessage(Kind kind, const QString& text) {
    m_kind = kind;
    setText(text);
    restyle();
    show();
}

void PageMessage::dismiss() {
    clear();
    hide();
}

void PageMessage::changeEvent(QEvent* event) {
    QLabel::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) restyle();
}

void PageMessage::restyle() {
    // The colours come from the parent's palette: the label's own is changed by the style sheet set
    // here (which would otherwise restyle it again, without end).
    if (m_restyling) return;
    m_restyling = true;
    const QPalette pal = parentWidget() ? parentWidget()->palette() : palette();
    const QColor accent = m_kind == Kind::Error ? errorColor(pal) : pal.color(QPalette::Highlight);
    const QColor background = mixColors(pal.color(QPalette::Base), accent, 0.14);
    const QColor border = mixColors(pal.color(QPalette::Base), accent, 0.45);
    // Selector by class, not by object name: pages and the window give their banners their own names.
    const QString style =
        QStringLiteral("QLabel { background: %1; color: %2; border: 1px solid %3; border-radius: 4px;"
                       " padding: 6px; }")
            .arg(background.name(), pal.color(QPalette::WindowText).name(), border.name());
    if (styleSheet() != style) setStyleSheet(style);
    m_restyling = false;
}

} // namespace attnlens::ui
