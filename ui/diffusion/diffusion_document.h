#pragma once
// DiffusionDocument: the state of the Diffusion page — the loaded U-Net, the denoising run as it grows
// (one frame per step: x_t, predicted noise, x̂0), the attention computed for its steps, and what the
// user is looking at (step, query region, layer, heads, key side, colours). Views read it and call
// setters; it emits signals; it runs no model (the page does, on its InferenceWorker) and draws through
// core/diffusion/unet_maps.h, as `attnlens-cli diffuse --overlay / --gif` does.
//
// Basic usage:
//   doc->setModel(std::make_shared<const DiffusionModel>(loadDiffusionModel(dir)));
//   doc->beginRun(settings, timesteps);                 // then, per step (GUI thread):
//   doc->addFrame(DiffusionDocument::makeFrame(i, step), attention);   // attention may be null
//   doc->finishRun(true, session.finalSample());
//   doc->setQuery(PixelRegion::pixel(14, 10));  doc->setLayer(3);
//   RgbImage px = doc->renderView(doc->currentStep()); // the large view; empty attention → image only
//
// Attention: a step's every layer ([heads, tokens, tokens] each) is kept in a cache bounded by
// kAttentionBudget bytes; steps evicted (or never captured) are recomputed by the page on its worker
// (missingAttention() says which) and stored back with storeAttention(). Snapshots are immutable and
// shared, so a worker may hold them while the GUI moves on. Threading: GUI thread only.

#include "core/diffusion/denoise_session.h"
#include "core/diffusion/unet_maps.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace attnlens::ui {

// One denoising step as the page shows it.
struct DiffusionFrame {
    int index = 0;               // loop step, from 0
    DenoiseStep step;            // timestep, x_t, predicted noise, x̂0 (model space)
    ImageU8 noisy, noise, clean; // x_t, ε̂ (shown over ±3, i.e. ε̂/3 as a sample), x̂0 — 8-bit
};

// Every attention layer of one step's forward.
struct StepAttention {
    std::vector<UNetAttentionMap> layers;
    int64_t bytes = 0;
};

struct DiffusionSettings {
    SchedulerKind scheduler = SchedulerKind::Ddim;
    int steps = 50;
    std::optional<int> classLabel;
    uint64_t seed = 1;
};

class DiffusionDocument : public QObject {
    Q_OBJECT
public:
    static constexpr int64_t kAttentionBudget = int64_t{768} << 20; // bytes of cached attention
    static constexpr int kStripTiles = 10;                          // steps in the step strip

    explicit DiffusionDocument(QObject* parent = nullptr);

    // Prepares a frame for display (pure; call it on the worker).
    static std::shared_ptr<const DiffusionFrame> makeFrame(int index, DenoiseStep step);
    static std::shared_ptr<const StepAttention> makeAttention(std::vector<UNetAttentionMap> layers);
    // A step's forward recomputed with every attention layer captured (pure; call it on the worker).
    static std::shared_ptr<const StepAttention> computeAttention(const DiffusionModel& model,
                                                                 std::optional<int> classLabel,
                                                                 const DiffusionFrame& frame,
                                                                 const Callbacks& callbacks);
    // Bytes one step's attention takes for this model at its sample size (0 without attention layers).
    static int64_t attentionBytesPerStep(const DiffusionModel& model);
    // The trajectory as `view` draws it at every frame (layer < 0: no map; missing attention is computed):
    // an animated GIF at `out`, or PNGs step_000.png … in the folder `out`. Returns the frames written (pure;
    // call it on the worker).
    struct Trajectory {
        std::vector<std::shared_ptr<const DiffusionFrame>> frames;
        std::vector<std::shared_ptr<const StepAttention>> attention; // per frame, or null
        UNetView view;
        int layer = -1;
    };
    static int writeTrajectory(const DiffusionModel& model, std::optional<int> classLabel,
                               const Trajectory& trajectory, const std::filesystem::path& out, bool gif,
                               const Callbacks& callbacks);

    // --- model ------------------------------------------------------------------------------
    // A new model clears the run; the class, layer and query reset.
    void setModel(std::shared_ptr<const DiffusionModel> model, QString name);
    const std::shared_ptr<const DiffusionModel>& model() const { return m_model; }
    const QString& modelName() const { return m_modelName; }
    int classCount() const;             // 0 for an unconditional model
    QString className(int index) const; // id2label name, or the number
    // The attention layers at the model's sample size (execution order).
    const std::vector<UNetAttentionInfo>& layers() const { return m_layers; }
    int imageHeight() const { return m_height; }
    int imageWidth() const { return m_width; }

    // --- run --------------------------------------------------------------------------------
    void beginRun(const DiffusionSettings& settings, std::vector<int> timesteps);
    void addFrame(std::shared_ptr<const DiffusionFrame> frame,
                  std::shared_ptr<const StepAttention> attention);
    // complete: every planned step ran and `finalSample` (the loop's output, [C, H, W]) is the image.
    void finishRun(bool complete, const Tensor& finalSample = {});
    // The generated image (8-bit) of a completed run; empty while running or after a cancel.
    const ImageU8& finalImage() const { return m_final; }
    bool running() const { return m_running; }
    bool hasRun() const { return !m_frames.empty(); }
    int runId() const { return m_runId; }
    const DiffusionSettings& settings() const { return m_settings; }
    int stepCount() const { return static_cast<int>(m_timesteps.size()); } // planned
    int completedSteps() const { return static_cast<int>(m_frames.size()); }
    const DiffusionFrame& frame(int step) const { return *m_frames.at(static_cast<size_t>(step)); }
    std::shared_ptr<const DiffusionFrame> frameShared(int step) const {
        return m_frames.at(static_cast<size_t>(step));
    }

    // --- attention cache -------------------------------------------------------------------
    std::shared_ptr<const StepAttention> attention(int step) const;
    void storeAttention(int step, std::shared_ptr<const StepAttention> attention);
    // Of these steps (completed ones only), those whose attention is not in the cache.
    std::vector<int> missingAttention(const std::vector<int>& steps) const;
    int64_t cachedBytes() const { return m_cachedBytes; }

    // --- what is looked at -----------------------------------------------------------------
    int currentStep() const { return m_step; } // -1 before the first frame
    void setCurrentStep(int step);             // clamped to the completed steps
    // While running, the shown step follows the newest frame unless the user moved away from it.
    bool followsNewest() const { return m_follow; }

    const PixelRegion& query() const { return m_view.query; }
    void setQuery(PixelRegion region); // clamped to the image
    // The layer and the heads shown (the heads live in view(), which the drawing reads).
    AttentionSelection selection() const { return {m_layer, m_view.heads}; }
    int layer() const { return m_layer; }
    void setLayer(int layer);
    int head() const { return m_view.heads.head; } // -1: fused with fusion()
    void setHead(int head);
    HeadFusion fusion() const { return m_view.heads.fusion; }
    void setFusion(HeadFusion fusion);
    bool keySide() const { return m_view.keySide; }
    void setKeySide(bool keySide);
    bool onNoisy() const { return m_view.onNoisy; } // the map over x_t (else over x̂0)
    void setOnNoisy(bool onNoisy);
    // Each head's weights times its keys' ‖v·W_O‖, rows renormalised, before the fusion (issue 42).
    bool valueWeighted() const { return m_view.valueWeighted; }
    void setValueWeighted(bool on);
    float opacity() const { return m_view.options.opacity; }
    void setOpacity(float opacity);
    ColorMap colorMap() const { return m_view.options.colorMap; }
    void setColorMap(ColorMap map);
    const UNetView& view() const { return m_view; } // query, heads, side, image, colours for unet_maps.h
    int headCount() const;                          // of the current layer (0 without layers)

    // --- maps ------------------------------------------------------------------------------
    // The [h, w] map of `layer` at `step` for the current query/heads/side; empty when that step's
    // attention is not cached.
    RowMatrix layerMap(int step, int layer) const;
    RowMatrix currentMap() const { return layerMap(m_step, m_layer); }
    // The large view of a step (renderUNetView); image alone while its attention is missing.
    RgbImage renderView(int step, int minSide = 256) const;
    // A small view of one layer at the current step (the U view's tiles).
    RgbImage renderLayerTile(int layer, int minSide) const;
    // The steps of the step strip: up to kStripTiles evenly spaced over the planned steps, first and last
    // included, completed ones only.
    std::vector<int> stripSteps() const;
    // Short texts for titles: "down_blocks.1.attentions.0 · 14×14 · 2 heads", "step 12 / 50 · t = 741",
    // "pixel (14, 10)" / "region (3, 4)–(8, 9)".
    QString layerDescription(int layer) const;
    QString stepDescription(int step) const;
    QString queryDescription() const;
    static QString shortLayerName(const UNetAttentionInfo& layer); // "D1.0", "mid", "U0.2"

signals:
    void modelChanged();
    void runChanged(); // begun, frame added, finished
    void stepChanged();
    void attentionChanged(); // a step's attention arrived
    void selectionChanged(); // query, layer, heads, side, image
    void lookChanged();      // opacity, colour map

private:
    void evict();
    const UNetAttentionMap* layerAt(int step, int layer) const;

    std::shared_ptr<const DiffusionModel> m_model;
    QString m_modelName;
    std::vector<UNetAttentionInfo> m_layers;
    int m_height = 0, m_width = 0;

    DiffusionSettings m_settings;
    std::vector<int> m_timesteps;
    std::vector<std::shared_ptr<const DiffusionFrame>> m_frames;
    ImageU8 m_final;
    std::map<int, std::shared_ptr<const StepAttention>> m_attention;
    int64_t m_cachedBytes = 0;
    bool m_running = false;
    int m_runId = 0;

    int m_step = -1;
    bool m_follow = true;
    int m_layer = 0;
    UNetView m_view;
};

} // namespace attnlens::ui
