#include "ui/translate/step_panel.h"

#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>

#include <cmath>

namespace attnlens::ui {

namespace {

QString piece(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

} // namespace

// Which hypothesis the views show while stepping a beam search, and where the final translation (once
// known) parts from it.
QString hypothesisNote(const TranslationSnapshot& snap, const TranslationTrace& shown, int selectedNode,
                       const std::vector<std::string>& finalTokens) {
    if (snap.numBeams <= 1 && selectedNode <= 0) return {};
    QString text = QStringLiteral("<br>");
    if (selectedNode > 0)
        text +=
            StepPanel::tr("Shown: beam node %1's hypothesis at step %2.").arg(selectedNode).arg(snap.step);
    else if (snap.finished)
        text += StepPanel::tr("Shown: the final best hypothesis.");
    else
        text += StepPanel::tr("Shown: the <b>best partial hypothesis at step %1</b> (of %2 beams).")
                    .arg(snap.step)
                    .arg(snap.numBeams);
    if (finalTokens.empty() || (snap.finished && selectedNode <= 0)) return text;
    const auto& here = shown.targetTokens;
    size_t k = 0;
    while (k < here.size() && k < finalTokens.size() && here[k] == finalTokens[k])
        ++k;
    if (k == here.size()) return text + StepPanel::tr(" The final translation continues it.");
    return text + StepPanel::tr(" <span style='color:%1'>The final translation parts from it at target "
                                "token %2: here <b>%3</b>, final <b>%4</b>.</span>")
                      .arg(QStringLiteral("#d93025"))
                      .arg(k)
                      .arg(piece(here[k]))
                      .arg(k < finalTokens.size() ? piece(finalTokens[k]) : StepPanel::tr("(ended)"));
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
    // One row per head (and the mean), a column per source piece: long sentences make the columns thin,
    // so rows may grow up to 10× their width to keep every head readable; hover names every column.
    m_cross->setMaximumCellAspect(10.0);
    m_cross->setMinimumHeight(150);
    m_cross->setMaximumHeight(320);
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

QString StepPanel::titleText() const {
    return m_title->text();
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
            .arg(std::max(0, layer)) +
        hypothesisNote(*snap, *trace, m_doc->selectedBeamNode(), m_doc->finalTargetTokens()));
    m_cross->setMatrix(m_matrix.values, m_matrix.rowLabels, m_matrix.columnLabels);
    // Room for the rotated source labels and a text line per head.
    m_cross->setMinimumHeight(std::clamp(140 + 20 * static_cast<int>(m_matrix.values.rows()), 150, 320));
    if (m_doc->head() >= 0 && m_doc->kind() == AttentionKind::Cross)
        m_cross->selectRow(m_doc->head());
    else
        m_cross->selectRow(static_cast<int>(m_matrix.values.rows()) - 1);
    m_candTitle->setText(
        tr("<b>Top %1 candidates</b> for this position").arg(trace->candidates.back().size()));
    m_bars->setCandidates(trace->candidates.back(), trace->targetIds.back());
}

} // namespace attnlens::ui
