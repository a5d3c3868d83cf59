#pragma once
// T2iDocument: the state of the Text-to-image page — the pipeline, the run being made or made (its steps
// arrive one by one), the words of its prompt and what the views show: the chosen word (and the words
// compared with it), the step (or all steps), the cross-attention layer (or all), heads, the guidance half,
// the query pixel and its self-attention (computed on demand). Views read it; the maps are drawn by
// core/diffusion/t2i_maps.h, as `attnlens-cli t2i` draws them.
//
// Threading: GUI thread only; the page's worker computes, the document only stores.

#include "core/diffusion/t2i_maps.h"
#include "core/export/colormap.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace attnlens::ui {

// What Generate runs with (the page's controls).
struct T2iSettings {
    QString prompt = QStringLiteral("a sneaker above a bag, a dress on the right");
    QString negative;
    int seed = 0;
    int steps = 25;
    double guidance = 7.5;
    int size = 0;                       // 0: the model's own
    std::optional<SamplerKind> sampler; // nullopt: the folder's
    bool allHeads = false;              // keep every head's map (else their mean)
    bool valueWeighted = false;         // keep the value-weighted maps too (T2iRequest::valueWeighted)
    bool operator==(const T2iSettings&) const = default;
};

// One step as the worker delivers it: the step and the picture shown for it.
struct T2iFrame {
    T2iStep step;
    ImageU8 picture;      // the decoded step (cheap VAEs) or latentPreview()
    bool decoded = false; // picture is the VAE's decode of the step's latents
};

class T2iDocument : public QObject {
    Q_OBJECT
public:
    explicit T2iDocument(QObject* parent = nullptr);

    void setPipeline(std::shared_ptr<const TextToImagePipeline> pipe, const QString& name);
    const std::shared_ptr<const TextToImagePipeline>& pipeline() const { return m_pipe; }
    const QString& modelName() const { return m_name; }
    // The pipeline's attention layers for an image of the run's size (cross and self, execution order).
    std::vector<UNetAttentionInfo> unetLayers() const;

    // --- the run
    void beginRun(const T2iSettings& settings, const T2iPrompt& prompt, int height, int width, int calls);
    void addFrame(T2iFrame frame);
    void finishRun(T2iResult* final); // nullptr: stopped (cancelled or failed) with the steps made
    void setStepPicture(int step, ImageU8 picture); // a step decoded on request
    bool hasRun() const { return !m_run.steps.empty(); }
    // Counts runs and pipelines: a job's late result for an earlier run (or model) is ignored by comparing
    // it.
    int runId() const { return m_runId; }
    bool running() const { return m_running; }
    // Whether (row, col) lies in the run's image.
    bool insideImage(int row, int col) const {
        return row >= 0 && col >= 0 && row < m_height && col < m_width;
    }
    const T2iResult& run() const { return m_run; }
    const T2iSettings& runSettings() const { return m_runSettings; }
    int completedSteps() const { return static_cast<int>(m_run.steps.size()); }
    int plannedSteps() const { return m_planned; }
    int imageHeight() const { return m_height; }
    int imageWidth() const { return m_width; }
    bool hasImage() const { return !m_run.image.empty(); }
    bool stepDecoded(int step) const;
    // The picture of the step shown (the final image at the last step of a finished run).
    ImageU8 picture() const { return pictureAt(-1); }
    const std::vector<T2iWord>& words() const { return m_words; }
    std::vector<UNetAttentionInfo> crossLayers() const { return t2iCrossLayers(m_run); }
    bool allHeads() const { return t2iHasAllHeads(m_run); }
    bool guided() const;

    // --- what is shown
    int word() const { return m_word; } // index into words(), -1 none
    const std::set<int>& compared() const { return m_compared; }
    void setWord(int word);        // also clears the comparison
    void toggleCompared(int word); // shift-click: compare side by side
    int shownStep() const { return m_step; }
    void setShownStep(int step);
    bool allSteps() const { return m_allSteps; } // aggregate over the steps (DAAM)
    void setAllSteps(bool all);
    int layer() const { return m_layer; } // cross layer index, -1: all
    void setLayer(int layer);
    const HeadSelection& heads() const { return m_heads; }
    void setHeads(HeadSelection heads);
    T2iHalf half() const { return m_half; }
    void setHalf(T2iHalf half);
    bool showSpecial() const { return m_showSpecial; }
    void setShowSpecial(bool show);
    // Value-weighted maps (issue 42): the words' maps of a run that kept them, and the self-attention map.
    bool hasValueWeighted() const { return t2iHasValueWeighted(m_run); }
    bool valueWeighted() const { return m_valueWeighted && hasValueWeighted(); }
    bool valueWeightedSwitch() const { return m_valueWeighted; } // on even while the run has none
    void setValueWeighted(bool on);
    float opacity() const { return m_opacity; }
    void setOpacity(float opacity);
    ColorMap colorMap() const { return m_colorMap; }
    void setColorMap(ColorMap map);
    OverlayOptions overlayOptions() const;

    // The map query for a word under the current step / layer / heads / half.
    T2iMapQuery query(int word) const;
    // A query's map over the image (cached); throws attnlens::Error as t2iWordMap does.
    RowMatrix wordMap(const T2iMapQuery& query) const;
    RowMatrix wordMap(int word) const { return wordMap(query(word)); }
    // A query's map over the picture of step `pictureStep` (-1: the shown one); no tokens: the picture.
    RgbImage overlay(const T2iMapQuery& query, int pictureStep = -1) const;
    RgbImage overlay(int word) const { return overlay(query(word)); }
    // The picture of a step (-1: the shown one) at the image's size (a latent preview enlarged).
    ImageU8 pictureAt(int step) const;
    // The words shown as chips / strip tiles (special ones only when showSpecial).
    std::vector<int> visibleWords() const;

    // --- the query pixel
    std::optional<std::pair<int, int>> pixel() const { return m_pixel; } // (row, col) in image pixels
    void setPixel(std::optional<std::pair<int, int>> pixel);             // outside the image: none
    std::vector<float> pixelWords() const;        // per word (t2iPixelWords), empty without a pixel
    int selfLayer() const { return m_selfLayer; } // index among unetLayers(), -1 none
    void setSelfLayer(int layer);
    // The self-attention of (shown step, selfLayer) once computed.
    const UNetAttentionMap* selfAttention() const;
    void setSelfAttention(int step, int layer, UNetAttentionMap map);
    const Tensor& condStates() const { return m_condStates; } // the prompt's encoder states, once computed
    void setCondStates(Tensor states) { m_condStates = std::move(states); }

signals:
    void pipelineChanged();
    void runChanged();       // begun, a step added, finished
    void selectionChanged(); // word, step, layer, heads, half, pixel, specials
    void lookChanged();      // opacity, colour map
    void selfChanged();      // self-attention computed

private:
    void selectionEdited();
    std::shared_ptr<const TextToImagePipeline> m_pipe;
    QString m_name;
    T2iResult m_run;
    T2iSettings m_runSettings;
    std::vector<ImageU8> m_pictures;
    std::vector<bool> m_decoded;
    std::vector<T2iWord> m_words;
    bool m_running = false;
    int m_planned = 0, m_height = 0, m_width = 0, m_runId = 0;
    int m_word = -1, m_step = 0, m_layer = -1, m_selfLayer = -1;
    std::set<int> m_compared;
    bool m_allSteps = true, m_showSpecial = false, m_valueWeighted = false;
    HeadSelection m_heads;
    T2iHalf m_half = T2iHalf::Cond;
    float m_opacity = 0.6f;
    ColorMap m_colorMap = ColorMap::Inferno;
    std::optional<std::pair<int, int>> m_pixel;
    std::map<std::pair<int, int>, UNetAttentionMap> m_self; // (step, layer)
    Tensor m_condStates;
    mutable std::map<std::string, RowMatrix> m_mapCache;
};

} // namespace attnlens::ui
