#pragma once
// Small pieces every workspace page uses: bold captions, grey hints, and conversions between core's
// 8-bit images and QImage (pixels copied as they are, so the screen shows what the CLI writes).

#include "core/export/colormap.h"
#include "core/vision/image_io.h"

#include <QImage>
#include <QString>

class QLabel;
class QWidget;

namespace attnlens::ui {

QLabel* caption(const QString& text, QWidget* parent); // bold
QLabel* hint(const QString& text, QWidget* parent);    // grey, word-wrapped

QImage toQImage(const RgbImage& image);  // Format_RGB888; null for an empty image
QImage toQImage(const ImageU8& image);   // grey → Format_Grayscale8, RGB → Format_RGB888
// A QImage (any format) as an 8-bit image: grey stays grey, everything else becomes RGB (alpha dropped).
ImageU8 fromQImage(const QImage& source);

} // namespace attnlens::ui
