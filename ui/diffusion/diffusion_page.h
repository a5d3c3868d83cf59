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
// "steps", "generate", "progress", "cancel", "message", "export", "timeline", "prevStep", "nextStep",
// "play", "stepLabel", "stepImages", "overlayView", "viewTitle", "colorBar", "uView", "stepStrip",
// "queryLabel", "keySide", "layer", "head", "over", "opacity", "colorMap".

#include "ui/diffusion/diffusion_document.h"
#include "ui/shell/workspace_page.h"

#include <QElapsedTimer>
#include <QWidget>

#include <set>

class QCheckBox;
class QDialog;
class QLayout;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTimer;
class QToolButton;

namespace attnlens::ui {

class ColorBar;
class HeadsLensView;
class NeuronDialog;
class MapDifferenceWindow;
class MapLensBox;
class MapGridView;
class PatchImageView;
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

    // Help → What am I looking at? (ui/…/*_help.cpp)
    QString viewTitle() const override { return diffusionHelpTitle(); }
    QString viewExplanation() const override { return diffusionHelpText(); }
    ~DiffusionPage() override;

    // ModelPage
    void openModel(const QString& dir) override;
    QString modelDescription() const override;

    // Starts a run with the controls' settings (class, seed, scheduler, steps); a running one is cancelled.
    void generate();
    void setSettings(const DiffusionSettings& settings); // fills the controls
    DiffusionSettings settingsFromControls() const;

    // SessionPage (diffusion_session.cpp): model, class / seed / scheduler / steps (the run is made again: it
    // is deterministic), the step shown, query, layer, head, fusion, side, image under the map, look, heads
    // off.
    QString sessionKey() const override { return QStringLiteral("diffusion"); }
    QJsonObject saveSession() const override;
    QString checkSession(const QJsonObject& state) const override;

    DiffusionDocument* document() const { return m_doc; }
    // Attention is captured while generating when a step's maps take at most this many bytes (default
    // 64 MiB); otherwise the page computes the maps of the steps looked at, one job at a time.
    void setCaptureLimit(int64_t bytes) { m_captureLimit = bytes; }
    bool isPlaying() const;
    void setPlaying(bool playing);
    PatchImageView* overlayView() const { return m_overlay; }
    UShapeView* uView() const { return m_uView; }
    MapGridView* stepStrip() const { return m_strip; }
    MapGridView* stepImages() const { return m_stepImages; }
    ColorBar* colorBar() const { return m_colorBar; }

    // Exports (also in the Export menu). Return false and show a message on failure.
    bool exportView(const QString& path) const;  // the large view, as `diffuse --overlay` draws it
    bool exportUView(const QString& path) const; // PNG
    bool exportStrip(const QString& path) const; // PNG
    bool exportMap(const QString& path) const;   // the current layer's [h, w] map, .npy or .csv
    // The view at every step: an animated GIF (.gif) or, for any other path, a folder of PNGs
    // (step_000.png …). Runs on the worker (missing attention is computed); `exported` when written.
    void exportTrajectory(const QString& path);

    // --- lenses (issue 21; diffusion_lenses.cpp) ----------------------------------------------
    // Map → Head statistics…: every head of every attention layer at the step shown, in a window that follows
    // the step; click a head to show it. Its "off" column switches heads off for the step shown: the step's
    // noise prediction is made again without them (worker) and the window shows x̂0 with all heads, without
    // them and |Δ|, with how far ε̂ moved. "Rank by importance": each head alone off, ε̂'s relative change.
    void showHeadStats();
    HeadsLensView* headsLens() const { return m_headsLens; }
    void setAblatedHeads(std::vector<std::pair<int, int>> heads);
    const std::vector<std::pair<int, int>>& ablatedHeads() const { return m_ablated; }
    void rankHeadsByImportance();
    // What switching the heads off did to the step shown (valid once computed; heads empty otherwise).
    struct AblationResult {
        int runId = 0, step = -1;
        std::vector<std::pair<int, int>> heads;
        double relativeChange = 0, maxAbsChange = 0; // of ε̂
        ImageU8 plain, ablated;                      // x̂0 with all heads / without these
        RowMatrix x0Difference;                      // |Δx̂0| (first channel), [H, W]
    };
    const AblationResult& ablationResult() const { return m_ablation; }
    // Map → Inside one score…: the neuron view of the step shown — the chosen layer and head, the query
    // pixel's token in that layer and its strongest key.
    void showNeuronView();
    NeuronDialog* neuronDialog() const { return m_neuron; }
    // Map → Pin map as A…: difference maps (issue 22) of the layer's map — two steps, seeds, classes, queries
    // or layers of one size — in a window: A, the map now and A − B.
    void pinMap();
    MapDifferenceWindow* differenceWindow() const { return m_difference; }

signals:
    void runFinished(); // a run completed (after resultReady) or was cancelled (its frames stay)
    void exported(const QString& path);

protected:
    void showEvent(QShowEvent* event) override;
    void modelReady() override;
    bool restoreInputs(const QJsonObject& state) override;
    bool hasModel() const override { return m_doc->model() != nullptr; }
    void continueRestore() override; // the model is here: settings, heads off, the run
    void jobFailed(int id, const QString& message) override;
    void jobCancelled(int id) override;
    bool eventFilter(QObject* watched, QEvent* event) override; // keeps the colour bar as tall as the picture

private:
    // Construction: build the widgets, then connect document and worker to them.
    QWidget* buildTopBar();
    QWidget* buildSidebar();
    QWidget* buildGenerateBox(QWidget* panel);
    QWidget* buildQueryBox(QWidget* panel);
    QWidget* buildMapBox(QWidget* panel);
    QWidget* buildDisplayBox(QWidget* panel);
    void connectDocument();
    void attentionJobEnded();
    QWidget* buildCentre();
    QLayout* buildTimeline(QWidget* centre);
    QWidget* buildStepImages(QWidget* top);
    QLayout* buildLargeView(QWidget* top);
    QLayout* buildUView(QWidget* top);
    QWidget* buildStrip(QWidget* parent);
    void syncControls();
    void refreshStep(); // timeline, step images
    void refreshMaps(); // large view, colour bar, U view, strip
    // While a run delivers frames, the maps are redrawn at most every kRunRefreshMs (the newest frame
    // shown, the timeline following every frame); otherwise at once.
    void refreshMapsSoon();
    static constexpr int kRunRefreshMs = 100;
    void requestAttention();
    void syncColorBarSpan();
    enum class Export { View, UView, Strip, Gif, PngSequence, MapNpy, MapCsv };
    void chooseExport(Export what); // asks for a path, then writes

    DiffusionDocument* m_doc;
    int m_runJob = 0; // the worker job of the current run
    bool m_firstShow = true;
    void applyRestoredView(); // the run is here: step and selection (diffusion_session.cpp)
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
    QToolButton* m_export = nullptr;
    QComboBox* m_class = nullptr;
    QSpinBox* m_seed = nullptr;
    QComboBox* m_scheduler = nullptr;
    QSpinBox* m_steps = nullptr;
    QPushButton* m_generate = nullptr;
    QLabel* m_queryLabel = nullptr;
    QCheckBox* m_keySide = nullptr;
    MapLensBox* m_mapBox = nullptr;
    QComboBox* m_over = nullptr;
    QSlider* m_timeline = nullptr;
    QPushButton* m_prev = nullptr;
    QPushButton* m_next = nullptr;
    QPushButton* m_play = nullptr;
    QTimer* m_playTimer = nullptr;
    QLabel* m_stepLabel = nullptr;
    MapGridView* m_stepImages = nullptr;
    QLabel* m_viewTitle = nullptr;
    PatchImageView* m_overlay = nullptr;
    ColorBar* m_colorBar = nullptr;
    UShapeView* m_uView = nullptr;
    QLabel* m_uTitle = nullptr;
    QLabel* m_stripTitle = nullptr;
    MapGridView* m_strip = nullptr;
    // lenses
    void refreshHeadStats();
    void refreshAblation(); // re-predicts the step shown without the ablated heads (worker)
    void showAblation();
    QDialog* m_headsDialog = nullptr;
    HeadsLensView* m_headsLens = nullptr;
    QLabel* m_ablationText = nullptr;
    QLabel* m_ablationImages = nullptr;
    std::vector<std::pair<int, int>> m_ablated;
    AblationResult m_ablation;
    std::pair<int, int> m_rankedFor{-1, -1}; // (run, step) the importance was measured on
    NeuronDialog* m_neuron = nullptr;
    MapDifferenceWindow* m_difference = nullptr;
    void refreshDifference();
    void pinMapAs(const RowMatrix& map, const QString& description); // opens the difference window
    QString describeMap() const;
};

} // namespace attnlens::ui
