#include "ui/vision/predictions_view.h"

#include <QPainter>

#include <algorithm>

namespace attnlens::ui {

namespace {
constexpr int kRows = 5;
int rowHeight(const QFontMetrics& fm) {
    return fm.height() * 2 + 6;
}
} // namespace

PredictionsView::PredictionsView(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void PredictionsView::setPredictions(std::vector<Prediction> predictions, const QString& expected) {
    m_predictions = std::move(predictions);
    m_expected = expected;
    m_message.clear();
    update();
}

void PredictionsView::setMessage(const QString& text) {
    m_predictions.clear();
    m_message = text;
    update();
}

QSize PredictionsView::sizeHint() const {
    return {260, kRows * rowHeight(fontMetrics()) + 4};
}
QSize PredictionsView::minimumSizeHint() const {
    return {160, kRows * rowHeight(fontMetrics()) + 4};
}

void PredictionsView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QFontMetrics fm = fontMetrics();
    if (m_predictions.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_message);
        return;
    }
    const int rh = rowHeight(fm);
    const QColor accent = palette().color(QPalette::Highlight);
    for (size_t i = 0; i < m_predictions.size() && i < kRows; ++i) {
        const Prediction& pr = m_predictions[i];
        const int y = static_cast<int>(i) * rh + 2;
        const QString label = QString::fromStdString(pr.label);
        const QString pct =
            QString::number(100.0 * pr.probability, 'f', pr.probability >= 0.995f ? 1 : 1) + " %";
        QFont f = font();
        f.setBold(i == 0);
        p.setFont(f);
        p.setPen(palette().color(QPalette::WindowText));
        const int pctW = fm.horizontalAdvance(QStringLiteral("100.0 %")) + 4;
        QString shown = label;
        if (!m_expected.isEmpty() && label == m_expected) shown += tr("  (true class)");
        p.drawText(QRect(0, y, width() - pctW, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetrics(f).elidedText(shown, Qt::ElideRight, width() - pctW));
        p.drawText(QRect(width() - pctW, y, pctW, fm.height()), Qt::AlignRight | Qt::AlignVCenter, pct);
        const QRectF track(0, y + fm.height() + 3, width() - 1, fm.height() * 0.55);
        p.setPen(Qt::NoPen);
        p.setBrush(palette().color(QPalette::Midlight));
        p.drawRoundedRect(track, 3, 3);
        QColor bar = i == 0 ? accent : accent.lighter(150);
        p.setBrush(bar);
        const double w = std::clamp(static_cast<double>(pr.probability), 0.0, 1.0) * track.width();
        if (w > 0.5) p.drawRoundedRect(QRectF(track.x(), track.y(), std::max(w, 6.0), track.height()), 3, 3);
    }
}

} // namespace attnlens::ui
