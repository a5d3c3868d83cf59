#include "ui/render/neuron_chart.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

namespace {

constexpr double kLabelWidth = 56.0;
constexpr double kRowHeight = 46.0;
constexpr double kProductHeight = 86.0;
constexpr double kStripHeight = 34.0;
constexpr double kGap = 10.0;

QColor signedColor(double v, double scale) {
    const double t = scale > 0 ? std::clamp(std::abs(v) / scale, 0.0, 1.0) : 0.0;
    const QColor base = v < 0 ? QColor(49, 104, 176) : QColor(200, 62, 44);
    return QColor::fromRgbF(1.0 - t * (1.0 - base.redF()), 1.0 - t * (1.0 - base.greenF()),
                            1.0 - t * (1.0 - base.blueF()));
}

// One row of signed bars around a zero line: values[order[i]] at slot i.
void paintBars(QPainter& p, const QRectF& area, const std::vector<double>& values,
               const std::vector<int>& order, const QString& label, const QFont& font) {
    double scale = 0;
    for (double v : values)
        scale = std::max(scale, std::abs(v));
    p.setPen(Qt::black);
    p.setFont(font);
    p.drawText(QRectF(area.left(), area.top(), kLabelWidth - 6, area.height()),
               Qt::AlignRight | Qt::AlignVCenter, label);
    const QRectF bars(area.left() + kLabelWidth, area.top(), area.width() - kLabelWidth, area.height());
    const double mid = bars.center().y();
    p.setPen(QPen(QColor(150, 150, 150), 1));
    p.drawLine(QPointF(bars.left(), mid), QPointF(bars.right(), mid));
    const double slot = bars.width() / std::max<size_t>(1, order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        const double v = values[size_t(order[i])];
        const double h = scale > 0 ? (bars.height() / 2 - 1) * std::abs(v) / scale : 0;
        const QRectF r(bars.left() + i * slot + std::min(1.0, slot * 0.15), v >= 0 ? mid - h : mid,
                       std::max(1.0, slot - 2 * std::min(1.0, slot * 0.15)), h);
        p.fillRect(r, signedColor(v, scale));
    }
    p.setPen(QColor(90, 90, 90));
    QFont small = font;
    small.setPointSizeF(font.pointSizeF() * 0.8);
    p.setFont(small);
    p.drawText(QRectF(area.left(), area.center().y() + 8, kLabelWidth - 6, 14), Qt::AlignRight | Qt::AlignTop,
               QStringLiteral("±%1").arg(scale, 0, 'g', 3));
}

// The dimension of each slot under the bars, where a number fits.
void paintDimensions(QPainter& p, const QRectF& area, const std::vector<int>& order, const QFont& font) {
    QFont small = font;
    small.setPointSizeF(font.pointSizeF() * 0.75);
    const QFontMetricsF fm(small);
    const double slot = area.width() / std::max<size_t>(1, order.size());
    if (slot < fm.horizontalAdvance(QStringLiteral("000")) + 2) return;
    p.setFont(small);
    p.setPen(QColor(110, 110, 110));
    for (size_t i = 0; i < order.size(); ++i)
        p.drawText(QRectF(area.left() + i * slot, area.top(), slot, area.height()),
                   Qt::AlignHCenter | Qt::AlignTop, QString::number(order[i]));
}

} // namespace

QStringList neuronArithmetic(const NeuronTerms& t) {
    QStringList lines;
    const int top = std::min(5, t.headDim);
    lines << QStringLiteral("q·k = Σ q_i·k_i = %1 over %2 dimensions (the top %3 by |q_i·k_i| sum to %4 %)")
                 .arg(t.dot, 0, 'f', 4)
                 .arg(t.headDim)
                 .arg(top)
                 .arg(100.0 * t.topShare(top), 0, 'f', 0);
    // The usual 1/√d_k, or the factor the model's config asks for (GPT-2 without scaling, or by 1/(layer +
    // 1)).
    if (std::abs(t.scale * std::sqrt(static_cast<double>(t.headDim)) - 1.0) < 1e-6)
        lines << QStringLiteral("÷ √%1 = %2").arg(t.headDim).arg(t.scaled, 0, 'f', 4);
    else
        lines << QStringLiteral("× %1 (the model's score scale) = %2")
                     .arg(t.scale, 0, 'g', 4)
                     .arg(t.scaled, 0, 'f', 4);
    int visible = 0;
    for (double s : t.rowScores)
        visible += std::isfinite(s) ? 1 : 0;
    if (t.masked)
        lines << QStringLiteral("masked: the key comes after the query (causal mask), so its weight is 0");
    else
        lines << QStringLiteral("softmax over %1 keys: exp(%2 − %3) / %4 = %5")
                     .arg(visible)
                     .arg(t.scaled, 0, 'f', 4)
                     .arg(t.rowMax, 0, 'f', 4)
                     .arg(t.partition, 0, 'f', 4)
                     .arg(QString::number(t.weight, 'g', 4));
    return lines;
}

int neuronChartHeight(const NeuronTerms&, int) {
    return static_cast<int>(30 + 2 * (kRowHeight + kGap) + kProductHeight + 31 + kGap + kStripHeight + kGap +
                            4 + 3 * 20 + 10);
}

void paintNeuronChart(QPainter& p, const QRectF& rect, const NeuronTerms& t, const NeuronChartText& text) {
    p.save();
    p.fillRect(rect, Qt::white);
    QFont font = p.font();
    if (font.pointSizeF() <= 0) font.setPixelSize(12);
    QFont bold = font;
    bold.setBold(true);
    double y = rect.top() + 4;
    p.setPen(Qt::black);
    p.setFont(bold);
    p.drawText(QRectF(rect.left() + 6, y, rect.width() - 12, 22), Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("%1 · query %2 → key %3").arg(text.where, text.query, text.key));
    y += 30;

    std::vector<int> order;
    if (text.sortByContribution) {
        order = t.dimensionsByContribution();
    } else {
        order.resize(size_t(t.headDim));
        for (int i = 0; i < t.headDim; ++i)
            order[size_t(i)] = i;
    }
    const std::vector<double> q(t.q.begin(), t.q.end()), k(t.k.begin(), t.k.end()),
        prod(t.product.begin(), t.product.end());
    const QRectF inner(rect.left() + 4, 0, rect.width() - 8, 0);
    paintBars(p, QRectF(inner.left(), y, inner.width(), kRowHeight), q, order, QStringLiteral("q"), font);
    y += kRowHeight + kGap;
    paintBars(p, QRectF(inner.left(), y, inner.width(), kRowHeight), k, order, QStringLiteral("k"), font);
    y += kRowHeight + kGap;
    paintBars(p, QRectF(inner.left(), y, inner.width(), kProductHeight), prod, order,
              QStringLiteral("q_i·k_i"), font);
    y += kProductHeight + 1;
    paintDimensions(p, QRectF(inner.left() + kLabelWidth, y, inner.width() - kLabelWidth, 14), order, font);
    y += 14;
    p.setPen(QColor(90, 90, 90));
    p.setFont(font);
    p.drawText(QRectF(inner.left() + kLabelWidth, y, inner.width() - kLabelWidth, 16),
               Qt::AlignLeft | Qt::AlignTop,
               text.sortByContribution ? QStringLiteral("dimensions of the head, largest |q_i·k_i| first")
                                       : QStringLiteral("dimensions of the head, 0 … %1").arg(t.headDim - 1));
    y += 16 + kGap;

    // The query's row: every key's scaled score as a cell, the chosen key outlined.
    const QRectF strip(inner.left() + kLabelWidth, y, inner.width() - kLabelWidth, kStripHeight - 12);
    p.setPen(Qt::black);
    p.drawText(QRectF(inner.left(), y, kLabelWidth - 6, strip.height()), Qt::AlignRight | Qt::AlignVCenter,
               QStringLiteral("row"));
    double lo = INFINITY, hi = -INFINITY;
    for (double s : t.rowScores)
        if (std::isfinite(s)) {
            lo = std::min(lo, s);
            hi = std::max(hi, s);
        }
    const double cell = strip.width() / std::max<size_t>(1, t.rowScores.size());
    for (size_t j = 0; j < t.rowScores.size(); ++j) {
        const double s = t.rowScores[j];
        const QRectF r(strip.left() + j * cell, strip.top(), std::max(1.0, cell), strip.height());
        if (!std::isfinite(s)) {
            p.fillRect(r, QColor(225, 225, 225));
            continue;
        }
        const double v = hi > lo ? (s - lo) / (hi - lo) : 1.0;
        p.fillRect(r, QColor::fromRgbF(1.0 - 0.85 * v, 1.0 - 0.55 * v, 1.0 - 0.2 * v));
    }
    p.setPen(QPen(QColor(170, 170, 170), 1));
    p.drawRect(strip);
    if (t.key < static_cast<int>(t.rowScores.size())) {
        p.setPen(QPen(QColor(220, 30, 30), 2));
        p.drawRect(
            QRectF(strip.left() + t.key * cell, strip.top() - 1, std::max(2.0, cell), strip.height() + 2));
    }
    p.setPen(QColor(90, 90, 90));
    p.drawText(QRectF(strip.left(), strip.bottom() + 3, strip.width(), 14), Qt::AlignLeft | Qt::AlignTop,
               QStringLiteral("the query's scaled scores over all %1 keys (light = low); the key outlined")
                   .arg(t.rowScores.size()));
    y += kStripHeight + kGap + 4;

    p.setPen(Qt::black);
    QStringList lines = neuronArithmetic(t);
    if (text.captured)
        lines.back() +=
            QStringLiteral("   (the model's own pass: %1)").arg(QString::number(*text.captured, 'g', 4));
    for (const QString& line : lines) {
        p.drawText(QRectF(rect.left() + 8, y, rect.width() - 16, 20), Qt::AlignLeft | Qt::AlignVCenter, line);
        y += 20;
    }
    p.restore();
}

QImage renderNeuronChart(const NeuronTerms& t, const NeuronChartText& text, int width) {
    QImage img(width, neuronChartHeight(t, width), QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing, false);
    paintNeuronChart(p, QRectF(0, 0, width, img.height()), t, text);
    return img;
}

} // namespace attnlens::ui
