#pragma once
// TextToImagePage: the "Text to image" workspace — which word lands where. A Stable-Diffusion-layout
// pipeline (the built-in sd-fashion-tiny, or any StableDiffusionPipeline folder) generates from a prompt
// while the page keeps the cross-attention of every step:
//   * controls: prompt, negative prompt, seed, steps, guidance, size, scheduler, every head kept or their
//     mean; Generate (worker, progress, Cancel; each step shown as it is made: decoded when the VAE is
//     cheap, else the latents as a preview — Decode step on request);
//   * the prompt as word chips (CLIP pieces merged at </w>; <start>, <end> and padding on request): click a
//     word for its map over the image, shift-click to compare words side by side;
//   * the map for the shown step or aggregated over steps, one cross-attention layer or all (DAAM's
//     upsample-and-sum), mean / max / min / one head, the conditional or unconditional half or cond − uncond;
//   * strips: every word at once, the word through the steps, the U view of the cross-attention layers;
//   * click a pixel: which words it attends to, and its self-attention in one layer (computed on demand);
//   * export: image, view, strips (PNG), the words' maps stacked (NPY), the run (JSON).
//
// Child widgets carry object names for tests: "openModel", "modelLabel", "prompt", "negative", "seed",
// "steps", "guidance", "size", "scheduler", "allHeads", "generate", "promptNote", "progress", "cancel",
// "message", "export", "timeline", "stepLabel", "decodeStep", "allSteps", "layer", "head", "half",
// "showSpecial", "wordChips" (buttons "word<i>"), "view", "compare", "wordStrip", "stepStrip", "uView",
// "pixelLabel", "pixelWords", "selfLayer", "selfView".

#include "ui/shell/workspace_page.h"
#include "ui/t2i/t2i_document.h"
#include "ui/widgets/precision_note.h"

#include <QElapsedTimer>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTimer;
class QToolButton;

namespace attnlens::ui {

class CandidateBars;
class MapGridView;
class PatchImageView;
class T2iWordChips;
class UShapeView;

QString t2iHelpTitle();
QString t2iHelpText();

class TextToImagePage : public WorkspacePage {
    Q_OBJECT
public:
    explicit TextToImagePage(QWidget* parent = nullptr, const QString& modelDir = {});
    ~TextToImagePage() override;

    QString viewTitle() const override { return t2iHelpTitle(); }
    QString viewExplanation() const override { return t2iHelpText(); }
    void openModel(const QString& dir) override;
    QString modelDescription() const override;

    void generate() { generate(settingsFromControls()); } // a running job is cancelled first
    void generate(const T2iSettings& settings);           // any size the model can make
    void setSettings(const T2iSettings& settings);
    T2iSettings settingsFromControls() const;
    void decodeShownStep(); // the VAE on the shown step's latents (a preview otherwise)

    QString sessionKey() const override { return QStringLiteral("t2i"); }
    QJsonObject saveSession() const override;
    QString checkSession(const QJsonObject& state) const override;

    T2iDocument* document() const { return m_doc; }
    PatchImageView* view() const { return m_view; }
    MapGridView* wordStrip() const { return m_wordStrip; }
    MapGridView* stepStrip() const { return m_stepStrip; }
    MapGridView* compareView() const { return m_compare; }
    UShapeView* uView() const { return m_uView; }
    CandidateBars* pixelBars() const { return m_pixelBars; }
    PatchImageView* selfView() const { return m_selfView; }
    T2iWordChips* chips() const { return m_chips; }

    // Exports (also in the Export menu); false with the error shown.
    bool exportImage(const QString& path);     // the final image (or the shown step's picture), PNG
    bool exportView(const QString& path);      // the large view as shown, PNG
    bool exportWordStrip(const QString& path); // PNG
    bool exportStepStrip(const QString& path); // PNG
    bool exportWordMaps(const QString& path);  // [words][H][W] under the current selection, NPY
    bool exportRun(const QString& path);       // JSON as `attnlens-cli t2i --json` writes it

signals:
    void runFinished();  // a run completed or stopped (its steps stay)
    void selfComputed(); // a self-attention map arrived

protected:
    void showEvent(QShowEvent* event) override;
    void modelReady() override;
    bool hasModel() const override { return m_doc->pipeline() != nullptr; }
    bool hasResult() const override { return m_doc->hasRun() && !m_doc->running(); }
    bool restoreInputs(const QJsonObject& state) override;
    void continueRestore() override;
    void jobFailed(int id, const QString& message) override;
    void jobCancelled(int id) override;
    QString exportBaseName() const override;

private:
    QWidget* buildTopBar();
    QWidget* buildSidebar();
    QWidget* buildPromptBox(QWidget* panel);
    QWidget* buildMapBox(QWidget* panel);
    QWidget* buildPixelBox(QWidget* panel);
    QWidget* buildCentre();
    void connectDocument();
    void syncModelControls(); // size and scheduler lists of the pipeline
    void syncRunControls();   // layer, head and self-attention layer lists of the run
    void syncControls();      // the selection's controls
    void refreshStep();       // timeline, step label
    void refreshViews();      // main view, compare, strips, U view, pixel panel
    void refreshViewsSoon();  // during a run: at most every kRunRefreshMs
    static constexpr int kRunRefreshMs = 150;
    void refreshPixelPanel();
    void requestSelfAttention();
    void applyRestoredView();
    void updatePromptNote();

    T2iDocument* m_doc;
    QTimer* m_viewsTimer = nullptr;
    QElapsedTimer m_viewsDrawn;
    int m_runJob = 0, m_selfJob = 0, m_decodeJob = 0;
    bool m_firstShow = true, m_generateWhenLoaded = false, m_selfAgain = false;

    QLabel* m_modelLabel = nullptr;
    PrecisionNote m_precisionNote; // a bf16 load's comparison with fp32; empty for fp32
    QToolButton* m_export = nullptr;
    QLineEdit* m_prompt = nullptr;
    QLineEdit* m_negative = nullptr;
    QSpinBox* m_seed = nullptr;
    QSpinBox* m_steps = nullptr;
    QDoubleSpinBox* m_guidance = nullptr;
    QComboBox* m_size = nullptr;
    QComboBox* m_scheduler = nullptr;
    QCheckBox* m_allHeadsBox = nullptr;
    QCheckBox* m_keepWeightedBox = nullptr; // generate: keep the value-weighted maps too
    QCheckBox* m_valueWeighted = nullptr;   // show them
    QPushButton* m_generate = nullptr;
    QLabel* m_promptNote = nullptr;
    QCheckBox* m_allSteps = nullptr;
    QComboBox* m_layer = nullptr;
    QComboBox* m_head = nullptr;
    QComboBox* m_half = nullptr;
    QCheckBox* m_showSpecial = nullptr;
    QLabel* m_pixelLabel = nullptr;
    CandidateBars* m_pixelBars = nullptr;
    QComboBox* m_selfLayer = nullptr;
    PatchImageView* m_selfView = nullptr;
    QSlider* m_timeline = nullptr;
    QLabel* m_stepLabel = nullptr;
    QPushButton* m_decodeStep = nullptr;
    T2iWordChips* m_chips = nullptr;
    PatchImageView* m_view = nullptr;
    MapGridView* m_compare = nullptr;
    QTabWidget* m_tabs = nullptr;
    MapGridView* m_wordStrip = nullptr;
    MapGridView* m_stepStrip = nullptr;
    UShapeView* m_uView = nullptr;
};

} // namespace attnlens::ui
