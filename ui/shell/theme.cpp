#include "ui/shell/theme.h"

#include "ui/widgets/page_parts.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

namespace attnlens::ui {

QPalette darkPalette() {
    QPalette p;
    const QColor window(45, 47, 51), base(32, 33, 36), text(232, 234, 237), mid(95, 99, 104);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(53, 55, 60));
    p.setColor(QPalette::ToolTipBase, QColor(60, 64, 67));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(154, 160, 166));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(60, 63, 67));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(255, 110, 110));
    p.setColor(QPalette::Light, QColor(75, 78, 83));
    p.setColor(QPalette::Midlight, QColor(65, 68, 72));
    p.setColor(QPalette::Mid, mid);
    p.setColor(QPalette::Dark, QColor(25, 26, 28));
    p.setColor(QPalette::Shadow, QColor(0, 0, 0));
    p.setColor(QPalette::Highlight, QColor(66, 133, 244));
    p.setColor(QPalette::HighlightedText, QColor(255, 255, 255));
    p.setColor(QPalette::Link, QColor(138, 180, 248));
    p.setColor(QPalette::LinkVisited, QColor(197, 138, 249));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, QColor(128, 134, 139));
    return p;
}

void applyTheme(Theme theme) {
    if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) QApplication::setStyle(fusion);
    QApplication::setPalette(theme == Theme::Dark ? darkPalette() : QApplication::style()->standardPalette());
}

Theme currentTheme() { return isDark(QApplication::palette()) ? Theme::Dark : Theme::Light; }

} // namespace attnlens::ui
