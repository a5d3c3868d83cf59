#include "ui/translate/step_panel.h"

#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>
#include <cmath>

namespace attnlens::ui {

namespace {
constexpr int kBarRow = 22;
}

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
        p.setBrush(mixColors(palette().color(QPalette::Base), palette().color(QPalette::WindowText), 0.06));
        p.drawRoundedRect(QRect(labelW, y + 4, barW, kBarRow - 8), 3, 3);
        p.setBrush(chosen ? QColor(26, 115, 232) : QColor(138, 180, 248));
        p.drawRoundedRect(QRectF(labelW, y + 4,
                                 std::max(2.0, double(barW) * std::clamp(double(c.prob), 0.0, 1.0)),
                                 kBarRow - 8),
                          3, 3);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(labelW + barW + 6, y, pctW, kBarRow), Qt::AlignLeft | Qt::AlignVCenter,
                   QStringLiteral("%1 %").arg(100.0 * double(c.prob), 0, 'f', c.prob >= 0.1f ? 1 : 2));
    }
}

StepPanel::StepPanel(TranslationDocument* document, QWidget* parent) : QWidget(parent), m_doc(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    m_title = new QLabel(this);
    m_title->setWordWrap(true);
    m_title->setObjectName(QStringLiteral("stepTitle"));
    layout->addWidget(m_title);
    m_cross = new HeatmapView(this);
    m_cross->setObjectName(QStringLiteral("newestCross"));
    m_cross->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_cross->setMaximumCellSize(34);
    m_cross->setColorBarVisible(false);
    m_cross->setAxisTitles(QString(), tr("source"));
    m_cross->setMinimumHeight(150);
    m_cross->setMaximumHeight(300);
    layout->addWidget(m_cross);
    m_candTitle = new QLabel(this);
    layout->addWidget(m_candTitle);
    m_bars = new CandidateBars(this);
    layout->addWidget(m_bars);
    layout->addStretch(1);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &StepPanel::refresh);
    connect(m_doc, &TranslationDocument::selectionChanged, this, &StepPanel::refresh);
    refresh();
}

void StepPanel::refresh() {
    const auto trace = m_doc->trace();
    const auto snap = m_doc->snapshot();
    const int layer = m_doc->kind() == AttentionKind::EncoderSelf
                          ? m_doc->layerCount(AttentionKind::Cross) - 1
                          : m_doc->layer();
    m_matrix = m_doc->newestCrossAttention(std::max(0, layer));
    if (!trace || !snap || trace->targetTokens.empty() || m_matrix.empty()) {
        m_title->setText(
            snap ? tr("<b>Step %1 of at most %2</b><br>Step forward to generate the first target token.")
                       .arg(snap->step)
                       .arg(snap->maxNewTokens)
                 : tr("<b>Current step</b><br>Nothing decoded yet."));
        m_cross->setMatrix(RowMatrix::Zero(1, 1), {QString()}, {QString()});
        m_candTitle->clear();
        m_bars->setCandidates({}, -1);
        return;
    }
    const QString newest = QString::fromStdString(trace->targetTokens.back());
    m_title->setText(
        tr("<b>Step %1 of at most %2</b>%3<br>Newest token <b>%4</b>: cross-attention over the source, "
           "layer %5")
            .arg(snap->step)
            .arg(snap->maxNewTokens)
            .arg(snap->finished ? tr(" · finished") : QString())
            .arg(newest.toHtmlEscaped())
            .arg(std::max(0, layer)));
    m_cross->setMatrix(m_matrix.values, m_matrix.rowLabels, m_matrix.columnLabels);
    if (m_doc->head() >= 0 && m_doc->kind() == AttentionKind::Cross)
        m_cross->selectRow(m_doc->head());
    else
        m_cross->selectRow(static_cast<int>(m_matrix.values.rows()) - 1);
    m_candTitle->setText(
        tr("<b>Top %1 candidates</b> for this position").arg(trace->candidates.back().size()));
    m_bars->setCandidates(trace->candidates.back(), trace->targetIds.back());
}

} // namespace attnlens::ui
