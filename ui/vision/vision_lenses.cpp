#include "ui/vision/vision_lenses.h"

#include "core/analysis/attention_captures.h"
#include "core/analysis/attention_flow.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/head_importance.h"
#include "core/analysis/head_stats.h"
#include "ui/shell/inference_worker.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/neuron_dialog.h"

#include <QDialog>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

VisionLenses::VisionLenses(VisionDocument* doc, InferenceWorker* worker, QWidget* page)
    : QObject(page), m_doc(doc), m_worker(worker), m_page(page) {}

void VisionLenses::showHeadStats() {
    if (!m_headsDialog) {
        m_headsDialog = new QDialog(m_page);
        m_headsDialog->setObjectName(QStringLiteral("headsDialog"));
        m_headsDialog->setWindowTitle(tr("Head statistics — Vision"));
        auto* layout = new QVBoxLayout(m_headsDialog);
        layout->setContentsMargins(4, 4, 4, 4);
        m_headsLens = new HeadsLensView(m_headsDialog);
        layout->addWidget(m_headsLens);
        m_headsDialog->resize(760, 460);
        connect(m_headsLens, &HeadsLensView::headActivated, this, [this](int layer, int head) {
            m_doc->setRollout(false);
            m_doc->setLayer(layer);
            m_doc->setHead(head);
        });
        connect(m_doc, &VisionDocument::imageChanged, this, &VisionLenses::refreshHeadStats);
        connect(m_doc, &VisionDocument::modelChanged, this, &VisionLenses::refreshHeadStats);
        connect(m_doc, &VisionDocument::viewChanged, this, [this] {
            if (m_headsLens->hasStats()) m_headsLens->setCurrentHead(m_doc->layer(), m_doc->head());
        });
        m_headsLens->setAblationEnabled(true);
        connect(m_headsLens, &HeadsLensView::ablationRequested, this,
                [this](HeadList heads) { setAblated(std::move(heads)); });
        connect(m_headsLens, &HeadsLensView::importanceRequested, this, &VisionLenses::rankHeads);
    }
    m_headsDialog->show();
    m_headsDialog->raise();
    refreshHeadStats();
}

void VisionLenses::refreshHeadStats() {
    if (!m_headsDialog || !m_headsDialog->isVisible()) return;
    const auto& image = m_doc->image();
    if (!image || !m_doc->model()) {
        m_headsLens->clear(tr("Open a picture: the statistics of every head appear here."));
        return;
    }
    const auto& grid = image->result.grid;
    const int patch = m_doc->model()->config().patchSize;
    const HeadStats stats = captureHeadStats(vitCapture(image->result, patch), AttentionKind::EncoderSelf);
    m_headsLens->setStats(stats,
                          tr("%1: %5%2×%3 patches of %4 px; every layer and head")
                              .arg(image->source)
                              .arg(grid.rows())
                              .arg(grid.cols())
                              .arg(patch)
                              .arg(grid.hasCls() ? tr("CLS + ") : QString()),
                          tr("px"));
    m_headsLens->setCurrentHead(m_doc->layer(), m_doc->head());
    m_headsLens->setAblated(image->ablated);
}

void VisionLenses::setAblated(HeadList heads) {
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    m_ablated = std::move(heads);
    if (m_headsLens) m_headsLens->setAblated(m_ablated);
    emit ablationChanged();
}

QString VisionLenses::ablationSummary(const VisionImage& image) {
    const VisionImage* img = &image;
    if (img->ablated.empty()) return {};
    const int n = static_cast<int>(img->ablated.size());
    // Short (it sits above the patch-grid map, which a longer note squeezed): the class the run with all
    // heads chose, then and now; the top class when it changed. The details go to ablationDetails().
    QString text = n == 1 ? tr("<b>1 head off:</b>") : tr("<b>%1 heads off:</b>").arg(n);
    if (!img->baselineTop.empty() && !img->top.empty()) {
        const Prediction& before = img->baselineTop.front();
        const float now = img->result.output.probabilities.at({before.index});
        text += tr(" %1 %2 % → %3 %")
                    .arg(QString::fromStdString(before.label).toHtmlEscaped())
                    .arg(100.0 * before.probability, 0, 'f', 1)
                    .arg(100.0 * now, 0, 'f', 1);
        if (img->top.front().index != before.index)
            text += tr("; now <b>%1</b> %2 %")
                        .arg(QString::fromStdString(img->top.front().label).toHtmlEscaped())
                        .arg(100.0 * img->top.front().probability, 0, 'f', 1);
    }
    return text;
}

QString VisionLenses::ablationDetails(const VisionImage& image) {
    if (image.ablated.empty() || image.baselineTop.empty()) return {};
    // The top 5 with all heads, beside the predictions above (which are of the run without the heads).
    QStringList before5;
    for (const Prediction& p : image.baselineTop)
        before5 << QStringLiteral("%1 %2 %")
                       .arg(QString::fromStdString(p.label))
                       .arg(100.0 * p.probability, 0, 'f', 1);
    return tr("Top 5 with all heads: %1.").arg(before5.join(QStringLiteral(", ")));
}

void VisionLenses::rankHeads() {
    const auto model = m_doc->model();
    const auto& image = m_doc->image();
    if (!model || !image) return;
    // A checkpoint without classifier fails on the worker with core's message (the page's banner).
    m_worker->run<VitHeadImportance>(
        tr("Ranking heads"),
        [model, pixels = image->result.input.pixels](const Callbacks& cb) {
            return vitHeadImportance(*model, pixels, cb);
        },
        [this](VitHeadImportance importance) {
            if (!m_headsLens) return;
            m_headsLens->setImportance(importance.drop,
                                       tr("Importance: how much log p(%1) drops when the head alone is "
                                          "switched off (all heads on: %2 %). "
                                          "Large = the prediction leans on this head; ≤ 0 = it does not.")
                                           .arg(QString::fromStdString(importance.top.label).toHtmlEscaped())
                                           .arg(100.0 * importance.top.probability, 0, 'f', 1));
        });
}

void VisionLenses::requestFlow() {
    const VisionDocument::FlowKey key = m_doc->flowKey();
    if (key == m_flowRequested) return; // already on its way
    const auto image = m_doc->image();
    if (!image) return;
    const int tokens = static_cast<int>(image->result.output.attentions.dim(2));
    const int64_t cost = attentionFlowCost(key.layer + 1, tokens) * static_cast<int64_t>(key.tokens.size());
    if (cost > kFlowBudget) {
        emit notice(
            tr("Attention flow of %1 query token(s) over %2 tokens through %3 layers is %4× more work than "
               "the budget (≈ 3 s); showing rollout instead.")
                .arg(key.tokens.size())
                .arg(tokens)
                .arg(key.layer + 1)
                .arg(static_cast<double>(cost) / static_cast<double>(kFlowBudget), 0, 'f', 1),
            false);
        m_doc->setRollout(true);
        return;
    }
    m_flowRequested = key;
    const int rows = m_doc->gridRows(), cols = m_doc->gridCols(), first = m_doc->prefixTokens();
    m_worker->run<RowMatrix>(
        tr("Attention flow"),
        [image, key, rows, cols, first](const Callbacks& cb) {
            FlowOptions options;
            options.fusion = key.fusion;
            options.lastLayer = key.layer;
            const Tensor& attentions = image->result.output.attentions;
            Eigen::VectorXf total = Eigen::VectorXf::Zero(attentions.dim(2));
            for (int q : key.tokens) {
                const std::vector<float> f = attentionFlow(attentions, q, options, cb);
                total += Eigen::Map<const Eigen::VectorXf>(f.data(), static_cast<Eigen::Index>(f.size()));
            }
            if (key.reduce == TokenReduce::Mean && !key.tokens.empty())
                total /= static_cast<float>(key.tokens.size());
            return tokensToGrid(total, rows, cols, first);
        },
        [this, key](RowMatrix grid) { m_doc->setFlowMap(key, std::move(grid)); });
}

void VisionLenses::showNeuronView() {
    const auto model = m_doc->model();
    const auto image = m_doc->image();
    if (!model || !image) return;
    const VitResult& r = image->result;
    QStringList labels; // CLS, the registers, the patches
    for (int t = 0; t < r.grid.prefixTokens(); ++t)
        labels << QString::fromStdString(r.grid.tokenLabel(t));
    for (int row = 0; row < r.grid.rows(); ++row)
        for (int col = 0; col < r.grid.cols(); ++col)
            labels << tr("patch %1,%2").arg(row).arg(col);
    NeuronSource source;
    source.title = tr("Vision — %1").arg(image->source);
    source.layers = model->config().numLayers;
    source.heads = [heads = model->config().numHeads](int) { return heads; };
    source.queryLabels = [labels](int) { return labels; };
    source.keyLabels = source.queryLabels;
    source.captured = [image](int l, int h, int q, int k) {
        return image->result.output.attentions.at({l, h, q, k});
    };
    source.inputs = [model, image](int l, const Callbacks& cb) {
        AttentionInputs inputs;
        VitRunOptions run;
        run.captureAttention = false;
        run.offHeads = image->ablated; // the inputs of the run on screen
        run.probe = &inputs;
        run.probeLayer = l;
        model->forward(image->result.input.pixels, run, cb);
        return inputs;
    };
    source.headOff = [off = image->ablated](int l, int h) {
        return std::find(off.begin(), off.end(), std::pair(l, h)) != off.end();
    };
    if (!m_neuron) {
        m_neuron = new NeuronDialog(m_worker, m_page);
        connect(m_doc, &VisionDocument::imageChanged, m_neuron, [this] {
            if (m_neuron->isVisible()) showNeuronView();
        });
    }
    const std::vector<int> queries = m_doc->queryTokens();
    const int layer = m_neuron->isVisible() && m_neuron->terms() ? m_neuron->layer() : m_doc->layer();
    const int head =
        m_neuron->isVisible() && m_neuron->terms() ? m_neuron->head() : std::max(0, m_doc->head());
    const int query = m_neuron->isVisible() && m_neuron->terms() ? m_neuron->query()
                      : queries.empty()                          ? 0
                                                                 : queries.front();
    m_neuron->setSource(std::move(source), layer, head, query, -1);
    m_neuron->show();
    m_neuron->raise();
}

QString VisionLenses::describeMap() const {
    const auto& image = m_doc->image();
    const QString model =
        m_doc->model() ? QString::fromStdString(m_doc->model()->dir().filename().string()) : QString();
    return tr("%1 · %2 · %3")
        .arg(image ? image->source : QString(), m_doc->mapDescription(),
             model.isEmpty() ? tr("built-in model") : model);
}

void VisionLenses::pin() {
    const RowMatrix map = m_doc->currentMap();
    if (map.size() == 0 || m_doc->flowPending()) {
        emit notice(tr("Nothing to pin yet: open a picture (and wait for the flow map)."), true);
        return;
    }
    pinAs(map, describeMap());
}

void VisionLenses::pinAs(const RowMatrix& map, const QString& description) {
    if (!m_difference) {
        m_difference = new MapDifferenceWindow(tr("Difference — Vision"), m_page);
        connect(m_difference, &MapDifferenceWindow::pinRequested, this, &VisionLenses::pin);
        for (auto signal :
             {&VisionDocument::imageChanged, &VisionDocument::modelChanged, &VisionDocument::viewChanged,
              &VisionDocument::selectionChanged, &VisionDocument::lookChanged})
            connect(m_doc, signal, this, &VisionLenses::refreshDifference);
    }
    m_difference->pin(map, description);
    refreshDifference();
    m_difference->show();
    m_difference->raise();
}

void VisionLenses::refreshDifference() {
    if (!m_difference || !m_difference->hasPin()) return;
    m_difference->setCurrent(m_doc->flowPending() ? RowMatrix() : m_doc->currentMap(), describeMap(),
                             m_doc->colorMap());
}

} // namespace attnlens::ui
