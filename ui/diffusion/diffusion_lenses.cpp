#include "ui/diffusion/diffusion_lenses.h"

#include "core/analysis/attention_captures.h"
#include "core/analysis/head_importance.h"
#include "core/diffusion/unet_maps.h"
#include "ui/diffusion/diffusion_document.h"
#include "ui/shell/inference_worker.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/neuron_dialog.h"
#include "ui/widgets/page_parts.h"

#include <QDialog>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QPointer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

namespace {

// x̂0 / |Δ| tiles side by side, enlarged with crisp pixels, with captions, in the palette's colours (|Δ| from
// the base colour to the error red).
QPixmap ablationPicture(const DiffusionLenses::AblationResult& r, int tile, const QPalette& palette) {
    const QString captions[3] = {QObject::tr("predicted x₀, all heads"),
                                 QObject::tr("predicted x₀, heads off"), QObject::tr("|Δ predicted x₀|")};
    QImage diff(static_cast<int>(r.x0Difference.cols()), static_cast<int>(r.x0Difference.rows()),
                QImage::Format_RGB32);
    const float top = std::max(1e-6f, r.x0Difference.maxCoeff());
    for (int y = 0; y < diff.height(); ++y)
        for (int x = 0; x < diff.width(); ++x) {
            const int v = static_cast<int>(std::lround(255.0f * r.x0Difference(y, x) / top));
            diff.setPixel(x, y,
                          mixColors(palette.color(QPalette::Base), errorColor(palette), v / 255.0).rgb());
        }
    const QImage images[3] = {toQImage(r.plain), toQImage(r.ablated), diff};
    QPixmap out(3 * tile + 2 * 12, tile + 20);
    out.fill(palette.color(QPalette::Base));
    QPainter p(&out);
    for (int i = 0; i < 3; ++i) {
        const QRect box(i * (tile + 12), 0, tile, tile);
        p.drawImage(box, images[i].scaled(tile, tile, Qt::KeepAspectRatio, Qt::FastTransformation));
        p.setPen(frameColor(palette));
        p.drawRect(box.adjusted(0, 0, -1, -1));
        p.setPen(palette.color(QPalette::WindowText));
        p.drawText(QRect(box.left(), tile + 2, tile, 18), Qt::AlignCenter, captions[i]);
    }
    return out;
}

} // namespace

DiffusionLenses::DiffusionLenses(DiffusionDocument* doc, InferenceWorker* worker, QWidget* page)
    : QObject(page), m_doc(doc), m_worker(worker), m_page(page) {}

void DiffusionLenses::showHeadStats() {
    if (!m_headsDialog) {
        m_headsDialog = new QDialog(m_page);
        m_headsDialog->setObjectName(QStringLiteral("headsDialog"));
        m_headsDialog->setWindowTitle(tr("Head statistics — Diffusion"));
        auto* layout = new QVBoxLayout(m_headsDialog);
        layout->setContentsMargins(4, 4, 4, 4);
        m_headsLens = new HeadsLensView(m_headsDialog);
        layout->addWidget(m_headsLens, 1);
        m_ablationText = new QLabel(m_headsDialog);
        m_ablationText->setObjectName(QStringLiteral("ablationText"));
        m_ablationText->setWordWrap(true);
        m_ablationImages = new QLabel(m_headsDialog);
        m_ablationImages->setObjectName(QStringLiteral("ablationImages"));
        layout->addWidget(m_ablationText);
        layout->addWidget(m_ablationImages, 0, Qt::AlignHCenter);
        m_headsDialog->resize(820, 720);
        connect(m_headsLens, &HeadsLensView::headActivated, this, [this](int layer, int head) {
            m_doc->setLayer(layer);
            m_doc->setHead(head);
        });
        connect(m_doc, &DiffusionDocument::stepChanged, this, [this] {
            refreshHeadStats();
            refreshAblation();
        });
        connect(m_doc, &DiffusionDocument::attentionChanged, this, &DiffusionLenses::refreshHeadStats);
        connect(m_doc, &DiffusionDocument::modelChanged, this, [this] {
            m_ablated.clear();
            m_ablation = {};
            refreshHeadStats();
            showAblation();
        });
        connect(m_doc, &DiffusionDocument::selectionChanged, this, [this] {
            if (m_headsLens->hasStats())
                m_headsLens->setCurrentHead(m_doc->layer(), std::max(0, m_doc->head()));
        });
        m_headsLens->setAblationEnabled(true);
        m_headsLens->setAblationScope(
            tr("the step shown is predicted again without them (below); the maps and the "
               "run are unchanged"));
        connect(m_headsLens, &HeadsLensView::ablationRequested, this,
                [this](HeadList heads) { setAblated(std::move(heads)); });
        connect(m_headsLens, &HeadsLensView::importanceRequested, this, &DiffusionLenses::rankHeads);
    }
    m_headsDialog->show();
    m_headsDialog->raise();
    refreshHeadStats();
    showAblation();
}

void DiffusionLenses::refreshHeadStats() {
    if (!m_headsDialog || !m_headsDialog->isVisible()) return;
    const int step = m_doc->currentStep();
    const auto attention = step >= 0 ? m_doc->attention(step) : nullptr;
    if (!m_doc->model() || m_doc->layers().empty()) {
        m_headsLens->clear(tr("This U-Net has no attention layer."));
        return;
    }
    if (!attention) {
        m_headsLens->clear(step < 0 ? tr("Generate an image: the statistics of every head appear here.")
                                    : tr("Computing the attention of this step…"));
        emit attentionWanted();
        return;
    }
    const HeadStats stats =
        captureHeadStats(unetCapture(attention->layers, m_doc->imageHeight(), m_doc->imageWidth()),
                         AttentionKind::EncoderSelf);
    QStringList names;
    for (const auto& l : m_doc->layers())
        names << DiffusionDocument::shortLayerName(l);
    m_headsLens->setStats(
        stats,
        tr("%1: every attention layer (rows, in execution order: %2) and head; distances in pixels "
           "of the %3×%4 image")
            .arg(m_doc->stepDescription(step), names.join(QStringLiteral(", ")))
            .arg(m_doc->imageHeight())
            .arg(m_doc->imageWidth()),
        tr("px"));
    m_headsLens->setCurrentHead(m_doc->layer(), std::max(0, m_doc->head()));
    m_headsLens->setAblated(m_ablated);
    if (m_rankedFor != std::pair(m_doc->runId(), step)) m_headsLens->clearImportance();
}

void DiffusionLenses::setAblated(HeadList heads) {
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    m_ablated = std::move(heads);
    if (m_headsLens) m_headsLens->setAblated(m_ablated);
    refreshAblation();
}

void DiffusionLenses::refreshAblation() {
    const int step = m_doc->currentStep();
    if (m_ablated.empty() || step < 0 || !m_doc->model()) {
        m_ablation = {};
        showAblation();
        return;
    }
    if (m_ablation.runId == m_doc->runId() && m_ablation.step == step && m_ablation.heads == m_ablated)
        return;
    const auto frame = m_doc->frameShared(step);
    const DiffusionSettings settings = m_doc->settings();
    const int runId = m_doc->runId();
    m_worker->run<AblationResult>(
        tr("Predicting the step without the heads"),
        [model = m_doc->model(), frame, settings, heads = m_ablated, runId](const Callbacks& cb) {
            UNetRunOptions run;
            run.captureAttention = false;
            run.offHeads = heads;
            const Tensor& x = frame->step.sample;
            const Tensor eps =
                model->unet->forward(x, float(frame->step.timestep), settings.classLabel, run, &cb).noisePred;
            Scheduler scheduler(settings.scheduler, model->scheduler);
            scheduler.setTimesteps(settings.steps);
            const Tensor x0 = predictOriginal(scheduler, eps, frame->step.timestep, x);
            AblationResult r;
            r.runId = runId;
            r.step = frame->index;
            r.heads = heads;
            const auto base = frame->step.noisePred.matrix();
            const double norm = base.norm();
            r.relativeChange = norm > 0 ? (eps.matrix() - base).norm() / norm : 0.0;
            r.maxAbsChange = (eps.matrix() - base).cwiseAbs().maxCoeff();
            r.plain = frame->clean;
            r.ablated = sampleToImage(x0);
            const int h = static_cast<int>(x0.dim(1)), w = static_cast<int>(x0.dim(2));
            r.x0Difference =
                (ConstMatrixMap(x0.data(), h, w) - ConstMatrixMap(frame->step.predOriginal.data(), h, w))
                    .cwiseAbs();
            return r;
        },
        [this](AblationResult r) {
            if (r.runId != m_doc->runId() || r.step != m_doc->currentStep() || r.heads != m_ablated)
                return; // moved on
            m_ablation = std::move(r);
            showAblation();
        });
}

void DiffusionLenses::showAblation() {
    if (!m_ablationText) return;
    if (m_ablated.empty() || m_ablation.step < 0) {
        m_ablationText->setText(m_ablated.empty()
                                    ? tr("Tick “off” to switch heads off for the step shown: its noise "
                                         "prediction is made again without them.")
                                    : tr("Predicting the step without the heads…"));
        m_ablationImages->clear();
        return;
    }
    const int n = static_cast<int>(m_ablation.heads.size());
    m_ablationText->setText(
        tr("<b>%1 switched off</b> at %2: the predicted noise ε̂ moved by <b>%3 %</b> (relative L2; at most "
           "%4 per "
           "value); the predicted image x₀ changed by at most %5. The run itself is unchanged — this step is "
           "predicted again.")
            .arg(n == 1 ? tr("1 head") : tr("%1 heads").arg(n), m_doc->stepDescription(m_ablation.step))
            .arg(100.0 * m_ablation.relativeChange, 0, 'f', 1)
            .arg(m_ablation.maxAbsChange, 0, 'f', 3)
            .arg(double(m_ablation.x0Difference.maxCoeff()), 0, 'f', 3));
    m_ablationImages->setPixmap(ablationPicture(m_ablation, 160, m_page->palette()));
}

void DiffusionLenses::rankHeads() {
    const int step = m_doc->currentStep();
    if (step < 0 || !m_doc->model()) return;
    const auto frame = m_doc->frameShared(step);
    const auto key = std::pair(m_doc->runId(), step);
    m_worker->run<RowMatrix>(
        tr("Ranking heads"),
        [model = m_doc->model(), frame, label = m_doc->settings().classLabel](const Callbacks& cb) {
            return unetHeadImportance(*model->unet, frame->step.sample, float(frame->step.timestep), label,
                                      cb);
        },
        [this, key](RowMatrix importance) {
            if (!m_headsLens || key != std::pair(m_doc->runId(), m_doc->currentStep())) return;
            m_rankedFor = key;
            m_headsLens->setImportance(
                importance, tr("Importance: how far the predicted noise ε̂ of this step moves when the head "
                               "alone is switched off (‖ε̂_off − ε̂‖ / ‖ε̂‖). Large = the step leans on it."));
        });
}

void DiffusionLenses::showNeuronView() {
    const int step = m_doc->currentStep();
    const auto model = m_doc->model();
    if (step < 0 || !model || m_doc->layers().empty()) {
        emit notice(tr("Generate an image first: the neuron view takes one score of a step apart."), false);
        return;
    }
    const auto frame = m_doc->frameShared(step);
    const std::vector<UNetAttentionInfo> layers = m_doc->layers();
    const auto labels = [layers](int l) {
        QStringList out;
        const auto& info = layers[size_t(l)];
        for (int y = 0; y < info.height; ++y)
            for (int x = 0; x < info.width; ++x)
                out << tr("pixel %1,%2").arg(y).arg(x);
        return out;
    };
    NeuronSource source;
    source.title = tr("Diffusion — %1").arg(m_doc->stepDescription(step));
    source.layers = static_cast<int>(layers.size());
    source.layerName = [this](int l) { return m_doc->layerDescription(l); };
    source.heads = [layers](int l) { return layers[size_t(l)].heads; };
    source.queryLabels = labels;
    source.keyLabels = labels;
    source.captured = [attention = m_doc->attention(step)](int l, int h, int q, int k) {
        if (!attention || l >= static_cast<int>(attention->layers.size())) return NAN;
        return attention->layers[size_t(l)].weights.at({h, q, k});
    };
    source.inputs = [model, frame, label = m_doc->settings().classLabel](int l, const Callbacks& cb) {
        AttentionInputs inputs;
        UNetRunOptions run;
        run.captureAttention = false;
        run.probe = &inputs;
        run.probeLayer = l;
        model->unet->forward(frame->step.sample, float(frame->step.timestep), label, run, &cb);
        return inputs;
    };
    if (!m_neuron) {
        m_neuron = new NeuronDialog(m_worker, m_page);
        connect(m_doc, &DiffusionDocument::stepChanged, m_neuron, [this] {
            if (m_neuron->isVisible()) showNeuronView();
        });
    }
    const bool keep = m_neuron->isVisible() && m_neuron->terms();
    const int layer = keep ? m_neuron->layer() : m_doc->layer();
    const int head = keep ? m_neuron->head() : std::max(0, m_doc->head());
    int query = keep ? m_neuron->query() : 0;
    if (!keep) {
        const std::vector<int> tokens = unetRegionTokens(layers[size_t(layer)], m_doc->query(),
                                                         m_doc->imageHeight(), m_doc->imageWidth());
        if (!tokens.empty()) query = tokens.front();
    }
    m_neuron->setSource(std::move(source), layer, head, query, keep ? m_neuron->key() : -1);
    m_neuron->show();
    m_neuron->raise();
}

QString DiffusionLenses::describeMap() const {
    const DiffusionSettings& st = m_doc->settings();
    return tr("%1 · %2 · %3 · seed %4%5")
        .arg(m_doc->stepDescription(m_doc->currentStep()), m_doc->layerDescription(m_doc->layer()),
             m_doc->queryDescription() + (m_doc->valueWeighted() ? tr(" · value-weighted") : QString()))
        .arg(st.seed)
        .arg(st.classLabel ? tr(" · %1").arg(m_doc->className(*st.classLabel)) : QString());
}

void DiffusionLenses::pin() {
    const RowMatrix map = m_doc->currentMap();
    if (map.size() == 0) {
        emit notice(
            tr("Nothing to pin yet: generate an image (its attention is computed for the step shown)."),
            false);
        return;
    }
    pinAs(map, describeMap());
}

void DiffusionLenses::pinAs(const RowMatrix& map, const QString& description) {
    if (!m_difference) {
        m_difference = new MapDifferenceWindow(tr("Difference — Diffusion"), m_page);
        connect(m_difference, &MapDifferenceWindow::pinRequested, this, &DiffusionLenses::pin);
        for (auto signal : {&DiffusionDocument::stepChanged, &DiffusionDocument::attentionChanged,
                            &DiffusionDocument::selectionChanged, &DiffusionDocument::runChanged,
                            &DiffusionDocument::modelChanged, &DiffusionDocument::lookChanged})
            connect(m_doc, signal, this, &DiffusionLenses::refreshDifference);
    }
    m_difference->pin(map, description);
    refreshDifference();
    m_difference->show();
    m_difference->raise();
}

void DiffusionLenses::refreshDifference() {
    if (!m_difference || !m_difference->hasPin()) return;
    m_difference->setCurrent(m_doc->currentMap(), describeMap(), m_doc->colorMap());
}

} // namespace attnlens::ui
