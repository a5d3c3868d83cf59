#pragma once
// Small pieces every workspace page uses: bold captions, grey hints, and conversions between core's
// 8-bit images and QImage (pixels copied as they are, so the screen shows what the CLI writes).

#include "core/export/colormap.h"
#include "core/io/model_folder.h"
#include "core/vision/image_io.h"

#include <QColor>
#include <QImage>
#include <QList>
#include <QPalette>
#include <QString>

#include <functional>

class QFrame;
class QLabel;
class QScrollArea;
class QToolButton;
class QVBoxLayout;
class QWidget;

namespace attnlens::ui {

class PageMessage;

// A framed panel in the palette's base colour with rounded corners (the pages' top bars); `name` is its
// object name.
QFrame* panelFrame(QWidget* parent, const QString& name, int radius = 6);
// The pages' left column: a scroll area of fixed width holding `panel`, whose vertical layout the page fills.
struct Sidebar {
    QScrollArea* scroll;
    QWidget* panel;
    QVBoxLayout* layout;
};
Sidebar makeSidebar(QWidget* parent, int width = 272);
// The folder of a built-in model, or empty with `error` set to one sentence saying what to do instead.
QString builtinModelPath(ModelKind kind, QString& error);

// The "Export" button of a page's bar: an instant popup menu with one entry per (text, action); a null
// action adds a separator.
struct MenuEntry {
    QString text;
    std::function<void()> action;
};
QToolButton* exportMenuButton(QWidget* parent, const QList<MenuEntry>& entries);

// "−  +  Fit" tool buttons in a row for a zoomable view (object names zoomOut, zoomIn, zoomFit under
// `name`); the actions run on click. Keyboard and Ctrl+wheel zoom are the view's own.
QWidget* zoomButtons(QWidget* parent, const QString& name, std::function<void()> zoomOut,
                     std::function<void()> zoomIn, std::function<void()> fit);

// The frame of a workspace page with a sidebar (Vision, Diffusion): the top bar, the message line floating
// under it, then the sidebar beside the centre, which takes the remaining space.
void assembleWorkspace(QWidget* page, QWidget* topBar, PageMessage* message, QWidget* sidebar,
                       QWidget* centre);

QLabel* caption(const QString& text, QWidget* parent); // bold
QLabel* hint(const QString& text, QWidget* parent);    // muted, word-wrapped
// Secondary text: drawn in the palette's placeholder-text colour (follows light and dark palettes).
void mute(QWidget* widget);
// A red that reads on the palette's window colour (errors, warnings in rich text).
QColor errorColor(const QPalette& palette);
// The colour roles views draw with, from the palette (light and dark alike):
//   accentColor   hovered items and weight tints (the palette's highlight)
//   currentColor  the outline of the current / selected item (the error red: it stands out on any base)
//   frameColor    a cell's or chip's faint outline; faintFill a neutral chip without weight
QColor accentColor(const QPalette& palette);
QColor currentColor(const QPalette& palette);
QColor frameColor(const QPalette& palette);
QColor faintFill(const QPalette& palette);
// a·(1 − t) + b·t per channel.
QColor mixColors(const QColor& a, const QColor& b, double t);
// Whether the palette is dark (window colour darker than its text).
bool isDark(const QPalette& palette);

QImage toQImage(const RgbImage& image); // Format_RGB888; null for an empty image
QImage toQImage(const ImageU8& image);  // grey → Format_Grayscale8, RGB → Format_RGB888
// A QImage (any format) as an 8-bit image: grey stays grey, everything else becomes RGB (alpha dropped).
ImageU8 fromQImage(const QImage& source);

} // namespace attnlens::ui
