#include "ui/render/difference_image.h"

#include "ui/render/string_lists.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

namespace {

QString axisLine(const char* axis, const AxisAlignment& a, const std::vector<std::string>& onlyA,
                 const std::vector<std::string>& onlyB) {
    QString line = QStringLiteral("%1 matched by %2: %3")
                       .arg(QLatin1String(axis), QLatin1String(axisMatchName(a.how)))
                       .arg(a.pairs.size());
    if (!onlyA.empty())
        line += QStringLiteral(" · only in A: %1").arg(toQStringList(onlyA).join(QLatin1Char(' ')));
    if (!onlyB.empty())
        line += QStringLiteral(" · only in B: %1").arg(toQStringList(onlyB).join(QLatin1Char(' ')));
    return line;
}

} // namespace

QStringList differenceSummary(const AttentionDiff& d) {
    QStringList lines;
    lines << QStringLiteral("max |Δ| = %1 · mean Jensen–Shannon divergence of matched rows %2 bits (0 = the "
                            "same, 1 = disjoint)")
                 .arg(d.maxAbs, 0, 'f', 4)
                 .arg(std::isnan(d.meanJs) ? QStringLiteral("—") : QString::number(d.meanJs, 'f', 4));
    lines << axisLine("rows", d.rows, d.rowsOnlyA, d.rowsOnlyB)
          << axisLine("columns", d.columns, d.columnsOnlyA, d.columnsOnlyB);
    return lines;
}

QImage renderDifference(const AttentionDiff& d, const DifferenceText& text, const HeatmapStyle& style,
                        ColorMap map) {
    HeatmapScene scenes[3];
    const float hi = std::max({1e-6f, d.a.maxCoeff(), d.b.maxCoeff()});
    const float span = std::max(1e-6f, static_cast<float>(d.maxAbs));
    const RowMatrix* values[3] = {&d.a, &d.b, &d.diff};
    for (int i = 0; i < 3; ++i) {
        HeatmapScene& s = scenes[i];
        s.values = *values[i];
        s.rowLabels = toQStringList(d.rowLabels);
        s.columnLabels = toQStringList(d.columnLabels);
        s.rowTitle = text.rowTitle;
        s.columnTitle = text.columnTitle;
        s.colorMap = i < 2 ? map : ColorMap::Diverging;
        s.lo = i < 2 ? 0.0f : -span;
        s.hi = i < 2 ? hi : span;
        s.updateImage();
    }
    const int cell = std::clamp(defaultExportCell(scenes[0]), 4, 48);
    QImage images[3];
    for (int i = 0; i < 3; ++i)
        images[i] = renderHeatmap(scenes[i], style, cell);
    const QFontMetrics fm(style.font);
    const int title = fm.height() + 8, gap = 16;
    const QStringList summary = differenceSummary(d);
    const int footer = static_cast<int>(summary.size()) * (fm.height() + 2) + 8;
    int width = 2 * gap, height = 0;
    for (const QImage& im : images) {
        width += im.width();
        height = std::max(height, im.height());
    }
    QImage out(width, title + height + footer, QImage::Format_RGB32);
    out.fill(style.background);
    QPainter p(&out);
    p.setFont(style.font);
    p.setPen(style.text);
    const QString titles[3] = {QStringLiteral("A: ") + text.a, QStringLiteral("B: ") + text.b,
                               QStringLiteral("A − B")};
    int x = 0;
    for (int i = 0; i < 3; ++i) {
        p.drawText(QRect(x, 0, images[i].width(), title), Qt::AlignCenter,
                   fm.elidedText(titles[i], Qt::ElideRight, images[i].width()));
        p.drawImage(x, title, images[i]);
        x += images[i].width() + gap;
    }
    int y = title + height + 4;
    for (const QString& line : summary) {
        p.drawText(QRect(8, y, width - 16, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, line);
        y += fm.height() + 2;
    }
    return out;
}

} // namespace attnlens::ui
