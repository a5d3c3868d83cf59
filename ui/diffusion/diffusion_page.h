#pragma once
// DiffusionPage: the "Diffusion" workspace. Generate an image with a denoising U-Net (the built-in
// class-conditional Fashion-MNIST DDPM, or any diffusers UNet2DModel / pipeline folder) and watch its
// spatial attention while the image emerges from noise:
//   * controls: class (by name when the folder names them), seed, scheduler (DDIM / DDPM), steps,
//     Generate (worker thread, progress, Cancel; each step is shown as soon as it is computed);
//   * a timeline over the steps (slider, ◀ ▶, Play) showing x_t, the predicted noise and x̂0;
//   * click (or drag a region of) the large view: that is the query; the chosen layer's map is blended
//     over x̂0 or x_t, with a colour bar; the U view shows every attention layer laid out as the U,
//     each at its own resolution; the step strip follows the same query across the steps;
//   * heads: mean, max or one head; key side: who attends to the query;
//   * export: the view, U view and strip as PNG, the trajectory as animated GIF (giflib) or PNG
//     sequence, the map as NPY / CSV — drawn by core/diffusion/unet_maps.h like `attnlens-cli diffuse`.
// The page is thin: state lives in DiffusionDocument; a failed model leaves the previous one in place.
//
// Child widgets carry object names for tests: "openModel", "modelLabel", "class", "seed", "scheduler",
// "steps", "generate", "progress", "cancel", "message", "export", "timeline", "stepBack", "stepForward",
// "play" (the PlaybackBar), "stepLabel", "queryLabel", "keySide", "layer", "head", "over", "opacity",
// "colorMap", and DiffusionViews' and DiffusionLenses' names.

#include "ui/diffusion/diffusion_document.h"
#include "ui/diffusion/diffusion_lenses.h"
#include "ui/shell/workspace_page.h"
#include "ui/widgets/precision_note.h"

#include <QElapsedTimer>

#include <set>

class QCheckBox;
class QComboBox;
class QLabel;
class QLayout;
class QPushButton;
class QSlider;
class QSpinBox;
class QTimer;
class QToolButton;

namespace attnlens::ui {

class ColorBar;
class DiffusionSettingsBox;
class DiffusionViews;
class MapGridView;
class MapLensBox;
class PatchImageView;
class PlaybackBar;
class UShapeView;

// Help → What am I looking at? (diffusion_help.cpp)
QString diffusionHelpTitle();
QString diffusionHelpText();

class DiffusionPage : public WorkspacePage {
    Q_OBJECT
public:
    // Starts loading `modelDir` (empty: the built-in ddpm-fashion-tiny). The first image is generated
    // when the page is first shown (or generate() is called).
    explicit DiffusionPage(QWidget* parent = nullptr, const QString& modelDir = {});
    ~DiffusionPage() override;

    QString viewTitle() const override { return diffusionHelpTitle(); }
    QString viewExplanation() const override { return diffusionHelpText(); }
    void openModel(const QString& dir) override;
    QString modelDescription() const override;

    // Starts a run with the controls' settings (class, seed, scheduler, steps); a running one is cancelled.
    void generate();
    void setSettings(const DiffusionSettings& settings); // fills the controls
    DiffusionSettings settingsFromControls() const;

    // SessionPage (ui/diffusion/diffusion_session.h): model, class / seed / scheduler / steps (the run is
    // made again: it is deterministic), the step shown, query, layer, head, fusion, side, image under the
    // map, look, heads off, the pinned map.
    QString sessionKey() const override { return QStringLiteral("diffusion"); }
    QJsonObject saveSession() const override;
    QString checkSession(const QJsonObject& state) const override;

    DiffusionDocument* document() const { return m_doc; }
    // Attention is captured while generating when a step's maps take at most this many bytes (default
    // 64 MiB); otherwise the page computes the maps of the steps looked at, one job at a time.
    void setCaptureLimit(int64_t bytes) { m_captureLimit = bytes; }
    bool isPlaying() const;
    void setPlaying(bool playing);
    DiffusionViews* views() const { return m_views; }
    PatchImageView* overlayView() const;
    UShapeView* uView() const;
    MapGridView* stepStrip() const;
    MapGridView* stepImages() const;
    ColorBar* colorBar() const;

    // Exports (also in the Export menu). Return false and show a message on failure.
    bool exportView(const QString& path);  // the large view, as `diffuse --overlay` draws it
    bool exportUView(const QString& path); // PNG
    bool exportStrip(const QString& path); // PNG
    bool exportMap(const QString& path);   // the current layer's [h, w] map, .npy or .csv
    // The view at every step: an animated GIF (.gif) or, for any other path, a folder of PNGs
    // (step_000.png …). Runs on the worker (missing attention is computed); `exported` when written.
    void exportTrajectory(const QString& path);

    // The lenses (ui/diffusion/diffusion_lenses.h) on the step shown: Map → Head statistics…, Inside one
    // score…, Pin map as A….
    DiffusionLenses* lenses() const { return m_lenses; }
    void showHeadStats() { m_lenses->showHeadStats(); }
    HeadsLensView* headsLens() const { return m_lenses->headsLens(); }
    void setAblatedHeads(HeadList heads) { m_lenses->setAblated(std::move(heads)); }
    const HeadList& ablatedHeads() const { return m_lenses->ablated(); }
    const DiffusionLenses::AblationResult& ablationResult() const { return m_lenses->ablationResult(); }
    void showNeuronView() { m_lenses->showNeuronView(); }
    NeuronDialog* neuronDialog() const { return m_lenses->neuronDialog(); }
    void pinMap() { m_lenses->pin(); }
    MapDifferenceWindow* differenceWindow() const { return m_lenses->differenceWindow(); }

signals:
    void runFinished(); // a run completed (after resultReady) or was cancelled (its frames stay)
    void exported(const QString& path); // a trajectory (exportTrajectory) is written

protected:
    void showEvent(QShowEvent* event) override;
    void modelReady() override;
    bool restoreInputs(const QJsonObject& state) override;
    bool hasModel() const override { return m_doc->model() != nullptr; }
    bool hasResult() const override { return m_doc->hasRun() && !m_doc->running(); }
    void continueRestore() override; // the model is here: settings, heads off, the run
    void jobFailed(int id, const QString& message) override;
    void jobCancelled(int id) override;
    QString exportBaseName() const override;

private:
    QWidget* buildTopBar();
    QWidget* buildSidebar();
    QWidget* buildQueryBox(QWidget* panel);
    QWidget* buildMapBox(QWidget* panel);
    QLayout* buildTimeline();
    void connectDocument();
    void attentionJobEnded();
    void applyRestoredView(); // the run is here: step and selection
    void syncControls();
    void refreshStep();        // timeline and step images
    void useFolderScheduler(); // after a load: the scheduler the folder names
    void refreshMaps();        // views, then the attention still missing
    // While a run delivers frames, the maps are redrawn at most every kRunRefreshMs (the newest frame
    // shown, the timeline following every frame); otherwise at once.
    void refreshMapsSoon();
    static constexpr int kRunRefreshMs = 100;
    void requestAttention();

    DiffusionDocument* m_doc;
    DiffusionLenses* m_lenses;
    DiffusionViews* m_views = nullptr;
    int m_runJob = 0; // the worker job of the current run
    bool m_firstShow = true;
    bool m_generateWhenLoaded = false;
    std::set<std::pair<int, int>> m_requested; // (run id, step) whose attention is queued
    // One attention job at a time: scrubbing the timeline asks again when the job in flight ends, for
    // the step shown then, instead of queueing a job per step passed (seconds of work on big models).
    int m_attentionJob = 0;
    int64_t m_captureLimit = int64_t{64} << 20;
    bool m_attentionAgain = false;
    QTimer* m_mapsTimer = nullptr; // a deferred refreshMaps() during a run
    QElapsedTimer m_mapsDrawn;     // since the last refreshMaps()

    QLabel* m_modelLabel = nullptr;
    PrecisionNote m_precisionNote; // a bf16 load's comparison with fp32; empty for fp32
    QToolButton* m_export = nullptr;
    DiffusionSettingsBox* m_settings = nullptr;
    QLabel* m_queryLabel = nullptr;
    QCheckBox* m_keySide = nullptr;
    QCheckBox* m_valueWeighted = nullptr;
    MapLensBox* m_mapBox = nullptr;
    QComboBox* m_over = nullptr;
    PlaybackBar* m_playback = nullptr;
    QSlider* m_timeline = nullptr;
    QLabel* m_stepLabel = nullptr;
};

} // namespace attnlens::ui
