#include "ui/render/attention_lines.h"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <array>
#include <cmath>

namespace attnlens::ui {

QColor headColor(int head) {
    static const std::array<QColor, 12> palette = {
        QColor(31, 119, 180),  QColor(255, 127, 14), QColor(44, 160, 44),   QColor(214, 39, 40),
        QColor(148, 103, 189), QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127),
        QColor(188, 189, 34),  QColor(23, 190, 207), QColor(57, 59, 121),   QColor(173, 73, 74)};
    return palette[static_cast<size_t>(std::abs(head)) % palette.size()];
}

int AttentionLineGeometry::rowAt(double y, int count) const {
    if (y < top) return -1;
    const int i = static_cast<int>((y - top) / rowHeight);
    return i < count ? i : -1;
}

AttentionLineGeometry layoutAttentionLines(const AttentionLineScene& scene, int width, const QFont& font) {
    AttentionLineGeometry g;
    const QFontMetrics fm(font);
    g.rowHeight = std::max(20, fm.height() + 6);
    int labelWidth = 120; // also room for the column titles
    for (const QString& s : scene.left)
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(s) + 16);
    for (const QString& s : scene.right)
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(s) + 16);
    labelWidth = std::min(labelWidth, 180);
    const int rows = static_cast<int>(std::max(scene.left.size(), scene.right.size()));
    const double height = g.top + rows * g.rowHeight + 12;
    const double margin = 16;
    const double w = std::max<double>(width, 2 * labelWidth + 2 * margin + 160);
    g.leftColumn = QRectF(margin, g.top, labelWidth, scene.left.size() * g.rowHeight);
    g.rightColumn = QRectF(w - margin - labelWidth, g.top, labelWidth, scene.right.size() * g.rowHeight);
    g.size = QSize(static_cast<int>(w), static_cast<int>(height));
    return g;
}

namespace {

// The rows [first, last] within `visible` widened by `margin` screens (all rows for a null rectangle).
std::pair<int, int> rowsIn(const AttentionLineGeometry& g, const QRectF& visible, int count, double margin) {
    if (visible.isNull()) return {0, count - 1};
    const double pad = margin * visible.height();
    const int first = static_cast<int>(std::floor((visible.top() - pad - g.top) / g.rowHeight));
    const int last = static_cast<int>(std::floor((visible.bottom() + pad - g.top) / g.rowHeight));
    return {std::max(first, 0), std::min(last, count - 1)};
}

// Attention to / from the focus in the drawn lines, averaged over the enabled heads: [right] for a query
// focus, [left] for a key focus.
std::vector<float> focusShade(const AttentionLineScene& scene, AttentionLineFocus focus, bool right) {
    std::vector<float> shade(static_cast<size_t>(right ? scene.right.size() : scene.left.size()), 0.0f);
    int enabled = 0;
    for (size_t h = 0; h < scene.heads.size(); ++h) {
        if (h < scene.enabled.size() && !scene.enabled[h]) continue;
        ++enabled;
        const AttentionLinks& l = scene.heads[h];
        for (int q = 0; q < l.queries(); ++q) {
            if (right && q != focus.left) continue;
            for (int i = l.start[static_cast<size_t>(q)]; i < l.end(q, scene.linksPerQuery); ++i) {
                const auto k = static_cast<size_t>(l.key[static_cast<size_t>(i)]);
                const float w = l.weight[static_cast<size_t>(i)];
                if (right && k < shade.size()) shade[k] += w;
                if (!right && static_cast<int>(k) == focus.right && size_t(q) < shade.size())
                    shade[static_cast<size_t>(q)] += w;
            }
        }
    }
    if (enabled > 0)
        for (float& s : shade)
            s /= static_cast<float>(enabled);
    return shade;
}

} // namespace

AttentionLinks lineLinks(const RowMatrix& weights) {
    return topLinks(weights, 0, kLineThreshold);
}

void paintAttentionLabels(QPainter& p, const AttentionLineScene& scene, const AttentionLineGeometry& g,
                          AttentionLineFocus focus, const QColor& text, const QRectF& visible) {
    const std::vector<float> shadeRight =
        focus.left >= 0 ? focusShade(scene, focus, true) : std::vector<float>(size_t(scene.right.size()));
    const std::vector<float> shadeLeft =
        focus.right >= 0 ? focusShade(scene, focus, false) : std::vector<float>(size_t(scene.left.size()));
    const QFont normal = p.font();
    QFont bold = normal;
    bold.setBold(true);
    auto column = [&](const QStringList& labels, const QRectF& box, const std::vector<float>& shade,
                      int focused, Qt::Alignment align) {
        const QFontMetrics fm(normal);
        const auto [first, last] = rowsIn(g, visible, static_cast<int>(labels.size()), 0.0);
        for (int i = first; i <= last; ++i) {
            const QRectF r(box.left(), g.top + i * g.rowHeight + 1, box.width(), g.rowHeight - 2);
            const float s = std::clamp(shade[static_cast<size_t>(i)], 0.0f, 1.0f);
            if (i == focused) {
                p.setPen(Qt::NoPen);
                p.setBrush(QColor(66, 133, 244, 60));
                p.drawRoundedRect(r, 4, 4);
            } else if (s > 0.0f) {
                p.setPen(Qt::NoPen);
                p.setBrush(QColor(66, 133, 244, static_cast<int>(std::lround(40 + 180 * s))));
                p.drawRoundedRect(r, 4, 4);
            }
            p.setFont(i == focused ? bold : normal);
            p.setPen(text);
            p.drawText(r.adjusted(6, 0, -6, 0), static_cast<int>(align | Qt::AlignVCenter),
                       fm.elidedText(labels[i], Qt::ElideRight, static_cast<int>(r.width()) - 12));
        }
    };
    const QFont base = p.font();
    column(scene.left, g.leftColumn, shadeLeft, focus.left, Qt::AlignRight);
    p.setFont(base);
    column(scene.right, g.rightColumn, shadeRight, focus.right, Qt::AlignLeft);
    p.setFont(base);
}

int paintAttentionLines(QPainter& p, const AttentionLineScene& scene, const AttentionLineGeometry& g,
                        AttentionLineFocus focus, const QRectF& visible) {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    const double x0 = g.leftColumn.right() + 4, x1 = g.rightColumn.left() - 4;
    // A focused key's lines come from anywhere; otherwise the queries within a screen of the visible part.
    const auto [first, last] = focus.right >= 0
                                   ? std::pair{0, int(scene.left.size()) - 1}
                                   : rowsIn(g, visible, static_cast<int>(scene.left.size()), 1.0);
    int drawn = 0;
    for (size_t h = 0; h < scene.heads.size(); ++h) {
        if (h < scene.enabled.size() && !scene.enabled[h]) continue;
        const AttentionLinks& l = scene.heads[h];
        QColor c = headColor(static_cast<int>(h));
        for (int q = std::max(first, 0); q <= last && q < l.queries(); ++q) {
            if (focus.left >= 0 && q != focus.left) continue;
            for (int i = l.start[static_cast<size_t>(q)]; i < l.end(q, scene.linksPerQuery); ++i) {
                const int k = l.key[static_cast<size_t>(i)];
                if (focus.right >= 0 && k != focus.right) continue;
                const float w = l.weight[static_cast<size_t>(i)];
                c.setAlphaF(std::clamp(0.15f + 0.85f * w, 0.0f, 1.0f));
                p.setPen(QPen(c, 0.8 + 3.0 * w, Qt::SolidLine, Qt::RoundCap));
                p.drawLine(QPointF(x0, g.leftY(q)), QPointF(x1, g.leftY(k)));
                ++drawn;
            }
        }
    }
    p.restore();
    return drawn;
}

} // namespace attnlens::ui
