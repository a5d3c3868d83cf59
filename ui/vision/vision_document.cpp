#include "ui/vision/vision_document.h"

#include "core/analysis/value_weighting.h"
#include "core/util/error.h"

#include <algorithm>
#include <chrono>

namespace attnlens::ui {

VisionDocument::VisionDocument(QObject* parent) : QObject(parent) {}

ImageU8 VisionDocument::displayCopy(const ImageU8& image, int minSide, int maxSide) {
    if (image.empty()) throw Error("displayCopy: empty image");
    const int longer = std::max(image.width, image.height);
    if (longer < minSide) {
        // Nearest, integer factor: every source pixel becomes a k×k square (a 28×28 image stays crisp).
        const int k = std::max(1, std::min(minSide / longer + (minSide % longer ? 1 : 0), maxSide / longer));
        if (k == 1) return image;
        ImageU8 out(image.width * k, image.height * k, image.channels);
        for (int y = 0; y < out.height; ++y)
            for (int x = 0; x < out.width; ++x)
                for (int c = 0; c < image.channels; ++c)
                    out.at(x, y, c) = image.at(x / k, y / k, c);
        return out;
    }
    if (longer > maxSide) {
        const double s = static_cast<double>(maxSide) / longer;
        const int w = std::max(1, static_cast<int>(std::lround(image.width * s)));
        const int h = std::max(1, static_cast<int>(std::lround(image.height * s)));
        return resizePil(image, w, h, ResampleFilter::Bilinear);
    }
    return image;
}

std::shared_ptr<const VisionImage> VisionDocument::analyse(const VitModel& model, ImageU8 image,
                                                           const QString& source, const Callbacks& callbacks,
                                                           const std::vector<std::pair<int, int>>& ablated) {
    auto out = std::make_shared<VisionImage>();
    out->source = source;
    const auto start = std::chrono::steady_clock::now();
    VitRunOptions options;
    options.captureAttention = true;
    // Any picture size is accepted: the processor resizes to the model's input size unless its config
    // keeps the aspect (no centre crop): then the positions are interpolated (DINOv2 always is; CLIP as with
    // interpolate_pos_encoding=True).
    options.interpolatePositions = true;
    options.offHeads = ablated;
    ResidualTrace trace; // the CLS token's stream (the class-by-layer lens) and the value norms
    trace.rows = {0};
    trace.values = true;
    options.trace = &trace;
    out->result = model.run(image, options, callbacks);
    if (model.hasClassifier())
        out->classLens =
            lensOfTrace(trace, {}, std::min(model.numLabels(), 1000), [&](const RowMatrix& stream) {
                return model.classify(stream);
            }).front();
    for (LayerTrace& layer : trace.layers)
        out->valueNorms.push_back(std::move(layer.valueNorms));
    out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out->top = model.topK(out->result.output, 5);
    out->ablated = ablated;
    if (!ablated.empty() && model.hasClassifier()) {
        VitRunOptions plain;
        plain.captureAttention = false;
        out->baselineTop = model.topK(model.forward(out->result.input.pixels, plain, callbacks), 5);
    }
    callbacks.checkCancel();
    out->display = displayCopy(image, kDisplayMin, kDisplayMax);
    out->thumbnail = displayCopy(image, kThumbnailSize, kThumbnailSize);
    out->image = std::move(image);
    return out;
}

std::shared_ptr<const VisionImage> VisionDocument::withTexts(const VisionImage& image,
                                                             const ClipTextSide* side,
                                                             const std::vector<std::string>& texts) {
    auto out = std::make_shared<VisionImage>(image);
    out->texts.clear();
    if (side && !texts.empty())
        out->texts = runClipTexts(*side, image.result.output, image.result.grid, texts);
    if (out->texts.empty()) return out; // a CLIP without texts has no classifier: top stays empty
    std::vector<Prediction> top;
    for (size_t i = 0; i < out->texts.size(); ++i) {
        const ClipTextRun& r = out->texts[i];
        top.push_back({int(i), r.embedding.text, r.probability, r.logit});
    }
    std::stable_sort(top.begin(), top.end(),
                     [](const Prediction& a, const Prediction& b) { return a.probability > b.probability; });
    top.resize(std::min<size_t>(top.size(), 5));
    out->top = std::move(top);
    return out;
}

void VisionDocument::setTexts(std::vector<std::string> texts) {
    m_texts = std::move(texts);
}

bool VisionDocument::textMapShown() const {
    return m_textMap >= 0 && m_image && m_textMap < static_cast<int>(m_image->texts.size());
}

void VisionDocument::setTextMap(int index) {
    index = std::max(-1, index);
    if (index == m_textMap) return;
    m_textMap = index;
    if (index >= 0) m_rollout = m_flow = m_tokenNorms = false;
    emit viewChanged();
}

void VisionDocument::setTextRelevance(bool relevance) {
    if (relevance == m_textRelevance) return;
    m_textRelevance = relevance;
    emit viewChanged();
}

QString VisionDocument::textMapDescription() const {
    if (!textMapShown()) return {};
    const ClipTextRun& r = m_image->texts[size_t(m_textMap)];
    const QString text = QString::fromStdString(r.embedding.text);
    const QString score = tr("zero-shot %1 %").arg(100.0 * r.probability, 0, 'f', 1);
    if (m_textRelevance)
        return tr("“%1” → patches · relevance: rollout × similarity above the mean · %2").arg(text, score);
    return tr("cosine similarity of each patch with “%1” · %2 … %3 · %4")
        .arg(text)
        .arg(double(r.similarity.minCoeff()), 0, 'f', 3)
        .arg(double(r.similarity.maxCoeff()), 0, 'f', 3)
        .arg(score);
}

void VisionDocument::setModel(std::shared_ptr<const VitModel> model,
                              std::shared_ptr<const ClipTextSide> textSide) {
    m_model = std::move(model);
    m_textSide = std::move(textSide);
    m_image.reset();
    m_rolloutCache.clear();
    m_flowKey = {};
    m_query = Query::Cls;
    m_patches.clear();
    if (!hasCls()) m_flow = false; // flow starts from tokens; the probe is none
    m_selection.layer = m_model ? m_model->config().numLayers - 1 : 0;
    m_selection.heads.head = -1;
    emit modelChanged();
    emit imageChanged();
    emit selectionChanged();
    emit viewChanged();
}

void VisionDocument::setImage(std::shared_ptr<const VisionImage> image) {
    const int oldRows = gridRows(), oldCols = gridCols();
    m_image = std::move(image);
    m_rolloutCache.clear();
    m_flowKey = {}; // the flow belongs to the previous picture
    bool selection = false;
    if (gridRows() != oldRows || gridCols() != oldCols ||
        (m_query == Query::Register && m_register >= registers())) {
        selection = m_query != Query::Cls;
        m_query = Query::Cls;
        m_patches.clear();
    }
    emit imageChanged();
    if (selection) emit selectionChanged();
}

int VisionDocument::numLayers() const {
    return m_model ? m_model->config().numLayers : 0;
}
int VisionDocument::numHeads() const {
    return m_model ? m_model->config().numHeads : 0;
}
int VisionDocument::gridRows() const {
    return m_image ? m_image->result.grid.rows() : 0;
}
int VisionDocument::gridCols() const {
    return m_image ? m_image->result.grid.cols() : 0;
}
int VisionDocument::prefixTokens() const {
    return m_image ? m_image->result.grid.prefixTokens() : hasCls() ? 1 : 0;
}

bool VisionDocument::hasCls() const {
    return !m_model || m_model->config().hasCls();
}

void VisionDocument::selectCls() {
    if (m_query == Query::Cls) return;
    m_query = Query::Cls;
    m_patches.clear();
    const bool flowOff = m_flow && probeQuery();
    if (flowOff) m_flow = false;
    emit selectionChanged();
    if (flowOff) emit viewChanged();
}

void VisionDocument::selectRegister(int index) {
    if (index < 0 || index >= registers() || (m_query == Query::Register && index == m_register)) return;
    m_query = Query::Register;
    m_register = index;
    m_patches.clear();
    emit selectionChanged();
}

void VisionDocument::selectPatches(std::vector<int> patches) {
    const int count = gridRows() * gridCols();
    std::erase_if(patches, [count](int p) { return p < 0 || p >= count; });
    std::sort(patches.begin(), patches.end());
    patches.erase(std::unique(patches.begin(), patches.end()), patches.end());
    if (patches.empty()) {
        selectCls();
        return;
    }
    if (m_query == Query::Patches && patches == m_patches) return;
    m_query = Query::Patches;
    m_patches = std::move(patches);
    emit selectionChanged();
}

void VisionDocument::togglePatch(int patch) {
    std::vector<int> next = m_query == Query::Patches ? m_patches : std::vector<int>{};
    const auto it = std::find(next.begin(), next.end(), patch);
    if (it != next.end())
        next.erase(it);
    else
        next.push_back(patch);
    selectPatches(std::move(next));
}

std::vector<int> VisionDocument::queryTokens() const {
    if (probeQuery()) return {};
    if (m_query == Query::Cls) return {0};
    if (m_query == Query::Register) return {1 + m_register};
    std::vector<int> tokens;
    tokens.reserve(m_patches.size());
    for (int p : m_patches)
        tokens.push_back(m_image ? m_image->result.grid.tokenOfPatch(p) : p + 1);
    return tokens;
}

void VisionDocument::setReduce(TokenReduce reduce) {
    if (reduce == m_reduce) return;
    m_reduce = reduce;
    emit selectionChanged();
}

void VisionDocument::setKeySide(bool keySide) {
    if (keySide == m_keySide) return;
    m_keySide = keySide;
    emit selectionChanged();
}

void VisionDocument::setLayer(int layer) {
    if (m_selection.setLayer(layer, numLayers())) emit viewChanged();
}

void VisionDocument::setHead(int head) {
    if (m_selection.setHead(head, numHeads())) emit viewChanged();
}

void VisionDocument::setFusion(HeadFusion fusion) {
    if (m_selection.setFusion(fusion)) emit viewChanged();
}

void VisionDocument::setValueWeighted(bool on) {
    if (on == m_valueWeighted) return;
    m_valueWeighted = on;
    emit viewChanged();
}

void VisionDocument::setRollout(bool rollout) {
    if (rollout == m_rollout) return;
    m_rollout = rollout;
    if (rollout) {
        m_flow = m_tokenNorms = false;
        m_textMap = -1;
    }
    emit viewChanged();
}

void VisionDocument::setFlow(bool flow) {
    if (flow == m_flow || (flow && probeQuery())) return;
    m_flow = flow;
    if (flow) {
        m_rollout = m_tokenNorms = false;
        m_textMap = -1;
    }
    emit viewChanged();
}

void VisionDocument::setTokenNorms(bool on) {
    if (on == m_tokenNorms) return;
    m_tokenNorms = on;
    if (on) {
        m_rollout = m_flow = false;
        m_textMap = -1;
    }
    emit viewChanged();
}

Eigen::VectorXf VisionDocument::tokenNormsAt(int layer) const {
    if (!m_image) return {};
    const Tensor& norms = m_image->result.output.tokenNorms; // [L, T]
    if (norms.empty() || layer < 0 || layer >= norms.dim(0)) return {};
    return ConstVectorMap(norms.data() + int64_t(layer) * norms.dim(1), norms.dim(1));
}

VisionDocument::FlowKey VisionDocument::flowKey() const {
    return {m_selection.layer, m_selection.heads.fusion, queryTokens(), m_reduce};
}

void VisionDocument::setFlowMap(const FlowKey& key, RowMatrix map) {
    if (!(key == flowKey()) || !m_image) return;
    m_flowKey = key;
    m_flowMap = std::move(map);
    emit viewChanged();
}

void VisionDocument::setOpacity(float opacity) {
    opacity = std::clamp(opacity, 0.0f, 1.0f);
    if (opacity == m_opacity) return;
    m_opacity = opacity;
    emit lookChanged();
}

void VisionDocument::setColorMap(ColorMap map) {
    if (map == m_colorMap) return;
    m_colorMap = map;
    emit lookChanged();
}

void VisionDocument::setSmooth(bool smooth) {
    if (smooth == m_smooth) return;
    m_smooth = smooth;
    emit lookChanged();
}

OverlayOptions VisionDocument::overlayOptions() const {
    OverlayOptions o;
    o.colorMap = m_colorMap;
    o.opacity = m_opacity;
    o.smooth = m_smooth;
    if (m_image) o.region = m_image->result.grid.regionFraction(); // centre-cropped input (DeiT)
    return o; // lo/hi: each map's own range, as the CLI does
}

const RowMatrix& VisionDocument::rolloutMatrix(int layer, HeadFusion fusion) const {
    const auto key = std::make_pair(layer, static_cast<int>(fusion));
    auto it = m_rolloutCache.find(key);
    if (it == m_rolloutCache.end()) {
        RolloutOptions options;
        options.fusion = fusion;
        options.lastLayer = layer;
        it = m_rolloutCache.emplace(key, attentionRollout(m_image->result.output.attentions, options)).first;
    }
    return it->second;
}

RowMatrix VisionDocument::attentionMatrix(int layer, const HeadSelection& heads, bool rollout) const {
    if (!m_image) return {};
    if (rollout) return rolloutMatrix(layer, heads.fusion); // [T, T]
    const Tensor& all = m_image->result.output.attentions;
    if (!m_valueWeighted || size_t(layer) >= m_image->valueNorms.size())
        return layerAttention(all, layer, heads); // [T, T]
    const auto weighted = [&](int h) {            // each head weighted before the fusion
        RowMatrix map = all.slice2d({layer, h});
        valueWeightRows(map, m_image->valueNorms[size_t(layer)].row(h));
        return map;
    };
    return heads.head >= 0 ? weighted(heads.head) : fuseHeads(numHeads(), heads.fusion, weighted);
}

RowMatrix VisionDocument::probeMap(int layer, const HeadSelection& heads, bool rollout) const {
    const Tensor& probe = m_image->result.output.probeAttention; // [H, N]
    if (probe.empty()) return {};
    const ConstMatrixMap p = probe.matrix();
    if (rollout) // its heads' mean through the rollout to `layer`
        return tokensToGrid((p.colwise().mean() * rolloutMatrix(layer, heads.fusion)).transpose(), gridRows(),
                            gridCols(), 0);
    if (heads.head >= 0) return tokensToGrid(p.row(heads.head).transpose(), gridRows(), gridCols(), 0);
    const RowMatrix fused =
        fuseHeads(static_cast<int>(probe.dim(0)), heads.fusion, [&](int h) { return RowMatrix(p.row(h)); });
    return tokensToGrid(fused.row(0).transpose(), gridRows(), gridCols(), 0);
}

RowMatrix VisionDocument::mapFor(int layer, const HeadSelection& heads, bool rollout) const {
    if (m_tokenNorms) {
        const Eigen::VectorXf norms = tokenNormsAt(layer);
        return norms.size() ? tokensToGrid(norms, gridRows(), gridCols(), prefixTokens()) : RowMatrix();
    }
    if (!m_image || m_image->result.output.attentions.empty()) return {};
    if (probeQuery()) return probeMap(layer, heads, rollout);
    const RowMatrix a = attentionMatrix(layer, heads, rollout); // [T, T]
    const std::vector<int> tokens = queryTokens();
    const Eigen::VectorXf perToken = m_keySide ? keyMap(a, tokens, m_reduce)    // [T] over queries
                                               : queryMap(a, tokens, m_reduce); // [T] over keys
    return tokensToGrid(perToken, gridRows(), gridCols(), prefixTokens());      // [rows, cols]
}

RowMatrix VisionDocument::currentMap() const {
    if (textMapShown()) {
        const ClipTextRun& r = m_image->texts[size_t(m_textMap)];
        return m_textRelevance ? r.relevance : r.similarity;
    }
    if (m_flow && m_image) {
        if (m_flowKey == flowKey()) return m_flowMap;
        return RowMatrix::Zero(gridRows(), gridCols()); // being computed
    }
    return mapFor(m_selection.layer, {m_rollout ? -1 : m_selection.heads.head, m_selection.heads.fusion},
                  m_rollout);
}

std::vector<RowMatrix> VisionDocument::headMaps() const {
    std::vector<RowMatrix> maps;
    if (!m_image || m_rollout || m_flow || m_tokenNorms || textMapShown()) return maps;
    for (int h = 0; h < numHeads(); ++h)
        maps.push_back(mapFor(m_selection.layer, {h, m_selection.heads.fusion}, false));
    return maps;
}

std::vector<RowMatrix> VisionDocument::layerMaps() const {
    std::vector<RowMatrix> maps;
    if (!m_image || textMapShown() || (probeQuery() && !m_rollout && !m_tokenNorms)) return maps;
    for (int l = 0; l < numLayers(); ++l)
        maps.push_back(
            mapFor(l, {m_rollout ? -1 : m_selection.heads.head, m_selection.heads.fusion}, m_rollout));
    return maps;
}

QString VisionDocument::queryDescription() const {
    if (probeQuery()) return tr("pooling probe");
    if (m_query == Query::Cls) return tr("CLS token");
    if (m_query == Query::Register) return tr("register %1").arg(m_register);
    if (m_patches.size() == 1) {
        const int p = m_patches.front();
        return tr("patch (%1, %2)").arg(p / gridCols()).arg(p % gridCols());
    }
    return tr("%1 patches (%2)")
        .arg(m_patches.size())
        .arg(m_reduce == TokenReduce::Sum ? tr("sum") : tr("mean"));
}

QString VisionDocument::mapDescription() const {
    if (textMapShown()) return textMapDescription();
    if (m_tokenNorms) return tokenNormsDescription();
    if (m_flow)
        return tr("attention flow 0–%1 (%2 of heads) · %3 → patches%4")
            .arg(m_selection.layer)
            .arg(QString::fromStdString(std::string(headFusionName(m_selection.heads.fusion))),
                 queryDescription(), flowPending() ? tr(" · computing…") : QString());
    const QString heads =
        m_rollout ? tr("rollout 0–%1 (%2 of heads)")
                        .arg(m_selection.layer)
                        .arg(QString::fromStdString(std::string(headFusionName(m_selection.heads.fusion))))
        : m_selection.heads.head >= 0
            ? tr("layer %1 · head %2").arg(m_selection.layer).arg(m_selection.heads.head)
            : tr("layer %1 · %2 of heads")
                  .arg(m_selection.layer)
                  .arg(QString::fromStdString(std::string(headFusionName(m_selection.heads.fusion))));
    const QString direction = m_keySide && !probeQuery() ? tr("patches → %1").arg(queryDescription())
                                                         : tr("%1 → patches").arg(queryDescription());
    if (probeQuery() && !m_rollout) // the probe reads the last layer, whichever is selected
        return (m_selection.heads.head >= 0 ? tr("pooling head · head %1").arg(m_selection.heads.head)
                                            : tr("pooling head · %1 of heads")
                                                  .arg(QString::fromStdString(std::string(
                                                      headFusionName(m_selection.heads.fusion))))) +
               QStringLiteral(" · ") + direction;
    return heads + QStringLiteral(" · ") + direction;
}

QString VisionDocument::tokenNormsDescription() const {
    const Eigen::VectorXf norms = tokenNormsAt(m_selection.layer);
    QString text = tr("token norms after layer %1").arg(m_selection.layer);
    const int prefix = prefixTokens(), patches = gridRows() * gridCols();
    if (norms.size() != prefix + patches || patches == 0) return text;
    if (hasCls()) text += tr(" · CLS %1").arg(double(norms[0]), 0, 'f', 1);
    if (registers() > 0) {
        QStringList regs;
        for (int r = prefix - registers(); r < prefix; ++r)
            regs << QString::number(double(norms[r]), 'f', 1);
        text += tr(" · registers %1").arg(regs.join(QLatin1Char(' ')));
    }
    std::vector<float> sorted(norms.data() + prefix, norms.data() + norms.size());
    const auto top = std::max_element(sorted.begin(), sorted.end()) - sorted.begin();
    const float max = sorted[size_t(top)];
    std::nth_element(sorted.begin(), sorted.begin() + patches / 2, sorted.end());
    return text + tr(" · patches median %1, max %2 at (%3, %4)")
                      .arg(double(sorted[size_t(patches / 2)]), 0, 'f', 1)
                      .arg(double(max), 0, 'f', 1)
                      .arg(int(top) / gridCols())
                      .arg(int(top) % gridCols());
}

RgbImage VisionDocument::renderDisplayOverlay() const {
    if (!m_image) return {};
    return renderOverlay(m_image->display, currentMap(), overlayOptions());
}

RgbImage VisionDocument::renderOriginalOverlay() const {
    if (!m_image) return {};
    return renderOverlay(m_image->image, currentMap(), overlayOptions());
}

RgbImage VisionDocument::renderThumbnail(const RowMatrix& map) const {
    if (!m_image || map.size() == 0) return {};
    return renderOverlay(m_image->thumbnail, map, overlayOptions());
}

} // namespace attnlens::ui
