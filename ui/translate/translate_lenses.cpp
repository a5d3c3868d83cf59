#include "ui/translate/translate_lenses.h"

#include "core/analysis/ablation_change.h"
#include "core/analysis/attention_captures.h"
#include "core/analysis/attention_flow.h"
#include "core/analysis/head_importance.h"
#include "core/analysis/head_stats.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "core/models/marian_folder.h"
#include "ui/render/string_lists.h"
#include "ui/render/trace_heatmap.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/workspace_page.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/neuron_dialog.h"

#include <QFileInfo>
#include <QPalette>
#include <QTabWidget>

#include <cmath>

namespace attnlens::ui {

namespace {

QString kindTitle(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::EncoderSelf:
        return QObject::tr("encoder self-attention");
    case AttentionKind::DecoderSelf:
        return QObject::tr("decoder self-attention (masked)");
    case AttentionKind::Cross:
        return QObject::tr("cross-attention");
    }
    return {};
}

} // namespace

TranslateLenses::TranslateLenses(TranslationDocument* doc, InferenceWorker* worker, QTabWidget* tabs,
                                 WorkspacePage* page)
    : QObject(page), m_doc(doc), m_worker(worker), m_tabs(tabs), m_page(page) {
    connect(m_tabs, &QTabWidget::currentChanged, this, &TranslateLenses::refreshHeads);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &TranslateLenses::refreshHeads);
    connect(m_doc, &TranslationDocument::selectionChanged, this, &TranslateLenses::refreshHeads);
    connect(m_doc, &TranslationDocument::selectionChanged, this, &TranslateLenses::requestFlow);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &TranslateLenses::requestFlow);
}

QWidget* TranslateLenses::buildHeadsTab() {
    m_heads = new HeadsLensView(m_tabs);
    m_heads->setAblationEnabled(true);
    connect(m_heads, &HeadsLensView::headActivated, this, [this](int layer, int head) {
        m_doc->setLayer(layer);
        m_doc->setHead(head);
        emit headActivated();
    });
    connect(m_heads, &HeadsLensView::ablationRequested, this, [this](HeadList heads) {
        // The lens shows one kind: replace that kind's switched-off heads, keep the others'.
        MarianAblation next = m_ablation;
        next.setHeads(m_doc->kind(), heads, m_doc->model().model->config());
        setAblation(std::move(next));
    });
    connect(m_heads, &HeadsLensView::importanceRequested, this, &TranslateLenses::rankHeads);
    return m_heads;
}

void TranslateLenses::setPinned(const LabelledMatrix& matrix, const QString& description) {
    m_pinned = Pinned{matrix, description};
    refreshDifference();
}

std::optional<std::pair<LabelledMatrix, QString>> TranslateLenses::pinned() const {
    if (!m_pinned) return std::nullopt;
    return std::pair(m_pinned->matrix, m_pinned->description);
}

struct TranslateLenses::AblationComparison {
    std::string translation; // the plain model's
    std::vector<int> plainIds;
    AblationChange change; // against the ablated trace on screen
};

void TranslateLenses::setAblation(MarianAblation ablation) {
    m_ablation = std::move(ablation);
    forgetComparison();
    refreshHeads();
    emit ablationChanged();
}

void TranslateLenses::forgetComparison() {
    m_baseline.clear();
    m_ablationChange.reset();
}

QString TranslateLenses::translationLine(QString& tip) const {
    tip.clear();
    const auto t = m_doc->trace();
    if (!t) return {};
    QString text =
        tr("<span style='color:%3'>translation:</span> <b>%1</b>%2")
            .arg(QString::fromStdString(t->translation).toHtmlEscaped(),
                 m_doc->selectedBeamNode() > 0 ? tr(" (beam node %1)").arg(m_doc->selectedBeamNode())
                                               : QString(),
                 m_page->palette().color(QPalette::PlaceholderText).name());
    if (m_ablation.any()) {
        const int n = m_ablation.count();
        text += (n == 1 ? tr(" — <b>1 head off</b>") : tr(" — <b>%1 heads off</b>").arg(n));
        if (!m_baseline.isEmpty()) text += tr("; with all heads: <i>%1</i>").arg(m_baseline.toHtmlEscaped());
        if (const auto& c = m_ablationChange; c && c->change.position >= 0) {
            const auto piece = [this](int id) {
                return QString::fromStdString(m_doc->model().tokenizer->idToPiece(id)).toHtmlEscaped();
            };
            const size_t at = static_cast<size_t>(c->change.position);
            const QString token = piece(c->plainIds[at]);
            text += c->change.partsAt >= 0
                        ? tr(" · the tokens part at target position %1: p(<b>%2</b>) %3 → <b>%4</b>")
                        : tr(" · same tokens; the largest drop at target position %1: p(<b>%2</b>) %3 → "
                             "<b>%4</b>");
            text = text.arg(c->change.position)
                       .arg(token)
                       .arg(c->change.plainProbability[at], 0, 'f', 3)
                       .arg(c->change.ablatedProbability[at], 0, 'f', 3);
            const auto list = [&piece](const std::vector<TokenChoice>& top) {
                QStringList items;
                for (const TokenChoice& choice : top)
                    items << QStringLiteral("%1 %2").arg(piece(choice.id)).arg(choice.probability, 0, 'f', 3);
                return items.join(QStringLiteral(", "));
            };
            tip = tr("At target position %1 (teacher-forced over the plain translation):<br>top 5 with all "
                     "heads: %2<br>"
                     "top 5 with the heads off: %3")
                      .arg(c->change.position)
                      .arg(list(c->change.topPlain), list(c->change.topAblated));
        }
    }
    return text;
}

void TranslateLenses::compareWithAllHeads() {
    const MarianFolder model = m_doc->model();
    const auto trace = m_doc->trace();
    if (!trace || !model.model) return;
    DecodeOptions options;
    options.numBeams = m_doc->snapshot() && m_doc->snapshot()->numBeams > 1 ? m_doc->snapshot()->numBeams : 1;
    options.maxNewTokens = m_doc->snapshot() ? m_doc->snapshot()->maxNewTokens : 64;
    options.captureAttention = false;
    m_ablationChange.reset();
    m_worker->run<std::shared_ptr<const AblationComparison>>(
        tr("Translating with all heads"),
        [model, options, trace, ablation = m_ablation](const Callbacks& cb) {
            DecodeSession plain(model.model, model.tokenizer, trace->source, options);
            plain.run(cb);
            auto out = std::make_shared<AblationComparison>();
            out->translation = plain.trace()->translation;
            out->plainIds = plain.trace()->targetIds;
            if (!out->plainIds.empty())
                out->change = marianAblationChange(*model.model, trace->sourceIds, out->plainIds,
                                                   trace->targetIds, ablation);
            return std::shared_ptr<const AblationComparison>(std::move(out));
        },
        [this, trace](std::shared_ptr<const AblationComparison> comparison) {
            m_baseline = QString::fromStdString(comparison->translation);
            if (m_doc->trace() == trace) m_ablationChange = std::move(comparison);
            emit translationLineChanged();
        });
}

void TranslateLenses::rankHeads() {
    const MarianFolder model = m_doc->model();
    const auto trace = m_doc->trace();
    if (!trace || !model.model) return;
    const AttentionKind kind = m_doc->kind();
    m_worker->run<RowMatrix>(
        tr("Ranking heads"),
        [model, trace, kind](const Callbacks& cb) {
            return marianHeadImportance(*model.model, trace->sourceIds, trace->targetIds, kind, cb);
        },
        [this, kind, trace](RowMatrix drop) {
            if (m_doc->kind() != kind || m_doc->trace() != trace) return; // the user moved on
            m_rankedFor = trace.get();
            m_rankedKind = kind;
            m_heads->setImportance(
                drop,
                tr("Importance: how much the log-probability of the translation on screen drops when the "
                   "head "
                   "alone is switched off (teacher-forced over its tokens). Large = the translation leans on "
                   "this head."));
        });
}

QWidget* TranslateLenses::buildDifferenceTab() {
    QWidget* tab = DifferenceView::buildTab(
        m_tabs, QStringLiteral("differenceView"),
        tr("Keep the matrix the Matrix tab shows now as A; then change the sentence, step, kind, layer, head "
           "or "
           "model and compare"),
        tr("Pin a matrix as A, then change what the Matrix tab shows: A, B and A − B appear here."),
        [this] { pin(); }, [this] { unpin(); }, m_difference);
    connect(m_doc, &TranslationDocument::selectionChanged, this, &TranslateLenses::refreshDifference);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &TranslateLenses::refreshDifference);
    connect(m_doc, &TranslationDocument::modelChanged, this, &TranslateLenses::refreshDifference);
    return tab;
}

QString TranslateLenses::describeMatrix() const {
    const auto trace = m_doc->trace();
    QString head;
    if (m_doc->showsThrough())
        head = m_doc->through() == TranslationDocument::Through::Rollout
                   ? tr("rollout 0–%1").arg(m_doc->layer())
                   : tr("flow 0–%1").arg(m_doc->layer());
    else
        head = tr("layer %1 · %2")
                   .arg(m_doc->layer())
                   .arg(m_doc->head() >= 0 ? tr("head %1").arg(m_doc->head())
                                           : (m_doc->fusion() == HeadFusion::Max ? tr("max") : tr("mean")));
    if (m_doc->valueWeighted() && !m_doc->showsThrough()) head += tr(" · value-weighted");
    return tr("“%1” · %2 · %3 · step %4 · %5")
        .arg(trace ? QString::fromStdString(trace->source) : QString(), attentionKindName(m_doc->kind()),
             head)
        .arg(m_doc->snapshot() ? m_doc->snapshot()->step : 0)
        .arg(QFileInfo(m_doc->modelDir()).fileName());
}

void TranslateLenses::pin() {
    const AttentionMatrix m = m_doc->currentMatrix();
    if (m.empty()) {
        emit notice(tr("Nothing to pin yet: translate a sentence first."), true);
        return;
    }
    m_pinned = Pinned{{m.values, toStdStrings(m.rowLabels), toStdStrings(m.columnLabels)}, describeMatrix()};
    refreshDifference();
    emit showDifferenceTab();
}

void TranslateLenses::unpin() {
    m_pinned.reset();
    refreshDifference();
}

void TranslateLenses::refreshDifference() {
    if (!m_difference) return;
    if (!m_pinned) {
        m_difference->clear(
            tr("Pin a matrix as A, then change what the Matrix tab shows: A, B and A − B appear here."));
        return;
    }
    const AttentionMatrix m = m_doc->currentMatrix();
    if (m.empty()) {
        m_difference->clear(
            tr("A is pinned (%1); B appears when there is a matrix to compare.").arg(m_pinned->description));
        return;
    }
    m_difference->compareMatrices(m_pinned->matrix,
                                  {m.values, toStdStrings(m.rowLabels), toStdStrings(m.columnLabels)},
                                  m_pinned->description, describeMatrix(),
                                  traceAxisTitle(m_doc->kind(), true), traceAxisTitle(m_doc->kind(), false));
}

void TranslateLenses::requestFlow() {
    if (!m_doc->flowPending()) return;
    const TranslationDocument::FlowKey key = m_doc->flowKey();
    if (key == m_flowRequested) return;                                           // on its way
    const Tensor attentions = m_doc->attentionTensor(AttentionKind::EncoderSelf); // [L, H, S, S]
    const int tokens = static_cast<int>(attentions.dim(2));
    const int64_t cost = attentionFlowCost(key.layer + 1, tokens) * tokens;
    if (cost > kFlowBudget) {
        emit notice(
            tr("Attention flow of all %1 source tokens through %2 layers is %3× more work than the budget "
               "(≈ 3 s); showing rollout instead.")
                .arg(tokens)
                .arg(key.layer + 1)
                .arg(static_cast<double>(cost) / static_cast<double>(kFlowBudget), 0, 'f', 1),
            false);
        m_doc->setThrough(TranslationDocument::Through::Rollout);
        return;
    }
    m_flowRequested = key;
    m_worker->run<RowMatrix>(
        tr("Attention flow"),
        [attentions, key, tokens](const Callbacks& cb) {
            FlowOptions options;
            options.fusion = key.fusion;
            options.lastLayer = key.layer;
            RowMatrix flow(tokens, tokens);
            for (int q = 0; q < tokens; ++q) {
                const std::vector<float> row = attentionFlow(attentions, q, options, cb);
                flow.row(q) = Eigen::Map<const Eigen::RowVectorXf>(row.data(), tokens);
                cb.report(double(q + 1) / tokens,
                          "source token " + std::to_string(q + 1) + " of " + std::to_string(tokens));
            }
            return flow;
        },
        [this, key](RowMatrix flow) {
            m_flowRequested = {};
            m_doc->setFlowMatrix(key, std::move(flow));
        });
}

void TranslateLenses::showNeuronView(int row, int col) {
    const auto trace = m_doc->trace();
    const MarianFolder folder = m_doc->model();
    if (!trace || !folder.model || trace->targetIds.empty()) {
        emit notice(
            tr("Translate something first: the neuron view takes one score of the translation apart."), true);
        return;
    }
    const AttentionMatrix matrix = m_doc->currentMatrix();
    // Displayed row / column → the captured matrix's piece indices (word merging and hidden tokens change
    // them).
    int query = -1, key = -1;
    if (row >= 0 && row < static_cast<int>(matrix.rowFirstPiece.size()))
        query = matrix.rowFirstPiece[size_t(row)];
    if (col >= 0 && col < static_cast<int>(matrix.columnFirstPiece.size()))
        key = matrix.columnFirstPiece[size_t(col)];
    if (query < 0) {
        const TokenRef focus = m_doc->focusToken();
        query = focus.isValid() && focus.side == matrix.rowSide ? focus.index : 0;
    }
    openNeuronView(m_doc->layer(), std::max(0, m_doc->head()), query, key);
}

void TranslateLenses::openNeuronView(int layer, int head, int query, int key) {
    const auto trace = m_doc->trace();
    const MarianFolder folder = m_doc->model();
    if (!trace || !folder.model || trace->targetIds.empty()) return;
    const AttentionKind kind = m_doc->kind();
    const TraceAxes axes = traceAxes(*trace, kind, decoderStartPiece(folder));
    NeuronSource source;
    source.title = tr("Translate — %1").arg(kindTitle(kind));
    source.layers = m_doc->layerCount(kind);
    source.heads = [heads = m_doc->headCount(kind)](int) { return heads; };
    source.queryLabels = [rows = toQStringList(axes.rows)](int) { return rows; };
    source.keyLabels = [columns = toQStringList(axes.columns)](int) { return columns; };
    source.captured = [trace, kind](int l, int h, int q, int k) {
        const Tensor& t = traceAttention(*trace, kind); // [L, H, Q, K]
        if (l >= t.dim(0) || h >= t.dim(1) || q >= t.dim(2) || k >= t.dim(3)) return NAN;
        return t.at({l, h, q, k});
    };
    source.inputs = [model = folder.model, trace, kind, ablation = m_ablation](int l, const Callbacks& cb) {
        cb.checkCancel();
        return traceAttentionInputs(*model, *trace, kind, l, ablation.any() ? &ablation : nullptr);
    };
    source.headOff = [off = m_ablation.heads(kind)](int l, int h) {
        return std::find(off.begin(), off.end(), std::pair(l, h)) != off.end();
    };
    if (!m_neuron) {
        m_neuron = new NeuronDialog(m_worker, m_page);
        // A new translation, step or kind: the window follows with the same layer, head and positions.
        const auto follow = [this] {
            if (m_neuron->isVisible() && m_neuron->terms())
                openNeuronView(m_neuron->layer(), m_neuron->head(), m_neuron->query(), m_neuron->key());
        };
        connect(m_page, &WorkspacePage::resultReady, m_neuron, follow);
        connect(m_doc, &TranslationDocument::selectionChanged, m_neuron, [this, follow] {
            if (m_doc->kind() != m_neuronKind) follow();
        });
    }
    m_neuronKind = kind;
    m_neuron->setSource(std::move(source), layer, head, query, key);
    m_neuron->show();
    m_neuron->raise();
}

void TranslateLenses::refreshHeads() {
    if (!m_heads || m_tabs->currentWidget() != m_heads) return;
    const auto trace = m_doc->trace();
    if (!trace) {
        m_heads->clear(tr("Translate a sentence: the statistics of every head appear here."));
        return;
    }
    const AttentionKind kind = m_doc->kind();
    const Tensor& attention = traceAttention(*trace, kind);
    if (attention.rank() != 4 || attention.dim(2) == 0) {
        m_heads->clear(tr("No %1 yet at this step.").arg(attentionKindName(kind).toLower()));
        return;
    }
    const HeadStats stats =
        captureHeadStats(translationCapture(*trace, decoderStartPiece(m_doc->model())), kind);
    if (m_heads->hasImportance() && (m_rankedFor != trace.get() || m_rankedKind != kind))
        m_heads->clearImportance();
    const auto snapshot = m_doc->snapshot();
    m_heads->setStats(stats,
                      tr("%1 at step %2: %3 query pieces × %4 key pieces")
                          .arg(attentionKindName(kind))
                          .arg(snapshot ? snapshot->step : 0)
                          .arg(attention.dim(2))
                          .arg(attention.dim(3)),
                      tr("tokens"));
    m_heads->setCurrentHead(m_doc->layer(), m_doc->head());
    m_heads->setAblated(m_ablation.heads(kind));
}

} // namespace attnlens::ui
