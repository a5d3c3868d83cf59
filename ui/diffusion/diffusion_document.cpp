#include "ui/diffusion/diffusion_document.h"

#include "core/export/gif_writer.h"
#include "core/export/overlay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace attnlens::ui {

DiffusionDocument::DiffusionDocument(QObject* parent) : QObject(parent) {
    m_view.options.opacity = 0.6f;
    m_view.options.colorMap = ColorMap::Inferno;
}

std::shared_ptr<const DiffusionFrame> DiffusionDocument::makeFrame(int index, DenoiseStep step) {
    auto f = std::make_shared<DiffusionFrame>();
    f->index = index;
    f->noisy = sampleToImage(step.sample);
    // ε̂ ~ N(0, 1): shown over ±3 — ε̂/3 mapped as a sample (x/2 + 0.5).
    Tensor scaled = step.noisePred.clone();
    for (float& v : scaled.values())
        v /= 3.0f;
    f->noise = sampleToImage(scaled);
    f->clean = sampleToImage(step.predOriginal);
    f->step = std::move(step);
    return f;
}

std::shared_ptr<const StepAttention> DiffusionDocument::makeAttention(std::vector<UNetAttentionMap> layers) {
    auto a = std::make_shared<StepAttention>();
    for (const auto& l : layers)
        a->bytes += l.weights.numel() * static_cast<int64_t>(sizeof(float));
    a->layers = std::move(layers);
    return a;
}

std::shared_ptr<const StepAttention> DiffusionDocument::computeAttention(const DiffusionModel& model,
                                                                         std::optional<int> classLabel,
                                                                         const DiffusionFrame& frame,
                                                                         const Callbacks& callbacks) {
    UNetOutput out = model.unet->forward(frame.step.sample, static_cast<float>(frame.step.timestep),
                                         classLabel, {}, &callbacks);
    return makeAttention(std::move(out.attentions));
}

int DiffusionDocument::writeTrajectory(const DiffusionModel& model, std::optional<int> classLabel,
                                       const Trajectory& t, const std::filesystem::path& out, bool gif,
                                       const Callbacks& cb) {
    std::optional<GifWriter> writer;
    if (gif)
        writer.emplace(out, 10);
    else
        std::filesystem::create_directories(out);
    for (size_t i = 0; i < t.frames.size(); ++i) {
        cb.checkCancel();
        auto attention = t.attention[i];
        if (!attention && t.layer >= 0) attention = computeAttention(model, classLabel, *t.frames[i], cb);
        const UNetAttentionMap* map =
            t.layer >= 0 ? &attention->layers[static_cast<size_t>(t.layer)] : nullptr;
        const RgbImage px = renderUNetView(t.frames[i]->step, map, t.view);
        if (writer) {
            writer->addFrame(px);
        } else {
            char name[32];
            std::snprintf(name, sizeof name, "step_%03d.png", static_cast<int>(i));
            writePng(out / name, px);
        }
        cb.report(static_cast<double>(i + 1) / t.frames.size(), "frame " + std::to_string(i + 1));
    }
    if (writer) writer->finish();
    return static_cast<int>(t.frames.size());
}

int64_t DiffusionDocument::attentionBytesPerStep(const DiffusionModel& model) {
    const int size = model.unet->config().sampleSize;
    return size > 0 ? model.unet->captureBytes(size, size) : 0;
}

// --- model ----------------------------------------------------------------------------------

void DiffusionDocument::setModel(std::shared_ptr<const DiffusionModel> model, QString name) {
    m_model = std::move(model);
    m_modelName = std::move(name);
    const int size = m_model ? m_model->unet->config().sampleSize : 0;
    m_height = m_width = std::max(size, 0);
    m_layers =
        m_model && size > 0 ? m_model->unet->attentionLayers(size, size) : std::vector<UNetAttentionInfo>{};
    m_frames.clear();
    m_final = {};
    m_timesteps.clear();
    m_attention.clear();
    m_cachedBytes = 0;
    m_running = false;
    ++m_runId;
    m_step = -1;
    m_follow = true;
    m_layer = 0;
    m_view.heads = {};
    m_view.query = PixelRegion::pixel(m_height / 2, m_width / 2);
    emit modelChanged();
    emit runChanged();
    emit selectionChanged();
}

int DiffusionDocument::classCount() const {
    return m_model ? m_model->unet->config().numClassEmbeds : 0;
}

QString DiffusionDocument::className(int index) const {
    return m_model ? QString::fromStdString(m_model->className(index)) : QString::number(index);
}

// --- run ------------------------------------------------------------------------------------

void DiffusionDocument::beginRun(const DiffusionSettings& settings, std::vector<int> timesteps) {
    m_settings = settings;
    m_timesteps = std::move(timesteps);
    m_frames.clear();
    m_final = {};
    m_attention.clear();
    m_cachedBytes = 0;
    m_running = true;
    ++m_runId;
    m_step = -1;
    m_follow = true;
    emit runChanged();
    emit stepChanged();
}

void DiffusionDocument::addFrame(std::shared_ptr<const DiffusionFrame> frame,
                                 std::shared_ptr<const StepAttention> attention) {
    const int index = completedSteps();
    if (frame->step.sample.rank() == 3) {
        m_height = static_cast<int>(frame->step.sample.dim(1));
        m_width = static_cast<int>(frame->step.sample.dim(2));
    }
    m_frames.push_back(std::move(frame));
    if (attention) {
        m_cachedBytes += attention->bytes;
        m_attention[index] = std::move(attention);
    }
    const bool follow = m_follow || m_step < 0;
    if (follow) m_step = index;
    evict();
    emit runChanged();
    if (follow) emit stepChanged();
}

void DiffusionDocument::finishRun(bool complete, const Tensor& finalSample) {
    m_running = false;
    m_final = complete && !finalSample.empty() ? sampleToImage(finalSample) : ImageU8{};
    if (!complete) m_timesteps.resize(m_frames.size()); // a cancelled run keeps the steps it made
    emit runChanged();
}

// --- attention cache ------------------------------------------------------------------------

std::shared_ptr<const StepAttention> DiffusionDocument::attention(int step) const {
    const auto it = m_attention.find(step);
    return it == m_attention.end() ? nullptr : it->second;
}

void DiffusionDocument::storeAttention(int step, std::shared_ptr<const StepAttention> attention) {
    if (!attention || step < 0 || step >= completedSteps() || m_attention.count(step)) return;
    m_cachedBytes += attention->bytes;
    m_attention[step] = std::move(attention);
    evict();
    emit attentionChanged();
}

std::vector<int> DiffusionDocument::missingAttention(const std::vector<int>& steps) const {
    std::vector<int> missing;
    for (int s : steps)
        if (s >= 0 && s < completedSteps() && !m_attention.count(s) && !m_layers.empty())
            missing.push_back(s);
    return missing;
}

void DiffusionDocument::evict() {
    // Drop the steps farthest from the one shown (never it, nor the strip's) until within budget.
    if (m_cachedBytes <= kAttentionBudget) return;
    const std::vector<int> strip = stripSteps();
    const std::set<int> keep(strip.begin(), strip.end());
    std::vector<int> order;
    for (const auto& [s, a] : m_attention)
        if (s != m_step && !keep.count(s)) order.push_back(s);
    std::sort(order.begin(), order.end(),
              [this](int a, int b) { return std::abs(a - m_step) > std::abs(b - m_step); });
    for (int s : order) {
        if (m_cachedBytes <= kAttentionBudget) break;
        m_cachedBytes -= m_attention[s]->bytes;
        m_attention.erase(s);
    }
}

// --- what is looked at ----------------------------------------------------------------------

void DiffusionDocument::setCurrentStep(int step) {
    if (m_frames.empty()) return;
    step = std::clamp(step, 0, completedSteps() - 1);
    m_follow = step == completedSteps() - 1;
    if (step == m_step) return;
    m_step = step;
    emit stepChanged();
}

void DiffusionDocument::setQuery(PixelRegion r) {
    if (m_height <= 0 || m_width <= 0) return;
    if (r.row1 < r.row0) std::swap(r.row0, r.row1);
    if (r.col1 < r.col0) std::swap(r.col0, r.col1);
    r.row0 = std::clamp(r.row0, 0, m_height - 1);
    r.row1 = std::clamp(r.row1, 0, m_height - 1);
    r.col0 = std::clamp(r.col0, 0, m_width - 1);
    r.col1 = std::clamp(r.col1, 0, m_width - 1);
    if (r == m_view.query) return;
    m_view.query = r;
    emit selectionChanged();
}

void DiffusionDocument::setLayer(int layer) {
    if (m_layers.empty()) return;
    AttentionSelection s = selection();
    if (!s.setLayer(layer, static_cast<int>(m_layers.size()))) return;
    m_layer = s.layer;
    m_view.heads.head = clampHead(m_view.heads.head, headCount()); // the new layer may have fewer heads
    emit selectionChanged();
}

void DiffusionDocument::setHead(int head) {
    AttentionSelection s = selection();
    if (!s.setHead(head, headCount())) return;
    m_view.heads = s.heads;
    emit selectionChanged();
}

void DiffusionDocument::setFusion(HeadFusion fusion) {
    AttentionSelection s = selection();
    if (!s.setFusion(fusion)) return;
    m_view.heads = s.heads;
    emit selectionChanged();
}

void DiffusionDocument::setKeySide(bool keySide) {
    if (keySide == m_view.keySide) return;
    m_view.keySide = keySide;
    emit selectionChanged();
}

void DiffusionDocument::setOnNoisy(bool onNoisy) {
    if (onNoisy == m_view.onNoisy) return;
    m_view.onNoisy = onNoisy;
    emit selectionChanged();
}

void DiffusionDocument::setValueWeighted(bool on) {
    if (on == m_view.valueWeighted) return;
    m_view.valueWeighted = on;
    emit selectionChanged();
}

void DiffusionDocument::setOpacity(float opacity) {
    opacity = std::clamp(opacity, 0.0f, 1.0f);
    if (opacity == m_view.options.opacity) return;
    m_view.options.opacity = opacity;
    emit lookChanged();
}

void DiffusionDocument::setColorMap(ColorMap map) {
    if (map == m_view.options.colorMap) return;
    m_view.options.colorMap = map;
    emit lookChanged();
}

int DiffusionDocument::headCount() const {
    return m_layers.empty() ? 0 : m_layers[static_cast<size_t>(m_layer)].heads;
}

// --- maps -----------------------------------------------------------------------------------

const UNetAttentionMap* DiffusionDocument::layerAt(int step, int layer) const {
    const auto it = m_attention.find(step);
    if (it == m_attention.end() || layer < 0 || layer >= static_cast<int>(it->second->layers.size()))
        return nullptr;
    return &it->second->layers[static_cast<size_t>(layer)];
}

RowMatrix DiffusionDocument::layerMap(int step, int layer) const {
    const UNetAttentionMap* map = layerAt(step, layer);
    if (map == nullptr) return {};
    return unetRegionMap(*map, m_view.query, m_height, m_width, m_view.heads, m_view.keySide,
                         m_view.valueWeighted);
}

RgbImage DiffusionDocument::renderView(int step, int minSide) const {
    if (step < 0 || step >= completedSteps()) return {};
    UNetView view = m_view;
    view.minSide = minSide;
    return renderUNetView(frame(step).step, layerAt(step, m_layer), view);
}

RgbImage DiffusionDocument::renderLayerTile(int layer, int minSide) const {
    if (m_step < 0) return {};
    UNetView view = m_view;
    view.minSide = minSide;
    return renderUNetView(frame(m_step).step, layerAt(m_step, layer), view);
}

std::vector<int> DiffusionDocument::stripSteps() const {
    const int n = stepCount();
    std::vector<int> steps;
    if (n <= 0) return steps;
    const int tiles = std::min(n, kStripTiles);
    for (int i = 0; i < tiles; ++i) {
        const int s = tiles == 1
                          ? n - 1
                          : static_cast<int>(std::lround(static_cast<double>(i) * (n - 1) / (tiles - 1)));
        if (s < completedSteps() && (steps.empty() || steps.back() != s)) steps.push_back(s);
    }
    return steps;
}

QString DiffusionDocument::shortLayerName(const UNetAttentionInfo& layer) {
    // down_blocks.1.attentions.0 → D1.0, up_blocks.0.attentions.2 → U0.2, mid_block.attentions.0 → mid
    const QString name = QString::fromStdString(layer.name);
    const QStringList parts = name.split(QLatin1Char('.'));
    if (name.startsWith(QLatin1String("mid"))) return QStringLiteral("mid");
    if (parts.size() >= 4)
        return (name.startsWith(QLatin1String("down")) ? QStringLiteral("D") : QStringLiteral("U")) +
               parts[1] + QLatin1Char('.') + parts[3];
    return name;
}

QString DiffusionDocument::layerDescription(int layer) const {
    if (layer < 0 || layer >= static_cast<int>(m_layers.size())) return {};
    const auto& l = m_layers[static_cast<size_t>(layer)];
    return tr("%1 · %2 · %3×%4 · %n head(s)", nullptr, l.heads)
        .arg(QString::fromStdString(l.name), QString::fromLatin1(unetPathName(l.path)))
        .arg(l.height)
        .arg(l.width);
}

QString DiffusionDocument::stepDescription(int step) const {
    if (step < 0 || step >= completedSteps()) return tr("no step");
    return tr("step %1 / %2 · t = %3").arg(step).arg(stepCount() - 1).arg(frame(step).step.timestep);
}

QString DiffusionDocument::queryDescription() const {
    const PixelRegion& q = m_view.query;
    const QString where =
        q.isPixel() ? tr("pixel (%1, %2)").arg(q.row0).arg(q.col0)
                    : tr("region (%1, %2)–(%3, %4)").arg(q.row0).arg(q.col0).arg(q.row1).arg(q.col1);
    return m_view.keySide ? tr("who attends to %1").arg(where) : tr("where %1 looks").arg(where);
}

} // namespace attnlens::ui
