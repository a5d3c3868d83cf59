#include "ui/render/overlay_caption.h"

#include "ui/render/heatmap_image.h"

#include <QFontMetrics>
#include <QPainter>

#include <algorithm>

namespace attnlens::ui {

QImage captionedOverlay(const QImage& overlay, ColorMap map, float lo, float hi, const QString& caption,
                        const HeatmapStyle& style) {
    constexpr int kPad = 10, kBarH = 14;
    const QFontMetrics fm(style.font);
    const int width = std::max(overlay.width(), 320);
    const int textW = width - 2 * kPad;
    const QRect captionBox =
        fm.boundingRect(QRect(0, 0, textW, 10000), Qt::AlignLeft | Qt::TextWordWrap, caption);
    const int stripH =
        kPad + kBarH + 4 + fm.height() + (caption.isEmpty() ? 0 : 6 + captionBox.height()) + kPad;
    QImage out(width, overlay.height() + stripH, QImage::Format_RGB32);
    out.fill(style.background);
    QPainter p(&out);
    p.setFont(style.font);
    p.drawImage((width - overlay.width()) / 2, 0, overlay);
    // The colour bar, low values left, as the heatmaps' horizontal bars.
    const QRect bar(kPad, overlay.height() + kPad, textW, kBarH);
    p.drawImage(bar, colorBarImage(map, bar.width(), bar.height(), Qt::Horizontal));
    p.setPen(style.frame);
    p.drawRect(bar.adjusted(0, 0, -1, -1));
    p.setPen(style.text);
    const int ty = bar.bottom() + 4;
    p.drawText(QRect(bar.left(), ty, bar.width(), fm.height()), Qt::AlignLeft | Qt::AlignTop,
               formatHeatmapTick(lo));
    p.drawText(QRect(bar.left(), ty, bar.width(), fm.height()), Qt::AlignHCenter | Qt::AlignTop,
               formatHeatmapTick(0.5f * (lo + hi)));
    p.drawText(QRect(bar.left(), ty, bar.width(), fm.height()), Qt::AlignRight | Qt::AlignTop,
               formatHeatmapTick(hi));
    if (!caption.isEmpty())
        p.drawText(QRect(kPad, ty + fm.height() + 6, textW, captionBox.height()),
                   Qt::AlignLeft | Qt::TextWordWrap, caption);
    return out;
}

} // namespace attnlens::ui
