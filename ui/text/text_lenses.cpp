#include "ui/text/text_lenses.h"

#include "core/analysis/attention_captures.h"
#include "core/analysis/head_stats.h"
#include "core/analysis/text_lenses.h"
#include "core/util/error.h"
#include "ui/render/string_lists.h"
#include "ui/shell/inference_worker.h"
#include "ui/text/text_document.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/neuron_dialog.h"

#include <QFileInfo>

#include <algorithm>
#include <mutex>

namespace attnlens::ui {

namespace {

QString differenceHint() {
    return QObject::tr(
        "Pin the matrix as A, then change the text, step, layer, head, model or the heads that "
        "are off: A, B and A − B appear here.");
}

} // namespace

TextLenses::TextLenses(TextDocument* doc, InferenceWorker* worker, QWidget* page)
    : QObject(page), m_doc(doc), m_worker(worker), m_page(page) {
    // Another model has other heads: none is off (a session restores its own after the load).
    connect(m_doc, &TextDocument::modelChanged, this, [this] {
        m_ablated.clear();
        if (m_heads) m_heads->setAblated(m_ablated);
    });
    // Statistics that were not finished are measured again the next time the tab is shown.
    const auto unfinished = [this](int id) {
        if (id == m_statsJob) m_statsRun.reset();
    };
    connect(m_worker, &InferenceWorker::cancelled, this, unfinished);
    connect(m_worker, &InferenceWorker::failed, this,
            [unfinished](int id, const QString&) { unfinished(id); });
}

QWidget* TextLenses::buildHeadsTab(QWidget* parent) {
    m_heads = new HeadsLensView(parent);
    m_heads->setObjectName(QStringLiteral("textHeads"));
    m_heads->setAblationEnabled(true);
    m_heads->setAblationScope(tr("the matrix, the predictions and the generated tokens are of this run"));
    connect(m_heads, &HeadsLensView::headActivated, this, &TextLenses::headActivated);
    connect(m_heads, &HeadsLensView::ablationRequested, this,
            [this](std::vector<std::pair<int, int>> heads) { setAblated(std::move(heads)); });
    connect(m_heads, &HeadsLensView::importanceRequested, this, &TextLenses::rankHeads);
    connect(m_doc, &TextDocument::runChanged, m_heads, &HeadsLensView::clearImportance);
    refreshHeads();
    return m_heads;
}

void TextLenses::setAblated(HeadList heads) {
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    if (heads == m_ablated) return;
    m_ablated = std::move(heads);
    if (m_heads) m_heads->setAblated(m_ablated);
    emit ablationChanged();
}

void TextLenses::refreshHeads() {
    if (!m_heads) return;
    const auto& run = m_doc->run();
    if (!run || !m_doc->model()) {
        m_heads->clear(tr("Run a text: the statistics of every head over its tokens appear here."));
        return;
    }
    const AttentionKind kind = textAttentionKind(*m_doc->model());
    if (!m_doc->onDemand()) return showStats(captureHeadStats(m_doc->visibleCapture(), kind));
    // A long text: every head's map is made on the worker, one at a time, and measured (once per run and
    // step; the tab shows the previous numbers meanwhile).
    if (m_statsRun.lock() == run && m_statsVisible == m_doc->visibleTokens()) {
        if (m_stats) showStats(*m_stats);
        return;
    }
    m_statsRun = run;
    m_statsVisible = m_doc->visibleTokens();
    m_stats.reset();
    m_heads->clear(tr("Measuring every head over %1 tokens, one map at a time…").arg(m_statsVisible));
    m_statsJob = m_worker->run<std::shared_ptr<const HeadStats>>(
        tr("Measuring every head"),
        [capture = m_doc->visibleCapture(), kind](const Callbacks& cb) {
            return std::make_shared<const HeadStats>(captureHeadStats(capture, kind, {}, &cb));
        },
        [this, key = std::weak_ptr<const void>(run),
         visible = m_statsVisible](std::shared_ptr<const HeadStats> stats) {
            if (key.lock() != m_statsRun.lock() || !key.lock() || visible != m_statsVisible) return;
            m_stats = std::move(stats);
            showStats(*m_stats);
        });
}

void TextLenses::showStats(const HeadStats& stats) {
    const auto& run = m_doc->run();
    const int tokens = m_doc->visibleTokens();
    const bool decoder = m_doc->model()->decoderOnly();
    m_heads->setStats(stats,
                      tr("%1 tokens, %2; sinks: %3")
                          .arg(tokens)
                          .arg(decoder ? tr("causal self-attention") : tr("self-attention"))
                          .arg(decoder ? tr("the first token") : tr("[CLS] and [SEP]")),
                      tr("tokens"));
    m_heads->setCurrentHead(m_doc->layer(), m_doc->head());
    m_heads->setAblated(run->offHeads);
}

void TextLenses::rankHeads() {
    const auto folder = m_doc->model();
    const auto& run = m_doc->run();
    if (!folder || !run) return;
    const std::vector<int> ids(run->ids.begin(), run->ids.begin() + m_doc->visibleTokens());
    const int firstScored = m_doc->step() > 0 ? run->promptLength : 1;
    m_worker->run<std::pair<RowMatrix, std::string>>(
        tr("Ranking heads"),
        [folder, ids, firstScored, off = run->offHeads](const Callbacks& cb) {
            const TextTargets targets = textTargets(*folder, ids, firstScored);
            if (targets.tokens.empty() && folder->hasLmHead())
                throw Error("nothing to rank by: the text needs at least two tokens");
            return std::make_pair(textHeadImportance(*folder, ids, targets, cb, off), targets.description);
        },
        [this](std::pair<RowMatrix, std::string> result) {
            if (!m_heads) return;
            m_heads->setImportance(
                result.first, tr("Importance: how much %1 drops when the head is switched off as well "
                                 "(in this run, with the heads already off). Large = the output leans on "
                                 "this head; ≤ 0 = it does not.")
                                  .arg(QString::fromStdString(result.second).toHtmlEscaped()));
        });
}

QWidget* TextLenses::buildDifferenceTab(QWidget* parent) {
    return DifferenceView::buildTab(
        parent, QStringLiteral("textDifference"),
        tr("Keep the matrix the Matrix tab shows now as A, then change what it shows"), differenceHint(),
        [this] { pin(); }, [this] { unpin(); }, m_difference);
}

QString TextLenses::describeMatrix() const {
    const auto& run = m_doc->run();
    QString text;
    if (run)
        for (int i = 0; i < m_doc->visibleTokens(); ++i)
            text += QString::fromStdString(run->texts[static_cast<size_t>(i)]);
    const QString head = m_doc->head() >= 0                   ? tr("head %1").arg(m_doc->head())
                         : m_doc->fusion() == HeadFusion::Max ? tr("max")
                                                              : tr("mean");
    QString d = tr("“%1” · layer %2 · %3").arg(text.simplified()).arg(m_doc->layer()).arg(head);
    if (run && !run->offHeads.empty()) d += tr(" · %n head(s) off", nullptr, int(run->offHeads.size()));
    if (m_doc->model())
        d += QStringLiteral(" · ") +
             QFileInfo(QString::fromStdString(m_doc->model()->dir.string())).fileName();
    return d;
}

void TextLenses::pin() {
    const TextDocument::Shown shown = m_doc->shown();
    if (!m_doc->run() || shown.values.size() == 0) {
        emit notice(tr("Nothing to pin yet: run a text first."), true);
        return;
    }
    m_pinned =
        Pinned{{shown.values, toStdStrings(shown.rows), toStdStrings(shown.columns)}, describeMatrix()};
    refreshDifference();
}

void TextLenses::unpin() {
    m_pinned.reset();
    refreshDifference();
}

void TextLenses::refreshDifference() {
    if (!m_difference) return;
    if (!m_pinned) return m_difference->clear(differenceHint());
    const TextDocument::Shown shown = m_doc->shown();
    if (!m_doc->run() || shown.values.size() == 0)
        return m_difference->clear(
            tr("A is pinned (%1); B appears when there is a matrix to compare.").arg(m_pinned->description));
    m_difference->compareMatrices(
        m_pinned->matrix, {shown.values, toStdStrings(shown.rows), toStdStrings(shown.columns)},
        m_pinned->description, describeMatrix(), tr("query (attends)"), tr("key (attended to)"));
}

void TextLenses::showNeuronView() {
    const auto folder = m_doc->model();
    const auto run = m_doc->run();
    if (!folder || !run)
        return emit notice(tr("Run a text first: the neuron view takes its scores apart."), true);
    const int visible = m_doc->visibleTokens();
    const std::vector<int> ids(run->ids.begin(), run->ids.begin() + visible);
    QStringList labels = m_doc->visibleTokenLabels();
    NeuronSource source;
    source.title = tr("Text — %1").arg(QString::fromStdString(folder->modelType));
    source.layers = folder->layers();
    source.heads = [heads = folder->heads()](int) { return heads; };
    source.queryLabels = [labels](int) { return labels; };
    source.keyLabels = source.queryLabels;
    if (!m_doc->onDemand()) {
        source.captured = [attention = m_doc->visibleAttention()](int l, int h, int q, int k) {
            return attention.at({l, h, q, k});
        };
    } else { // a long text: the head's map made once, when first asked for
        struct Memo {
            std::mutex mutex;
            int layer = -1, head = -1;
            RowMatrix map;
        };
        source.captured = [run, visible, memo = std::make_shared<Memo>()](int l, int h, int q, int k) {
            const std::lock_guard lock(memo->mutex);
            if (memo->layer != l || memo->head != h) {
                memo->map = TextDocument::visibleHead(*run, visible, l, h);
                memo->layer = l;
                memo->head = h;
            }
            return memo->map(q, k);
        };
    }
    source.inputs = [folder, ids, off = run->offHeads](int l, const Callbacks&) {
        return textAttentionInputs(*folder, ids, l, off);
    };
    source.headOff = [off = run->offHeads](int l, int h) {
        return std::find(off.begin(), off.end(), std::pair(l, h)) != off.end();
    };
    if (!m_neuron) {
        m_neuron = new NeuronDialog(m_worker, m_page);
        connect(m_doc, &TextDocument::runChanged, m_neuron, [this] {
            if (m_neuron->isVisible() && m_doc->run()) showNeuronView();
        });
    }
    const bool keep = m_neuron->isVisible() && m_neuron->terms();
    const int layer = keep ? m_neuron->layer() : m_doc->layer();
    const int head = keep ? m_neuron->head() : std::max(0, m_doc->head());
    // The selected row is a token only when words are not merged and no token is hidden.
    const int selected = m_doc->wordLevel() || m_doc->hideSpecial() ? -1 : m_doc->selectedToken();
    const int query = keep                                  ? std::min(m_neuron->query(), visible - 1)
                      : selected >= 0 && selected < visible ? selected
                                                            : visible - 1;
    m_neuron->setSource(std::move(source), layer, head, query, -1);
    m_neuron->show();
    m_neuron->raise();
}

} // namespace attnlens::ui
