#pragma once
// TranslatePage: the "Translate" workspace. Type German, translate (greedy or beam search), then step
// back and forth through the decoding and explore every head: Matrix, Model (layers × heads), Lines
// (head view), Embeddings and Beam tabs, plus the current step's cross-attention and candidates.
//
// The page is thin: state lives in TranslationDocument (snapshots + shared selection); the views
// listen to it; model loading and every decoding step run on an InferenceWorker. The DecodeSession
// itself is touched only inside worker jobs (jobs run one at a time, in order), so the GUI thread
// never blocks and never sees a half-updated session.
//
// Object names for tests and style sheets: "sourceInput", "translateButton", "stepBack", "stepForward",
// "play", "reset", "searchMode", "beamWidth", "maxLength", "attentionKind", "layer", "head",
// "wordLevel", "hideSpecial", "views", "status", "exportButton".

#include "core/analysis/attention_diff.h"
#include "core/models/marian_model.h"
#include "ui/shell/workspace_page.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/precision_note.h"

#include <QElapsedTimer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QToolButton;

namespace attnlens::ui {

class AttentionLineView;
class AttentionMatrixView;
class NeuronDialog;
class DifferenceView;
class BeamView;
class EmbeddingsView;
class HeadsLensView;
class PlaybackBar;
class ModelGridView;
class StepPanel;
class TokenChips;

// Help → What am I looking at? (translate_help.cpp): one text per view and attention kind.
enum class TranslateView {
    Matrix = 0,
    Model = 1,
    Lines = 2,
    Embeddings = 3,
    Beam = 4,
    Heads = 5,
    Difference = 6
};
QString translateHelpTitle(TranslateView view);
QString translateHelpText(TranslateView view, AttentionKind kind);

class TranslatePage : public WorkspacePage {
    Q_OBJECT
public:
    using View = TranslateView;
    static std::optional<View> parseView(const QString& name); // "matrix", "model", "lines", …

    // loadBuiltin: open the built-in translation model at once (a clear message if absent).
    explicit TranslatePage(QWidget* parent = nullptr, bool loadBuiltin = true);

    // Help → What am I looking at? (ui/…/*_help.cpp)
    QString viewTitle() const override { return translateHelpTitle(currentView()); }
    QString viewExplanation() const override { return translateHelpText(currentView(), m_doc->kind()); }
    ~TranslatePage() override;

    // ModelPage
    void openModel(const QString& dir) override;
    QString modelDescription() const override { return m_doc->modelDescription(); }

    // SessionPage (translate_session.cpp): model, input, decoding settings, the step, kind / layer / head /
    // fusion / through, the selected token and beam node, word level, special tokens, the tab, heads off and
    // pinned A.
    QString sessionKey() const override { return QStringLiteral("translate"); }
    QJsonObject saveSession() const override;
    QString checkSession(const QJsonObject& state) const override;

    TranslationDocument* document() const { return m_doc; }

    // Actions (the buttons call these; tests and --screenshot too). All asynchronous: watch
    // resultReady() / failed().
    void setInput(const QString& text);
    QString input() const;
    void setBeamWidth(int width); // 1 = greedy
    void setMaxNewTokens(int n);
    void translate();
    void stepForward();
    void stepBack();
    void reset();
    void goToStep(int step); // back or forward to `step` (0: before the first token) in one job
    void setPlaying(bool on);
    bool isPlaying() const;
    void cancel();

    void showView(View view);
    View currentView() const;
    AttentionMatrixView* matrixView() const { return m_matrixView; }
    ModelGridView* modelView() const { return m_modelView; }
    AttentionLineView* lineView() const { return m_lineView; }
    EmbeddingsView* embeddingsView() const { return m_embeddingsView; }
    BeamView* beamView() const { return m_beamView; }
    HeadsLensView* headsView() const { return m_headsView; }
    // Head ablation (the Heads tab's "off" column; translate_ablation.cpp): these heads off for every
    // translation from now on (translated again at once); forgotten when another model loads.
    void setAblation(MarianAblation ablation);
    const MarianAblation& ablation() const { return m_ablation; }
    // The plain model's translation of the input on screen while heads are off (empty otherwise / until
    // known).
    QString baselineTranslation() const { return m_baselineTranslation; }
    // The translation line's tooltip: the top 5 with and without the heads where the output changed.
    QString ablationDetails() const;
    // Every head of the shown kind switched off alone: the drop of the shown translation's log-probability
    // (teacher-forced), on the worker; shown in the Heads tab as "importance".
    void rankHeadsByImportance();
    // The neuron view (translate_neuron.cpp): one score of the shown kind taken apart, for the matrix's
    // displayed row and column (their first pieces); -1: the focus token and the strongest key. Opens the
    // window.
    void showNeuronView(int row = -1, int col = -1);
    NeuronDialog* neuronDialog() const { return m_neuron; }
    // Difference maps (translate_difference.cpp): the matrix on screen pinned as A; the Difference tab then
    // shows A, the current matrix B and A − B (rows and columns matched by position or token), whatever
    // changes — the sentence, the step, the kind, layer or head, or the model. unpin() forgets A.
    void pinDifference();
    void unpin();
    bool hasPin() const { return m_pinned.has_value(); }
    DifferenceView* differenceView() const { return m_differenceView; }
    StepPanel* stepPanel() const { return m_stepPanel; }
    TokenChips* chips(TokenSide side) const;
    QString statusText() const;

    // Export by extension: .png/.svg the current view; .json/.csv/.npy the attention data.
    // Throws attnlens::Error with the reason.
    void exportView(const QString& path);
    void exportData(const QString& path);

    // ms from translate() to the complete result arriving on the GUI thread (-1 before any).
    qint64 lastTranslateMs() const { return m_lastTranslateMs; }
    // Wall time of one decoding slice between two partial displays of a long translation.
    static constexpr int kSliceMs = 150;

signals:
    // resultReady(): a new snapshot is shown (translate, step, back, reset). A translation in progress is
    // shown as it grows: a partial snapshot (not finished) is shown; resultReady() follows when it is
    // complete.
    void partialResult();

protected:
    void modelReady() override;
    bool restoreInputs(const QJsonObject& state) override;
    bool hasModel() const override { return m_doc->hasModel(); }
    void continueRestore() override; // the model is here: heads off, then the translation or the view
    void jobFailed(int id, const QString& message) override;
    void jobCancelled(int id) override;

private:
    struct SessionSlot;
    QWidget* buildTopBar();
    QWidget* buildTokenPanel();
    QWidget* buildViews();
    QWidget* buildSelectors();
    QToolButton* buildExportButton(QWidget* parent);
    void connectViews();
    void openNeuronView(int layer, int head, int query, int key); // pieces of the shown kind's matrix
    // Encoder attention flow (translate_flow.cpp): when the selection shows flow and it is not computed yet,
    // one max-flow per source token on the worker; above kFlowBudget the view falls back to rollout and says
    // so.
    void requestFlow();
    TranslationDocument::FlowKey m_flowRequested;
    void refreshHeads(); // the Heads tab: statistics of the shown kind at the shown step (when visible)
    void refreshTranslationLabel();
    void compareWithAllHeads(); // after an ablated translation: the plain one, on the worker
    void addStepShortcuts();
    QWidget* buildStatusBar();
    void syncSelectors();
    void updateButtons();
    void submitStep(const QString& label, int action, int target = -1);
    // Session restore (translate_session.cpp): applied in stages as the model loads, the translation arrives
    // and the step is reached.
    bool m_restoreStepAsked = false;
    void restoreStep();           // after a translation or step arrived
    void applyRestoredView();     // the step is right: selection, view options, tab
    void applyRestoredAblation(); // once the model is known
    bool restoreWantsTranslation() const;
    void continueTranslation(int generation, int growth);
    void showTranslationSlice(const std::shared_ptr<const TranslationSnapshot>& snapshot, int generation,
                              int growth);
    void showStatus(const QString& text, bool error = false);
    void playTick();
    QWidget* currentExportWidget() const;

    TranslationDocument* m_doc;
    std::shared_ptr<SessionSlot> m_slot; // dereferenced on the worker thread only
    int m_generation = 0;                // results of older translations are dropped
    int m_growth = 0;                    // a growing translation continues only while this is unchanged

    QLineEdit* m_input = nullptr;
    QPushButton* m_translate = nullptr;
    PlaybackBar* m_playback = nullptr;
    QComboBox* m_mode = nullptr;
    QSpinBox* m_beamWidth = nullptr;
    QSpinBox* m_maxLength = nullptr;
    QComboBox* m_kind = nullptr;
    QSpinBox* m_layer = nullptr;
    QComboBox* m_head = nullptr;
    QCheckBox* m_wordLevel = nullptr;
    QCheckBox* m_hideSpecial = nullptr;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_translation = nullptr;
    QLabel* m_status = nullptr;
    HeadsLensView* m_headsView = nullptr;
    MarianAblation m_ablation;
    QString m_baselineTranslation;
    // The plain translation and what the ablation changed (analysis/ablation_change), for the trace on
    // screen.
    struct AblationComparison;
    std::shared_ptr<const AblationComparison> m_ablationChange;
    const void* m_rankedFor = nullptr; // the trace the Heads tab's importance was measured on
    AttentionKind m_rankedKind = AttentionKind::Cross;
    QTabWidget* m_tabs = nullptr;
    TokenChips* m_sourceChips = nullptr;
    TokenChips* m_targetChips = nullptr;
    AttentionMatrixView* m_matrixView = nullptr;
    ModelGridView* m_modelView = nullptr;
    AttentionLineView* m_lineView = nullptr;
    EmbeddingsView* m_embeddingsView = nullptr;
    BeamView* m_beamView = nullptr;
    StepPanel* m_stepPanel = nullptr;
    QElapsedTimer m_clock;
    qint64 m_lastTranslateMs = -1;
    NeuronDialog* m_neuron = nullptr;
    struct Pinned {
        LabelledMatrix matrix;
        QString description;
    };
    std::optional<Pinned> m_pinned;
    DifferenceView* m_differenceView = nullptr;
    QWidget* buildDifferenceTab();
    void refreshDifference();
    QString describeMatrix() const;                    // what the Matrix tab shows now, in words
    AttentionKind m_neuronKind = AttentionKind::Cross; // the kind the neuron window shows
    PrecisionNote m_precisionNote;                     // bf16 loads: the measured difference from fp32
};

} // namespace attnlens::ui
