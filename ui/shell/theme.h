#pragma once
// The app's look: the system's (the platform style and palette Qt started with), or Fusion with our light
// or dark palette. Widgets take their colours from palette roles (page_parts.h's mute() / errorColor(),
// stylesheets with palette(...)), so switching restyles every page.
//
//   applyTheme(savedTheme());      // at start-up: View → Theme's remembered choice ("theme" setting)
//   applyTheme(Theme::Dark);       // Fusion style + a dark palette, app-wide
//   saveTheme(Theme::Dark);

#include <QPalette>
#include <QString>

#include <optional>

namespace attnlens::ui {

enum class Theme { System, Light, Dark };

QPalette darkPalette();
// System: the style and palette the application had before the first applyTheme(); Light / Dark: the
// Fusion style (the same look on every desktop) with the standard or the dark palette.
void applyTheme(Theme theme);
// The theme last applied (System before any).
Theme currentTheme();

QString themeName(Theme theme); // "system", "light", "dark"
std::optional<Theme> parseTheme(const QString& name);
// The "theme" setting; an older "darkMode = true" reads as Dark; System when neither is set.
Theme savedTheme();
void saveTheme(Theme theme);

} // namespace attnlens::ui
