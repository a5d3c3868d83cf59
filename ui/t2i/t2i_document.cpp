#include "ui/t2i/t2i_document.h"

#include "core/diffusion/unet_maps.h"
#include "core/util/error.h"

#include <algorithm>

namespace attnlens::ui {

T2iDocument::T2iDocument(QObject* parent) : QObject(parent) {}

void T2iDocument::setPipeline(std::shared_ptr<const TextToImagePipeline> pipe, const QString& name) {
    m_pipe = std::move(pipe);
    m_name = name;
    ++m_runId;
    m_run = {};
    m_pictures.clear();
    m_decoded.clear();
    m_words.clear();
    m_self.clear();
    m_condStates = {};
    m_mapCache.clear();
    m_running = false;
    m_word = -1;
    m_compared.clear();
    m_pixel.reset();
    m_selfLayer = -1;
    m_layer = -1;
    emit pipelineChanged();
    emit runChanged();
}

std::vector<UNetAttentionInfo> T2iDocument::unetLayers() const {
    if (!m_pipe || m_height == 0) return {};
    const int f = m_pipe->vae().config().scaleFactor();
    return m_pipe->unet().attentionLayers(m_height / f, m_width / f);
}

void T2iDocument::beginRun(const T2iSettings& settings, const T2iPrompt& prompt, int height, int width,
                           int calls) {
    ++m_runId;
    const bool samePrompt = m_run.ids == prompt.ids && m_height == height && m_width == width;
    if (height != m_height || width != m_width) m_pixel.reset();    // a pixel of another picture
    if (settings.prompt != m_runSettings.prompt) m_condStates = {}; // the encoder states of the prompt
    m_run = {};
    static_cast<T2iPrompt&>(m_run) = prompt;
    m_runSettings = settings;
    m_pictures.clear();
    m_decoded.clear();
    m_self.clear();
    m_mapCache.clear();
    m_words = t2iWords(m_run);
    m_height = height;
    m_width = width;
    m_planned = calls;
    m_running = true;
    m_step = 0;
    if (!samePrompt) {
        m_compared.clear();
        m_word = -1;
        for (size_t w = 0; w < m_words.size(); ++w) // the first word that is not an article
            if (!m_words[w].special() && m_words[w].text.size() > 2) {
                m_word = static_cast<int>(w);
                break;
            }
    }
    if (m_word >= static_cast<int>(m_words.size())) m_word = -1;
    std::erase_if(m_compared, [this](int w) { return w >= static_cast<int>(m_words.size()); });
    // Choices the new run cannot show go back to what it can: the unconditional half needs guidance, one
    // head (or their max / min) every head kept and a head the model has.
    if (settings.guidance <= 1.0) m_half = T2iHalf::Cond;
    const auto layers = unetLayers();
    int maxHeads = 0;
    for (const auto& l : layers)
        if (l.cross) maxHeads = std::max(maxHeads, l.heads);
    if (!settings.allHeads || m_heads.head >= maxHeads) m_heads = {};
    if (m_selfLayer >= static_cast<int>(layers.size()) ||
        (m_selfLayer >= 0 && layers[size_t(m_selfLayer)].cross))
        m_selfLayer = -1;
    if (m_selfLayer < 0)
        for (size_t l = 0; l < layers.size(); ++l)
            if (!layers[l].cross) {
                m_selfLayer = static_cast<int>(l);
                break;
            }
    emit runChanged();
    emit selectionChanged();
}

void T2iDocument::addFrame(T2iFrame frame) {
    const bool followLast = m_step >= completedSteps() - 1;
    m_pictures.push_back(std::move(frame.picture));
    m_decoded.push_back(frame.decoded);
    m_run.timesteps.push_back(frame.step.timestep);
    m_run.steps.push_back(std::move(frame.step));
    m_mapCache.clear();
    if (followLast) m_step = completedSteps() - 1;
    emit runChanged();
    if (m_layer >= static_cast<int>(crossLayers().size())) {
        m_layer = -1;
        emit selectionChanged();
    }
}

void T2iDocument::finishRun(T2iResult* final) {
    m_running = false;
    if (final) {
        m_run.sampler = final->sampler;
        m_run.timesteps = final->timesteps;
        m_run.finalLatents = std::move(final->finalLatents);
        m_run.image = std::move(final->image);
        if (!m_run.image.empty() && !m_pictures.empty()) {
            m_pictures.back() = t2iImageU8(m_run.image);
            m_decoded.back() = true;
        }
        m_step = std::max(0, completedSteps() - 1);
    }
    m_mapCache.clear();
    emit runChanged();
    emit selectionChanged();
}

void T2iDocument::setStepPicture(int step, ImageU8 picture) {
    if (step < 0 || step >= completedSteps()) return;
    m_pictures[size_t(step)] = std::move(picture);
    m_decoded[size_t(step)] = true;
    emit runChanged();
}

bool T2iDocument::stepDecoded(int step) const {
    return step >= 0 && step < completedSteps() && m_decoded[size_t(step)];
}

ImageU8 T2iDocument::pictureAt(int step) const {
    if (m_pictures.empty()) return {};
    const ImageU8& p = m_pictures[size_t(std::clamp(step < 0 ? m_step : step, 0, completedSteps() - 1))];
    if (p.width == m_width || p.width == 0) return p;
    return enlargeNearest(p, std::max(1, m_width / p.width)); // a latent preview
}

bool T2iDocument::guided() const {
    return hasRun() && !m_run.steps.front().maps.empty() && !m_run.steps.front().maps.front().uncond.empty();
}

// --- selection ------------------------------------------------------------------------------------------

void T2iDocument::selectionEdited() {
    emit selectionChanged();
}

void T2iDocument::setWord(int word) {
    if (word >= static_cast<int>(m_words.size())) word = -1;
    if (word == m_word && m_compared.empty()) return;
    m_word = word;
    m_compared.clear();
    selectionEdited();
}

void T2iDocument::toggleCompared(int word) {
    if (word < 0 || word >= static_cast<int>(m_words.size())) return;
    if (m_word < 0) {
        m_word = word;
    } else if (word != m_word && !m_compared.erase(word)) {
        m_compared.insert(word);
    }
    selectionEdited();
}

void T2iDocument::setShownStep(int step) {
    step = std::clamp(step, 0, std::max(0, completedSteps() - 1));
    if (step == m_step) return;
    m_step = step;
    selectionEdited();
}

void T2iDocument::setAllSteps(bool all) {
    if (all == m_allSteps) return;
    m_allSteps = all;
    selectionEdited();
}

void T2iDocument::setLayer(int layer) {
    if (layer < -1 || layer >= static_cast<int>(crossLayers().size())) layer = -1;
    if (layer == m_layer) return;
    m_layer = layer;
    selectionEdited();
}

void T2iDocument::setHeads(HeadSelection heads) {
    if (heads == m_heads) return;
    m_heads = heads;
    selectionEdited();
}

void T2iDocument::setHalf(T2iHalf half) {
    if (half == m_half) return;
    m_half = half;
    selectionEdited();
}

void T2iDocument::setValueWeighted(bool on) {
    if (on == m_valueWeighted) return;
    m_valueWeighted = on;
    selectionEdited();
}

void T2iDocument::setShowSpecial(bool show) {
    if (show == m_showSpecial) return;
    m_showSpecial = show;
    if (!show && m_word >= 0 && m_words[size_t(m_word)].special()) m_word = -1;
    std::erase_if(m_compared, [this](int w) { return m_words[size_t(w)].special(); });
    selectionEdited();
}

void T2iDocument::setOpacity(float opacity) {
    if (opacity == m_opacity) return;
    m_opacity = opacity;
    emit lookChanged();
}

void T2iDocument::setColorMap(ColorMap map) {
    if (map == m_colorMap) return;
    m_colorMap = map;
    emit lookChanged();
}

OverlayOptions T2iDocument::overlayOptions() const {
    OverlayOptions o;
    o.colorMap = m_colorMap;
    o.opacity = m_opacity;
    return o;
}

T2iMapQuery T2iDocument::query(int word) const {
    T2iMapQuery q;
    if (word >= 0 && word < static_cast<int>(m_words.size())) q.tokens = m_words[size_t(word)].tokens;
    q.step = m_allSteps ? -1 : std::clamp(m_step, 0, std::max(0, completedSteps() - 1));
    q.layer = m_layer;
    q.heads = m_heads;
    q.half = m_half;
    q.valueWeighted = valueWeighted();
    return q;
}

RowMatrix T2iDocument::wordMap(const T2iMapQuery& q) const {
    std::string key = std::to_string(q.step) + "/" + std::to_string(q.layer) + "/" +
                      std::to_string(q.heads.head) + "/" + std::to_string(static_cast<int>(q.heads.fusion)) +
                      "/" + std::to_string(static_cast<int>(q.half)) + (q.valueWeighted ? "/v/" : "/");
    for (int t : q.tokens)
        key += std::to_string(t) + ",";
    if (const auto it = m_mapCache.find(key); it != m_mapCache.end()) return it->second;
    RowMatrix map = t2iWordMap(m_run, q, m_height, m_width);
    m_mapCache.emplace(key, map);
    return map;
}

RgbImage T2iDocument::overlay(const T2iMapQuery& q, int pictureStep) const {
    const ImageU8 image = pictureAt(pictureStep);
    if (image.pixels.empty()) return {};
    if (q.tokens.empty()) return renderOverlay(image, RowMatrix::Zero(1, 1), {.opacity = 0.0f});
    return renderT2iOverlay(image, wordMap(q), overlayOptions(), q.half);
}

std::vector<int> T2iDocument::visibleWords() const {
    std::vector<int> out;
    for (size_t w = 0; w < m_words.size(); ++w)
        if (m_showSpecial || !m_words[w].special()) out.push_back(static_cast<int>(w));
    return out;
}

// --- the query pixel ---------------------------------------------------------------------------------

void T2iDocument::setPixel(std::optional<std::pair<int, int>> pixel) {
    if (pixel && !insideImage(pixel->first, pixel->second)) pixel.reset();
    if (pixel == m_pixel) return;
    m_pixel = pixel;
    selectionEdited();
}

std::vector<float> T2iDocument::pixelWords() const {
    if (!m_pixel || !hasRun()) return {};
    return t2iPixelWords(m_run, m_words, query(-1), m_pixel->first, m_pixel->second, m_height, m_width);
}

void T2iDocument::setSelfLayer(int layer) {
    const auto layers = unetLayers();
    if (layer < 0 || layer >= static_cast<int>(layers.size()) || layers[size_t(layer)].cross) return;
    if (layer == m_selfLayer) return;
    m_selfLayer = layer;
    selectionEdited();
}

const UNetAttentionMap* T2iDocument::selfAttention() const {
    const auto it = m_self.find({m_step, m_selfLayer});
    return it == m_self.end() ? nullptr : &it->second;
}

void T2iDocument::setSelfAttention(int step, int layer, UNetAttentionMap map) {
    m_self.clear(); // one layer of one step at a time: SD's 64×64 layers are 512 MiB each
    m_self.emplace(std::pair{step, layer}, std::move(map));
    emit selfChanged();
}

} // namespace attnlens::ui
