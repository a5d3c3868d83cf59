#include "ui/text/text_kv_whatif.h"

#include "core/util/error.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/job_slot.h"
#include "ui/text/text_document.h"
#include "ui/widgets/flow_layout.h"
#include "ui/widgets/heatmap_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <utility>

namespace attnlens::ui {

namespace {

// The policies in the combo, in order, with their form's name (kvPolicyName's).
struct PolicyChoice {
    const char* id;
    const char* label;
};
constexpr PolicyChoice kPolicies[] = {
    {"streaming", QT_TRANSLATE_NOOP("TextKvWhatIf", "StreamingLLM (sinks + window)")},
    {"h2o", QT_TRANSLATE_NOOP("TextKvWhatIf", "H2O (heavy hitters + recent)")},
    {"snapkv", QT_TRANSLATE_NOOP("TextKvWhatIf", "SnapKV (the prompt's end votes)")},
    {"keep", QT_TRANSLATE_NOOP("TextKvWhatIf", "Hand-picked positions")},
    {"full", QT_TRANSLATE_NOOP("TextKvWhatIf", "Everything (the run itself)")},
};

QString number(float v, int decimals = 3) {
    return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("—");
}

QSpinBox* countBox(const char* name, int value, QWidget* parent) {
    auto* box = new QSpinBox(parent);
    box->setObjectName(QString::fromLatin1(name));
    box->setRange(0, 100000);
    box->setValue(value);
    return box;
}

} // namespace

TextKvWhatIf::TextKvWhatIf(TextDocument* doc, InferenceWorker* worker, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_worker(worker) {
    m_jobs = new JobSlot(
        worker, [this] { refresh(); }, this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* bar = new QWidget(this);
    auto* row = new FlowLayout(bar); // wraps in a narrow window
    row->setContentsMargins(0, 0, 0, 0);
    m_policy = new QComboBox(this);
    m_policy->setObjectName(QStringLiteral("kvPolicy"));
    for (const auto& p : kPolicies)
        m_policy->addItem(tr(p.label), QString::fromLatin1(p.id));
    m_policy->setToolTip(tr("Which cache entries stay as the text grows. Eviction starts after the prompt; "
                            "the kept entries keep their positions."));
    m_firstLabel = new QLabel(this);
    m_secondLabel = new QLabel(this);
    m_first = countBox("kvFirst", 4, this);
    m_second = countBox("kvSecond", 16, this);
    m_keep = new QLineEdit(QStringLiteral("0-3"), this);
    m_keep->setObjectName(QStringLiteral("kvKeep"));
    m_keep->setToolTip(tr("Prompt positions from 0 to keep: 0,2,5-9 (every generated token stays)"));
    m_steps = new QSpinBox(this);
    m_steps->setObjectName(QStringLiteral("kvSteps"));
    m_steps->setRange(1, kMaxKvSteps);
    m_steps->setValue(16);
    m_steps->setToolTip(tr("How many tokens the continuation runs"));
    m_free = new QCheckBox(tr("Let it write"), this);
    m_free->setObjectName(QStringLiteral("kvFree"));
    m_free->setToolTip(tr("Feed the policy's own choices (the text it would write) instead of the "
                          "baseline's tokens; log-probabilities and KL stop where the texts part"));
    row->addWidget(m_policy);
    row->addWidget(m_firstLabel);
    row->addWidget(m_first);
    row->addWidget(m_secondLabel);
    row->addWidget(m_second);
    row->addWidget(m_keep, 1);
    row->addWidget(new QLabel(tr("tokens"), this));
    row->addWidget(m_steps);
    row->addWidget(m_free);
    layout->addWidget(bar);
    auto* split = new QSplitter(Qt::Vertical, this);
    m_map = new HeatmapView(split);
    m_map->setObjectName(QStringLiteral("kvMap"));
    m_table = new QTableWidget(split);
    m_table->setObjectName(QStringLiteral("kvTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setDefaultSectionSize(20);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("kvSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    syncFields();
    connect(m_policy, &QComboBox::currentIndexChanged, this, [this] {
        syncFields();
        refresh();
    });
    for (QSpinBox* box : {m_first, m_second, m_steps})
        connect(box, &QSpinBox::valueChanged, this, &TextKvWhatIf::refresh);
    connect(m_keep, &QLineEdit::editingFinished, this, &TextKvWhatIf::refresh);
    connect(m_free, &QCheckBox::toggled, this, &TextKvWhatIf::refresh);
}

void TextKvWhatIf::syncFields() {
    const QString id = m_policy->currentData().toString();
    const bool numbers =
        id == QLatin1String("streaming") || id == QLatin1String("h2o") || id == QLatin1String("snapkv");
    for (QWidget* w : std::initializer_list<QWidget*>{m_firstLabel, m_first, m_secondLabel, m_second})
        w->setVisible(numbers);
    m_keep->setVisible(id == QLatin1String("keep"));
    // each policy's own defaults (H2O's recent and SnapKV's window may not exceed the budget)
    const QSignalBlocker blockFirst(m_first), blockSecond(m_second);
    if (id == QLatin1String("streaming")) {
        m_firstLabel->setText(tr("sinks"));
        m_secondLabel->setText(tr("window"));
        m_first->setValue(4), m_second->setValue(16);
    } else if (id == QLatin1String("h2o")) {
        m_firstLabel->setText(tr("budget"));
        m_secondLabel->setText(tr("recent"));
        m_first->setValue(32), m_second->setValue(8);
    } else if (id == QLatin1String("snapkv")) {
        m_firstLabel->setText(tr("budget"));
        m_secondLabel->setText(tr("window"));
        m_first->setValue(32), m_second->setValue(8);
    }
}

void TextKvWhatIf::setPolicy(const QString& text) {
    try {
        const KvPolicy p = parseKvPolicy(text.toStdString());
        const QString name = QString::fromStdString(kvPolicyName(p)).section(QLatin1Char(':'), 0, 0);
        const QSignalBlocker block(m_policy), blockFirst(m_first), blockSecond(m_second);
        m_policy->setCurrentIndex(std::max(0, m_policy->findData(name)));
        syncFields();
        if (p.kind == KvPolicy::Kind::Streaming) {
            m_first->setValue(p.sinks);
            m_second->setValue(p.window);
        } else if (p.kind == KvPolicy::Kind::HeavyHitters) {
            m_first->setValue(p.budget);
            m_second->setValue(p.recent);
        } else if (p.kind == KvPolicy::Kind::SnapKv) {
            m_first->setValue(p.budget);
            m_second->setValue(p.window);
        } else if (p.kind == KvPolicy::Kind::Keep) {
            m_keep->setText(text.section(QLatin1Char(':'), 1));
        }
    } catch (const Error& e) {
        emit notice(QString::fromUtf8(e.what()), true);
        return;
    }
    refresh();
}

void TextKvWhatIf::setSteps(int steps) {
    m_steps->setValue(steps);
}

void TextKvWhatIf::setFree(bool free) {
    m_free->setChecked(free);
}

QString TextKvWhatIf::summary() const {
    return m_summary->text();
}

QString TextKvWhatIf::tokenText(int id) const {
    QString t = QString::fromStdString(m_doc->model()->tokenText(id));
    t.replace(QLatin1Char('\n'), QStringLiteral("\u21b5"));
    return t;
}

std::optional<TextKvWhatIf::Request> TextKvWhatIf::request() {
    const auto& folder = m_doc->model();
    const auto& run = m_doc->run();
    if (!folder || !run) return std::nullopt;
    if (!folder->decoderOnly() || !folder->hasLmHead()) {
        m_summary->setText(tr("An encoder keeps no cache: KV-cache what-ifs are for decoder-only models."));
        return std::nullopt;
    }
    Request r;
    r.run = run;
    const QString id = m_policy->currentData().toString();
    if (id == QLatin1String("keep"))
        r.policy = "keep:" + m_keep->text().trimmed().toStdString();
    else if (id != QLatin1String("full"))
        r.policy = id.toStdString() + ":" + std::to_string(m_first->value()) + "," +
                   std::to_string(m_second->value());
    else
        r.policy = "full";
    try {
        parseKvPolicy(r.policy);
    } catch (const Error& e) {
        m_refused = true;
        emit notice(QString::fromUtf8(e.what()), true);
        return std::nullopt;
    }
    r.steps = m_steps->value();
    r.free = m_free->isChecked();
    return r;
}

void TextKvWhatIf::refresh() {
    if (!isVisible()) return; // the page refreshes it when its tab is shown: no work for a hidden tab
    const auto r = request();
    if (!r) {
        if (!std::exchange(m_refused, false)) { // no run: nothing to show; a bad policy: the map stays
            m_shown.reset();
            m_result.reset();
            m_map->setMatrix(RowMatrix());
            m_table->clear();
        }
        return;
    }
    if (m_shown == r) return;
    if (!m_jobs->claim()) return; // one job at a time: the settings of the moment once it ends
    start(*r);
}

void TextKvWhatIf::start(const Request& r) {
    const auto folder = m_doc->model();
    // the baseline depends on the run's prompt and the length only: another policy reuses it
    const std::shared_ptr<const KvBaseline> baseline =
        m_baselineRun == r.run && m_baselineSteps == r.steps ? m_baseline : nullptr;
    const std::vector<int> prompt(r.run->ids.begin(), r.run->ids.begin() + r.run->promptLength);
    m_jobs->hold(m_worker->run<Result>(
        tr("KV-cache what-if"),
        [folder, prompt, baseline, r, source = m_cacheSource](const Callbacks& cb) {
            Result out{baseline, {}};
            if (!out.baseline) {
                KvOptions options{.steps = r.steps, .offHeads = r.run->offHeads};
                // the page's run: its prompt's attention and cache, not run again
                const TextCache* cache = source ? source(r.run) : nullptr;
                if (cache && r.run->prompt && cache->length() >= int64_t(prompt.size())) {
                    options.promptAttention = r.run->prompt.get();
                    options.promptCache = cache;
                }
                out.baseline =
                    std::make_shared<const KvBaseline>(kvBaseline(*folder->model, prompt, options, cb));
            }
            out.rerun = kvRerun(*folder->model, *out.baseline, parseKvPolicy(r.policy),
                                r.free ? KvRerunMode::Free : KvRerunMode::Forced, cb);
            return out;
        },
        [this, r](Result result) {
            if (r.run != m_doc->run() || !m_doc->model()) return;
            show(r, std::move(result));
        }));
}

void TextKvWhatIf::show(const Request& r, Result result) {
    m_shown = r;
    m_baseline = result.baseline;
    m_baselineRun = r.run;
    m_baselineSteps = r.steps;
    m_result = std::move(result.rerun);
    showMap(*m_result);
    showTable(*m_result);
    showSummary(*m_result);
}

void TextKvWhatIf::showMap(const KvRerun& r) {
    const int p = r.kept.promptLength, steps = r.kept.steps, keys = p + steps;
    RowMatrix kept = RowMatrix::Zero(steps, keys), written = RowMatrix::Zero(steps, keys);
    QStringList rows, columns;
    for (int j = 0; j < p; ++j)
        columns << QString::fromStdString(m_shown->run->texts[size_t(j)]);
    for (int s = 0; s < steps; ++s) {
        const KvRerunStep& st = r.steps[size_t(s)];
        columns << tokenText(st.fed);
        rows << QStringLiteral("%1 %2%3").arg(s).arg(
            tokenText(st.fed), st.chosen != st.original ? QStringLiteral(" *") : QString());
        for (int j = 0; j <= p + s; ++j) {
            kept(s, j) = r.kept.kept(s, j) ? 1.0f : 0.0f;
            written(s, j) = 1.0f;
        }
    }
    m_map->setAxisTitles(tr("step: token fed (* next differs)"),
                         tr("cache entry — yellow kept, dark evicted, hatched not yet written"));
    m_map->setMatrix(std::move(kept), rows, columns);
    m_map->setMask(written);
    m_map->setMaskedText(QString());
    m_map->setColorMap(ColorMap::Viridis);
    m_map->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_map->setFixedRange(0.0f, 1.0f);
    m_map->setCellTexts({});
    m_map->setAnnotationsEnabled(false);
    m_map->setColorBarVisible(false);
}

void TextKvWhatIf::showTable(const KvRerun& r) {
    const QStringList headers{
        tr("fed"), tr("baseline next"), tr("policy next"), tr("log p (policy)"), tr("log p (baseline)"),
        tr("KL"),  tr("kept"),          tr("KiB")};
    m_table->clear();
    m_table->setColumnCount(int(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    m_table->setRowCount(int(r.steps.size()));
    QStringList steps; // numbered from 0, as the map's rows
    for (int s = 0; s < int(r.steps.size()); ++s)
        steps << QString::number(s);
    m_table->setVerticalHeaderLabels(steps);
    for (int s = 0; s < int(r.steps.size()); ++s) {
        const KvRerunStep& st = r.steps[size_t(s)];
        const QStringList cells{tokenText(st.fed),
                                tokenText(st.original),
                                tokenText(st.chosen) +
                                    (st.chosen != st.original ? QStringLiteral(" *") : QString()),
                                number(st.logprob),
                                number(st.baseLogprob),
                                number(st.kl, 4),
                                QString::number(st.kept),
                                QString::number(double(st.cacheBytes) / 1024.0, 'f', 1)};
        for (int c = 0; c < int(cells.size()); ++c)
            m_table->setItem(s, c, new QTableWidgetItem(cells[c]));
    }
    m_table->resizeColumnsToContents();
}

void TextKvWhatIf::showSummary(const KvRerun& r) {
    const KvRerun::Totals t = r.totals(); // Free mode: the steps before the texts part
    const KvRerunStep last = r.steps.empty() ? KvRerunStep{} : r.steps.back();
    const int all = r.kept.promptLength + int(r.steps.size());
    const double allKiB = double(m_baseline->entryBytes) * all / 1024.0;
    QString html =
        tr("<b>%1</b>: %n of %2 step(s) choose another token than the baseline", nullptr, r.changed())
            .arg(QString::fromStdString(kvPolicyName(r.policy)).toHtmlEscaped())
            .arg(r.steps.size());
    if (r.firstChange >= 0) html += tr(" (first at step %1)").arg(r.firstChange);
    html += tr(". Log p of the baseline's continuation %1 (baseline %2) over %3 step(s); mean KL %4 nats. "
               "Cache at the last step: %5 entries, %6 KiB (the whole cache: %7, %8 KiB). Re-run in %9 ms.")
                .arg(t.logprob, 0, 'f', 3)
                .arg(t.baseLogprob, 0, 'f', 3)
                .arg(t.compared)
                .arg(t.meanKl(), 0, 'f', 4)
                .arg(last.kept)
                .arg(double(last.cacheBytes) / 1024.0, 0, 'f', 1)
                .arg(all)
                .arg(allKiB, 0, 'f', 1)
                .arg(r.seconds * 1e3, 0, 'f', 0);
    m_summary->setText(html);
}

} // namespace attnlens::ui
