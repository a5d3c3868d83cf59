#pragma once
// The app's light and dark palettes. Widgets take their colours from palette roles (page_parts.h's
// mute() / errorColor(), stylesheets with palette(...)), so switching the palette restyles every page.
//
//   applyTheme(Theme::Dark);   // Fusion style + a dark palette, app-wide

#include <QPalette>

namespace attnlens::ui {

enum class Theme { Light, Dark };

QPalette darkPalette();
// Sets the Fusion style (the same look on every desktop) and the theme's palette on the application.
void applyTheme(Theme theme);
Theme currentTheme();

} // namespace attnlens::ui
