#include "ui/shell/theme.h"

#include "ui/widgets/page_parts.h"

#include <QApplication>
#include <QSettings>
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

namespace {

struct SystemLook {
    QString style;
    QPalette palette;
};

// Captured once, before the first theme replaces them.
const SystemLook& systemLook() {
    static const SystemLook look{QApplication::style() ? QApplication::style()->name() : QString(),
                                 QApplication::palette()};
    return look;
}

Theme g_theme = Theme::System;

} // namespace

void applyTheme(Theme theme) {
    const SystemLook& system = systemLook();
    if (theme == Theme::System) {
        if (QStyle* style = QStyleFactory::create(system.style)) QApplication::setStyle(style);
        QApplication::setPalette(system.palette);
    } else {
        if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) QApplication::setStyle(fusion);
        QApplication::setPalette(theme == Theme::Dark ? darkPalette()
                                                      : QApplication::style()->standardPalette());
    }
    g_theme = theme;
}

Theme currentTheme() {
    return g_theme;
}

QString themeName(Theme theme) {
    switch (theme) {
    case Theme::Light:
        return QStringLiteral("light");
    case Theme::Dark:
        return QStringLiteral("dark");
    case Theme::System:
        break;
    }
    return QStringLiteral("system");
}

std::optional<Theme> parseTheme(const QString& name) {
    for (Theme t : {Theme::System, Theme::Light, Theme::Dark})
        if (name.compare(themeName(t), Qt::CaseInsensitive) == 0) return t;
    return std::nullopt;
}

Theme savedTheme() {
    const QSettings settings;
    if (const auto t = parseTheme(settings.value("theme").toString())) return *t;
    return settings.value("darkMode").toBool() ? Theme::Dark : Theme::System;
}

void saveTheme(Theme theme) {
    QSettings settings;
    settings.setValue("theme", themeName(theme));
    settings.remove("darkMode");
}

} // namespace attnlens::ui
