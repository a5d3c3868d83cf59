#include "ui/translate/translate_logit_lens.h"

#include "core/analysis/model_lenses.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/job_slot.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/heatmap_view.h"

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

namespace attnlens::ui {

TranslateLogitLens::TranslateLogitLens(TranslationDocument* doc, InferenceWorker* worker,
                                       std::function<MarianAblation()> ablation, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_worker(worker), m_ablation(std::move(ablation)) {
    m_jobs = new JobSlot(
        worker, [this] { refresh(); }, this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    m_map = new HeatmapView(this);
    m_map->setObjectName(QStringLiteral("translateLensMap"));
    layout->addWidget(m_map, 1);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("translateLensSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    connect(m_map, &HeatmapView::cellClicked, this, [this](int, int column) { setPosition(column); });
}

QString TranslateLogitLens::summary() const {
    return m_summary->text();
}

void TranslateLogitLens::setPosition(int position) {
    m_position = position;
    showSummary();
}

void TranslateLogitLens::refresh() {
    if (!isVisible()) return; // the page refreshes it when its tab is shown
    const auto trace = m_doc->trace();
    if (!m_doc->hasModel() || !trace || trace->targetIds.empty()) {
        m_shown.reset();
        m_lenses.clear();
        m_map->setMatrix(RowMatrix());
        m_summary->setText(tr("Translate a sentence: each decoder layer is then read out at every target "
                              "position."));
        return;
    }
    if (trace == m_shown) return;
    if (!m_jobs->claim()) return; // one job at a time: the settings of the moment once it ends
    start(trace);
}

void TranslateLogitLens::start(std::shared_ptr<const TranslationTrace> trace) {
    const auto model = m_doc->model().model;
    m_jobs->hold(m_worker->run<std::vector<LogitLens>>(
        tr("Logit lens"),
        [model, trace, ablation = m_ablation ? m_ablation() : MarianAblation()](const Callbacks&) {
            const MarianAblation* off = ablation.any() ? &ablation : nullptr;
            const std::vector<int> input = model->forcedDecoderInput(trace->targetIds);
            std::vector<int> positions(input.size());
            std::iota(positions.begin(), positions.end(), 0);
            // each position's target: the piece the search chose there
            return marianLogitLens(*model, model->encode(trace->sourceIds, false, off), input, positions,
                                   trace->targetIds, 5, off);
        },
        [this, trace](std::vector<LogitLens> lenses) {
            if (trace != m_doc->trace()) return;
            m_shown = trace;
            show(lenses);
        }));
}

void TranslateLogitLens::show(const std::vector<LogitLens>& lenses) {
    m_lenses = lenses;
    const int rows = int(lenses.front().layers.size()), cols = int(lenses.size());
    RowMatrix probs(rows, cols);
    QStringList texts, rowLabels, columnLabels;
    for (int l = 0; l < rows; ++l)
        rowLabels << (l == 0 ? tr("embeddings") : l == rows - 1 ? tr("output") : tr("after %1").arg(l - 1));
    const auto piece = [this](int id) {
        return QString::fromStdString(m_doc->model().tokenizer->idToPiece(id));
    };
    for (int l = 0; l < rows; ++l)
        for (int c = 0; c < cols; ++c) {
            const auto& top = lenses[size_t(c)].layers[size_t(l)].top.front();
            probs(l, c) = top.prob;
            texts << piece(top.id);
        }
    for (const auto& lens : lenses)
        columnLabels << piece(lens.target);
    m_map->setAxisTitles(tr("decoder layer (the stream after it)"),
                         tr("target position (the piece chosen there; click: its ranks)"));
    m_map->setMatrix(std::move(probs), rowLabels, columnLabels);
    m_map->setColorMap(ColorMap::Viridis);
    m_map->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_map->setFixedRange(0.0f, 1.0f);
    m_map->setCellTexts(texts);
    showSummary();
}

void TranslateLogitLens::showSummary() {
    if (m_lenses.empty()) return;
    const int position =
        std::clamp(m_position < 0 ? int(m_lenses.size()) - 1 : m_position, 0, int(m_lenses.size()) - 1);
    const LogitLens& lens = m_lenses[size_t(position)];
    const QString piece = QString::fromStdString(m_doc->model().tokenizer->idToPiece(lens.target));
    QString html =
        tr("Target position %1, <b>“%2”</b> (the piece chosen) — its rank (0 = top) and probability, "
           "layer by layer:")
            .arg(position)
            .arg(piece.toHtmlEscaped());
    html += QStringLiteral("<table cellspacing=6><tr><td></td>");
    for (int l = 0; l < m_map->rows(); ++l)
        html += QStringLiteral("<td align=right>%1</td>").arg(m_map->rowLabel(l).toHtmlEscaped());
    html += QStringLiteral("</tr><tr><td>") + tr("rank") + QStringLiteral("</td>");
    for (const auto& layer : lens.layers)
        html += QStringLiteral("<td align=right>%1</td>").arg(layer.targetRank);
    html += QStringLiteral("</tr><tr><td>p</td>");
    for (const auto& layer : lens.layers)
        html += QStringLiteral("<td align=right>%1</td>").arg(layer.targetProb, 0, 'f', 3);
    m_summary->setText(html + QStringLiteral("</tr></table>"));
}

} // namespace attnlens::ui
