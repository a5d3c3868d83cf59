#include "ui/widgets/candidate_bars.h"

#include "ui/widgets/page_parts.h"

#include <QPainter>

#include <algorithm>

namespace attnlens::ui {

namespace {
constexpr int kBarRow = 22;
} // namespace

CandidateBars::CandidateBars(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("candidateBars"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void CandidateBars::setCandidates(std::vector<TokenCandidate> candidates, int chosenId) {
    m_candidates = std::move(candidates);
    m_chosen = chosenId;
    setFixedHeight(std::max(1, static_cast<int>(m_candidates.size())) * kBarRow + 4);
    update();
}

QSize CandidateBars::sizeHint() const {
    return {260, std::max(1, static_cast<int>(m_candidates.size())) * kBarRow + 4};
}

void CandidateBars::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    if (m_candidates.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignLeft | Qt::AlignVCenter, tr("No step yet."));
        return;
    }
    const int labelW = std::min(110, width() / 3), pctW = 54;
    const int barW = std::max(20, width() - labelW - pctW - 12);
    const QFontMetrics fm(font());
    for (size_t i = 0; i < m_candidates.size(); ++i) {
        const TokenCandidate& c = m_candidates[i];
        const int y = 2 + static_cast<int>(i) * kBarRow;
        const bool chosen = c.id == m_chosen;
        QFont f = font();
        f.setBold(chosen);
        p.setFont(f);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(0, y, labelW - 6, kBarRow), Qt::AlignRight | Qt::AlignVCenter,
                   fm.elidedText(QString::fromStdString(c.piece), Qt::ElideRight, labelW - 8));
        p.setPen(Qt::NoPen);
        p.setBrush(faintFill(palette()));
        p.drawRoundedRect(QRect(labelW, y + 4, barW, kBarRow - 8), 3, 3);
        p.setBrush(chosen ? accentColor(palette())
                          : mixColors(palette().color(QPalette::Base), accentColor(palette()), 0.5));
        p.drawRoundedRect(QRectF(labelW, y + 4,
                                 std::max(2.0, double(barW) * std::clamp(double(c.prob), 0.0, 1.0)),
                                 kBarRow - 8),
                          3, 3);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(labelW + barW + 6, y, pctW, kBarRow), Qt::AlignLeft | Qt::AlignVCenter,
                   QStringLiteral("%1 %").arg(100.0 * double(c.prob), 0, 'f', c.prob >= 0.1f ? 1 : 2));
    }
}

} // namespace attnlens::ui
