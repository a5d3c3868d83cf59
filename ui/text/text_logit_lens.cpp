#include "ui/text/text_logit_lens.h"

#include "ui/shell/inference_worker.h"
#include "ui/shell/job_slot.h"
#include "ui/text/text_document.h"
#include "ui/widgets/heatmap_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace attnlens::ui {

namespace {

constexpr int kLensColumns = 24; // positions the lens map shows, ending at the chosen one
// Vocabulary × layers × positions above which the chosen position is read out and shown first
constexpr double kQuickReadout = 3e7;

QString signedNumber(double v) {
    return (v < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + QString::number(std::abs(v), 'f', 3);
}

} // namespace

TextLogitLens::TextLogitLens(TextDocument* doc, InferenceWorker* worker, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_worker(worker) {
    m_jobs = new JobSlot(
        worker, [this] { refresh(); }, this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* row = new QHBoxLayout;
    m_mode = new QComboBox(this);
    m_mode->setObjectName(QStringLiteral("logitLensMode"));
    m_mode->addItem(tr("Logit lens: each layer read out"));
    m_mode->addItem(tr("Contributions: who wrote the logit"));
    m_mode->setToolTip(
        tr("Logit lens: the residual stream after each layer through the model's final norm and "
           "head — what it would say if it stopped there.\nContributions: the target's logit "
           "split over every head and MLP (direct logit attribution, the final norm's scale "
           "frozen); they sum to the logit."));
    m_position = new QSpinBox(this);
    m_position->setObjectName(QStringLiteral("logitLensPosition"));
    m_position->setMinimum(-1);
    m_position->setSpecialValueText(tr("last"));
    m_position->setValue(-1);
    m_position->setToolTip(tr("The token whose next-token prediction is taken apart, from 0"));
    m_target = new QLineEdit(this);
    m_target->setObjectName(QStringLiteral("logitLensTarget"));
    m_target->setPlaceholderText(tr("the model's top token"));
    m_target->setToolTip(tr("The token to follow: one token of the tokenizer, its leading space included "
                            "(\" Paris\"); empty: the model's own top token"));
    m_target->setClearButtonEnabled(true);
    row->addWidget(m_mode);
    row->addWidget(new QLabel(tr("position"), this));
    row->addWidget(m_position);
    row->addWidget(new QLabel(tr("target"), this));
    row->addWidget(m_target, 1);
    layout->addLayout(row);
    m_map = new HeatmapView(this);
    m_map->setObjectName(QStringLiteral("logitLensMap"));
    layout->addWidget(m_map, 1);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("logitLensSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    connect(m_mode, &QComboBox::currentIndexChanged, this, &TextLogitLens::refresh);
    connect(m_position, &QSpinBox::valueChanged, this, &TextLogitLens::refresh);
    connect(m_target, &QLineEdit::editingFinished, this, &TextLogitLens::refresh);
    connect(m_map, &HeatmapView::cellClicked, this, [this](int r, int c) {
        if (!m_shown) return;
        if (m_shown->mode == Mode::Contributions && c < m_heads) emit headActivated(r, c);
        if (m_shown->mode == Mode::Lens) // a column: that position
            setPosition(m_shown->position - (m_map->columns() - 1 - c));
    });
}

TextLogitLens::Mode TextLogitLens::mode() const {
    return m_mode->currentIndex() == 1 ? Mode::Contributions : Mode::Lens;
}

void TextLogitLens::setMode(Mode mode) {
    m_mode->setCurrentIndex(mode == Mode::Contributions ? 1 : 0);
}

void TextLogitLens::setPosition(int position) {
    m_position->setValue(std::max(position, -1));
}

void TextLogitLens::setTarget(const QString& text) {
    m_target->setText(text);
    refresh();
}

QString TextLogitLens::summary() const {
    return m_summary->text();
}

QString TextLogitLens::where(const Request& r, int target, int position) const {
    return tr("<b>“%1”</b> at position %2 (“%3”)")
        .arg(tokenText(target).toHtmlEscaped())
        .arg(position)
        .arg(QString::fromStdString(r.run->texts[size_t(position)]).toHtmlEscaped());
}

QString TextLogitLens::tokenText(int id) const {
    QString t = QString::fromStdString(m_doc->model()->tokenText(id));
    t.replace(QLatin1Char('\n'), QStringLiteral("\u21b5"));
    return t;
}

std::optional<TextLogitLens::Request> TextLogitLens::request() {
    const auto& folder = m_doc->model();
    const auto& run = m_doc->run();
    if (!folder || !run) return std::nullopt;
    if (!folder->hasLmHead()) {
        m_summary->setText(
            tr("This model has no language-model head: there is nothing to read the stream out "
               "to."));
        return std::nullopt;
    }
    Request r;
    r.run = run;
    r.visible = m_doc->visibleTokens();
    m_position->setMaximum(r.visible - 1);
    r.position = m_position->value() < 0 ? r.visible - 1 : std::min(m_position->value(), r.visible - 1);
    r.mode = mode();
    if (const QString text = m_target->text(); !text.isEmpty()) {
        const auto plain = folder->tokenizer->encodePlain(text.toStdString());
        if (plain.ids.size() != 1) {
            m_refused = true;
            emit notice(tr("Target “%1” is %n token(s), not one; a word after a space needs its space "
                           "(“ Paris”).",
                           nullptr, int(plain.ids.size()))
                            .arg(text),
                        true);
            return std::nullopt;
        }
        r.target = plain.ids.front();
    }
    return r;
}

void TextLogitLens::refresh() {
    const auto r = request();
    if (!r) {
        if (!std::exchange(m_refused, false)) { // no run: nothing to show; a bad target: the map stays
            m_shown.reset();
            m_map->setMatrix(RowMatrix());
        }
        return;
    }
    if (m_shown == r) return;
    if (!m_jobs->claim()) return; // one job at a time: the settings of the moment once it ends
    start(*r);
}

// Whether `r` still describes what the page shows (the run and its step).
bool TextLogitLens::current(const Request& r) const {
    return r.run == m_doc->run() && r.visible == m_doc->visibleTokens() && m_doc->model();
}

void TextLogitLens::start(const Request& r) {
    const auto folder = m_doc->model();
    const std::vector<int> ids(r.run->ids.begin(), r.run->ids.begin() + r.visible);
    const HeadList off = r.run->offHeads; // as the run on screen: its heads switched off stay off
    if (r.mode == Mode::Lens) {
        std::vector<int> positions;
        for (int p = std::max(0, r.position - kLensColumns + 1); p <= r.position; ++p)
            positions.push_back(p);
        const auto job = [folder, ids, target = r.target, off, source = m_cacheSource,
                          run = r.run](const std::vector<int>& columns, const Callbacks& cb) {
            const std::vector<int> targets(target >= 0 ? columns.size() : 0, target);
            const TextCache* past = source ? source(run) : nullptr;
            return LensResult{logitLens(*folder->model, ids, columns, targets, 5, &cb, off, past)};
        };
        // a large readout (Qwen's 152k tokens × 25 layers × 24 positions: ~2 s): the chosen position first
        const double readout =
            double(folder->vocabSize()) * (folder->layers() + 1) * double(positions.size());
        auto full = std::make_shared<int>(-1); // the job with every position
        if (positions.size() > 1 && readout > kQuickReadout)
            m_worker->run<LensResult>(
                tr("Logit lens"), [job, p = r.position](const Callbacks& cb) { return job({p}, cb); },
                [this, r, full](LensResult result) {
                    if (current(r) && m_jobs->job() == *full) showLens(r, result); // the rest is on its way
                });
        m_jobs->hold(m_worker->run<LensResult>(
            tr("Logit lens"), [job, positions](const Callbacks& cb) { return job(positions, cb); },
            [this, r](LensResult result) {
                if (!current(r)) return;
                m_shown = r;
                showLens(r, result);
            }));
        *full = m_jobs->job();
    } else {
        m_jobs->hold(m_worker->run<LogitContributions>(
            tr("Head contributions"),
            [folder, ids, position = r.position, target = r.target, off, source = m_cacheSource,
             run = r.run](const Callbacks& cb) {
                const TextCache* past = source ? source(run) : nullptr;
                return logitContributions(*folder->model, ids, position, target, &cb, off, past);
            },
            [this, r](LogitContributions c) {
                if (!current(r)) return;
                m_shown = r;
                showContributions(r, c);
            }));
    }
}

void TextLogitLens::showLens(const Request& r, const LensResult& result) {
    const auto& lenses = result.lenses;
    const int rows = static_cast<int>(lenses.front().layers.size()), cols = static_cast<int>(lenses.size());
    RowMatrix probs(rows, cols);
    QStringList texts, rowLabels, columnLabels;
    for (int l = 0; l < rows; ++l)
        rowLabels << (l == 0 ? tr("embeddings") : l == rows - 1 ? tr("output") : tr("after %1").arg(l - 1));
    for (int l = 0; l < rows; ++l)
        for (int c = 0; c < cols; ++c) {
            const auto& top = lenses[size_t(c)].layers[size_t(l)].top.front();
            probs(l, c) = top.prob;
            texts << tokenText(top.id);
        }
    for (const auto& lens : lenses)
        columnLabels << QString::fromStdString(r.run->texts[size_t(lens.position)]);
    m_map->setAxisTitles(tr("layer (the stream after it)"), tr("position (predicting the token after it)"));
    m_map->setMatrix(std::move(probs), rowLabels, columnLabels);
    m_map->setColorMap(ColorMap::Viridis);
    m_map->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_map->setFixedRange(0.0f, 1.0f);
    m_map->setCellTexts(texts);
    const LogitLens& last = lenses.back();
    QString html = tr("Target %1%2 — its rank (0 = top) and probability, layer by layer:")
                       .arg(where(r, last.target, last.position))
                       .arg(r.target < 0 ? tr(", the model's own top token") : QString());
    html += QStringLiteral("<table cellspacing=6><tr><td></td>");
    for (const QString& label : rowLabels)
        html += QStringLiteral("<td align=right>%1</td>").arg(label.toHtmlEscaped());
    html += QStringLiteral("</tr><tr><td>") + tr("rank") + QStringLiteral("</td>");
    for (const auto& layer : last.layers)
        html += QStringLiteral("<td align=right>%1</td>").arg(layer.targetRank);
    html += QStringLiteral("</tr><tr><td>p</td>");
    for (const auto& layer : last.layers)
        html += QStringLiteral("<td align=right>%1</td>").arg(layer.targetProb, 0, 'f', 3);
    m_summary->setText(html + QStringLiteral("</tr></table>"));
}

void TextLogitLens::showContributions(const Request& r, const LogitContributions& c) {
    const int layers = static_cast<int>(c.heads.rows());
    m_heads = static_cast<int>(c.heads.cols());
    const bool bias =
        std::any_of(c.outputBias.begin(), c.outputBias.end(), [](float v) { return v != 0.0f; });
    RowMatrix values(layers, m_heads + 1 + (bias ? 1 : 0));
    values.leftCols(m_heads) = c.heads;
    QStringList columns;
    for (int h = 0; h < m_heads; ++h)
        columns << tr("h%1").arg(h);
    columns << tr("MLP");
    if (bias) columns << tr("o bias");
    double heads = 0, mlps = 0, biases = 0;
    for (int l = 0; l < layers; ++l) {
        values(l, m_heads) = c.mlp[size_t(l)];
        if (bias) values(l, m_heads + 1) = c.outputBias[size_t(l)];
        heads += c.heads.row(l).sum();
        mlps += c.mlp[size_t(l)] + c.cross[size_t(l)] + c.whole[size_t(l)];
        biases += c.outputBias[size_t(l)];
    }
    // the heads' own range (the MLPs, often larger, saturate; their numbers are in the cells)
    const float span =
        std::max(1e-6f, m_heads > 0 ? c.heads.cwiseAbs().maxCoeff() : values.cwiseAbs().maxCoeff());
    QStringList rowLabels;
    for (int l = 0; l < layers; ++l)
        rowLabels << QString::number(l);
    m_map->setAxisTitles(tr("layer"), tr("head (click: its attention), then the MLP"));
    m_map->setMatrix(std::move(values), rowLabels, columns);
    m_map->setColorMap(ColorMap::Diverging);
    m_map->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_map->setFixedRange(-span, span);
    m_map->setCellTexts({});
    std::vector<std::pair<float, QString>> ranked;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            ranked.emplace_back(c.heads(l, h), QStringLiteral("%1:%2").arg(l).arg(h));
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return std::abs(a.first) > std::abs(b.first); });
    QString top;
    for (size_t i = 0; i < std::min<size_t>(ranked.size(), 6); ++i)
        top += QStringLiteral(" %1 %2").arg(ranked[i].second, signedNumber(ranked[i].first));
    QString html =
        tr("Logit of %1: <b>%2</b>%3 = embeddings %4 + heads %5 + MLPs %6 + o_proj biases %7 + "
           "constant %8 (sum %9).")
            .arg(where(r, c.target, c.position))
            .arg(c.logit, 0, 'f', 3)
            .arg(c.softcap > 0 ? tr(" (soft-capped; the parts sum to it before the cap)") : QString())
            .arg(signedNumber(c.embeddings), signedNumber(heads), signedNumber(mlps), signedNumber(biases),
                 signedNumber(c.constant))
            .arg(c.total(), 0, 'f', 3);
    m_summary->setText(html + QStringLiteral("<br>") + tr("Heads that move it most (layer:head):") + top);
}

} // namespace attnlens::ui
