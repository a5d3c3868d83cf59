#include "ui/render/heatmap_image.h"

#include "core/util/error.h"

namespace attnlens::ui {

QImage heatmapImage(const Eigen::Ref<const RowMatrix>& values, ColorMap map, float lo, float hi, int cell,
                    ColorScale scale) {
    if (cell == 1 && hi > lo) { // straight into the format QPainter draws fastest
        QImage image(static_cast<int>(values.cols()), static_cast<int>(values.rows()), QImage::Format_RGB32);
        if (image.isNull()) return {};
        renderHeatmapArgb(values, map, lo, hi, scale, reinterpret_cast<uint32_t*>(image.bits()),
                          image.bytesPerLine() / 4);
        return image;
    }
    const RgbImage rgb = renderHeatmap(values, map, lo, hi, cell, scale);
    if (rgb.width == 0 || rgb.height == 0) return {};
    // RgbImage rows are tightly packed (3·width bytes); wrap, then convert (deep copy) to RGB32,
    // the format QPainter draws fastest.
    const QImage wrapped(rgb.pixels.data(), rgb.width, rgb.height, rgb.width * 3, QImage::Format_RGB888);
    return wrapped.convertToFormat(QImage::Format_RGB32);
}

QImage colorBarImage(ColorMap map, int length, int thickness, Qt::Orientation orientation) {
    if (length < 1 || thickness < 1) throw Error("colorBarImage: length and thickness must be at least 1");
    const bool vertical = orientation == Qt::Vertical;
    QImage image(vertical ? thickness : length, vertical ? length : thickness, QImage::Format_RGB32);
    for (int i = 0; i < length; ++i) {
        const float t = length > 1 ? static_cast<float>(i) / static_cast<float>(length - 1) : 1.0f;
        const QRgb c = toQColor(colorAt(map, t)).rgb();
        if (vertical) {
            auto* line = reinterpret_cast<QRgb*>(image.scanLine(length - 1 - i));
            for (int x = 0; x < thickness; ++x)
                line[x] = c;
        } else {
            for (int y = 0; y < thickness; ++y)
                reinterpret_cast<QRgb*>(image.scanLine(y))[i] = c;
        }
    }
    return image;
}

QColor toQColor(Rgb rgb) {
    return QColor(rgb.r, rgb.g, rgb.b);
}

QColor colorFor(ColorMap map, float t) {
    return toQColor(colorAt(map, t));
}

QString colorMapDisplayName(ColorMap map) {
    QString name =
        QString::fromUtf8(colorMapName(map).data(), static_cast<qsizetype>(colorMapName(map).size()));
    if (!name.isEmpty()) name[0] = name[0].toUpper();
    return name;
}

QColor contrastingTextColor(const QColor& background) {
    // Relative luminance with sRGB weights; the threshold sits where black and white text have
    // about equal contrast on the colour maps' mid tones.
    const double l = 0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF();
    return l > 0.45 ? QColor(Qt::black) : QColor(Qt::white);
}

} // namespace attnlens::ui
