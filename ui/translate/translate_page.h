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
#include "ui/translate/translate_lenses.h"
#include "ui/translate/translate_views.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/precision_note.h"

#include <QElapsedTimer>
#include <QLabel>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QToolButton;

namespace attnlens::ui {

class AttentionLineView;
class AttentionMatrixView;
class NeuronDialog;
class TranslateLogitLens;
class DifferenceView;
class BeamView;
class DecodeSettings;
class EmbeddingsView;
class HeadsLensView;
class PlaybackBar;
class ModelGridView;
class StepPanel;
class TokenChips;
class SentenceBar;
class TranslateSelectors;
struct TranslateSession;

class TranslatePage : public WorkspacePage {
    Q_OBJECT
public:
    using View = TranslateView;

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
    TranslateViews* views() const { return m_views; }
    AttentionMatrixView* matrixView() const { return m_views->matrixView(); }
    SentenceBar* sentenceBar() const { return m_sentences; } // a paragraph's sentences
    ModelGridView* modelView() const { return m_views->modelView(); }
    AttentionLineView* lineView() const { return m_views->lineView(); }
    EmbeddingsView* embeddingsView() const { return m_views->embeddingsView(); }
    BeamView* beamView() const { return m_views->beamView(); }
    // The lenses (ui/translate/translate_lenses.h): the Heads tab (statistics, importance, heads off for
    // every translation from now on — translated again at once, forgotten when another model loads), the
    // Difference tab (the matrix on screen pinned as A) and the neuron view.
    TranslateLenses* lenses() const { return m_lenses; }
    TranslateLogitLens* logitLens() const { return m_logitLens; }
    HeadsLensView* headsView() const { return m_lenses->headsView(); }
    void setAblation(MarianAblation ablation) { m_lenses->setAblation(std::move(ablation)); }
    const MarianAblation& ablation() const { return m_lenses->ablation(); }
    QString baselineTranslation() const { return m_lenses->baselineTranslation(); }
    QString ablationDetails() const; // the translation line's tooltip: the top 5 with and without the heads
    void rankHeadsByImportance() { m_lenses->rankHeads(); }
    void showNeuronView(int row = -1, int col = -1) { m_lenses->showNeuronView(row, col); }
    NeuronDialog* neuronDialog() const { return m_lenses->neuronDialog(); }
    void pinDifference() { m_lenses->pin(); }
    void unpin() { m_lenses->unpin(); }
    bool hasPin() const { return m_lenses->hasPin(); }
    DifferenceView* differenceView() const { return m_lenses->differenceView(); }
    StepPanel* stepPanel() const { return m_views->stepPanel(); }
    TokenChips* chips(TokenSide side) const;
    QString statusText() const { return m_status->text(); }

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
    bool hasResult() const override { return m_doc->snapshot() && m_doc->snapshot()->finished; }
    void continueRestore() override; // the model is here: heads off, then the translation or the view
    void jobFailed(int id, const QString& message) override;
    void jobCancelled(int id) override;
    QString exportBaseName() const override;

private:
    struct SessionSlot;
    QWidget* buildTopBar();
    QWidget* buildViews();
    QWidget* buildSelectors();
    QToolButton* buildExportButton(QWidget* parent);
    void connectViews();
    void refreshTranslationLabel();
    void addStepShortcuts();
    void syncSelectors();
    void updateButtons();
    enum class StepAction { Forward, Back, Reset, To }; // To: to step `target`
    void submitStep(const QString& label, StepAction action, int target = -1);
    // Session restore (translate_session.cpp): applied in stages as the model loads, the translation arrives
    // and the step is reached.
    bool m_restoreStepAsked = false;
    void restoreStep();                 // after a translation or step arrived
    void applyRestoredView();           // the step is right: selection, view options, tab
    TranslateSession restoring() const; // the session being restored
    void translateSlice(int generation, int growth, std::optional<DecodeOptions> start);
    void showTranslationSlice(const std::shared_ptr<const TranslationSnapshot>& snapshot, int generation,
                              int growth);
    void showStatus(const QString& text, bool error = false);
    void playTick();

    TranslationDocument* m_doc;
    std::shared_ptr<SessionSlot> m_slot; // dereferenced on the worker thread only
    int m_generation = 0;                // results of older translations are dropped
    std::string m_source;                // what is being translated: the input, or its sentence shown
    QString m_translatedText;            // the input box's text (trimmed) that was translated last
    SentenceBar* m_sentences = nullptr;
    int m_growth = 0; // a growing translation continues only while this is unchanged

    QLineEdit* m_input = nullptr;
    QPushButton* m_translate = nullptr;
    PlaybackBar* m_playback = nullptr;
    DecodeSettings* m_decode = nullptr;
    TranslateSelectors* m_selectors = nullptr;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_translation = nullptr;
    QLabel* m_status = nullptr;
    QString m_loadingStatus, m_statusBeforeLoad; // a failed load puts the status line back
    TranslateLenses* m_lenses = nullptr;
    TranslateLogitLens* m_logitLens = nullptr;
    TokenChips* m_sourceChips = nullptr;
    TokenChips* m_targetChips = nullptr;
    TranslateViews* m_views = nullptr;
    QElapsedTimer m_clock;
    qint64 m_lastTranslateMs = -1;
    DecodeOptions m_paragraphOptions; // a paragraph's other sentences are translated with these once the one
                                      // shown is done (so that they never hold it up on the worker)
    PrecisionNote m_precisionNote;    // bf16 loads: the measured difference from fp32
};

} // namespace attnlens::ui
