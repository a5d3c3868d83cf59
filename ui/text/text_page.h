#pragma once
// TextPage: the "Text" workspace for BERT- and GPT-2-style models (core/models/text_folder.h). Type a text
// and Run: BERT shows every head of its forward pass and, for each [MASK], the top predictions; GPT-2
// generates token by token through its KV cache — step back and forth (◀ ▶, Alt+Left/Right, play) and see
// each new token's attention over the growing context and the ten most likely next tokens at every step.
// Views: Matrix (the layer / head or the mean / max over heads), Model (all layers × heads, click one to show
// it), Lines (BertViz's head view), and the lenses every page has (ui/text/text_lenses.h): Heads (statistics,
// importance, heads switched off), Difference (pin A, compare B) and the neuron view; special tokens can be
// hidden and "##" / "Ġ" pieces merged into words; Export writes PNGs and the JSON of `attnlens-cli text`.
// Loading and inference run on the page's worker (progress, Cancel); a folder that fails to load leaves the
// previous model in place.
//
// Object names: "textInput", "runButton", "newTokens", "stepBack", "stepForward", "play", "layer", "head",
// "wordLevel", "hideSpecial", "valueWeighted", "neuronButton", "views", "matrix", "modelGrid", "lines",
// "candidates", "status", "message" (and TextLenses' names).

#include "core/analysis/map_scale.h"
#include "ui/shell/workspace_page.h"
#include "ui/text/map_lane.h"
#include "ui/text/text_candidates.h"
#include "ui/text/text_document.h"
#include "ui/text/token_text_view.h"
#include "ui/widgets/precision_note.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace attnlens::ui {

class CandidateBars;
class ChatToggle;
class SamplingButton;
class HeadCombo;
class HeatmapView;
class MapGridView;
class MapScaleBox;
class PlaybackBar;
class TextLenses;
class TextKvWhatIf;
class TextLogitLens;
class TextLinesView;

class TextPage : public WorkspacePage {
    Q_OBJECT
public:
    // modelDir empty: the built-in llama-en-tiny.
    explicit TextPage(QWidget* parent = nullptr, const QString& modelDir = {});
    ~TextPage() override;

    QString viewTitle() const override;
    QString viewExplanation() const override;

    // ModelPage
    void openModel(const QString& dir) override;
    QString modelDescription() const override { return m_doc->modelDescription(); }

    // SessionPage: model, text, tokens to generate, the step, layer, head, view and display options.
    QString sessionKey() const override { return QStringLiteral("text"); }
    QJsonObject saveSession() const override;
    QString checkSession(const QJsonObject& state) const override;

    // Actions (buttons, tests, screenshots). Asynchronous: watch resultReady() / failed().
    void setText(const QString& text);
    QString text() const;
    void setNewTokens(int n);
    void runText();     // BERT: the forward pass; GPT-2: the prompt, then newTokens() generated tokens
    void stepForward(); // GPT-2: the next generated token (generates one more at the end)
    void stepBack();
    void setPlaying(bool on);
    void cancel();

    TextDocument* document() const { return m_doc; }
    HeatmapView* matrixView() const { return m_matrix; }
    // A long text's matrix is being made (MapLane); the view shows the previous one meanwhile.
    bool matrixPending() const;
    // A long text's Lines tab is making its lines (the labels show meanwhile).
    bool linesPending() const;
    MapGridView* modelGrid() const { return m_grid; }
    QListWidget* candidatesList() const { return m_candidates->list(); }  // [MASK] predictions
    CandidateBars* candidateBars() const { return m_candidates->bars(); } // a decoder's next token
    TextLenses* lenses() const { return m_lenses; }
    TextLogitLens* logitLens() const { return m_logitLens; }
    TextKvWhatIf* kvWhatIf() const { return m_kvWhatIf; }
    QTabWidget* views() const { return m_tabs; }
    QString statusText() const;
    // Export: .png the shown view; .json the visible tokens' model_type, tokens, ids and attentions
    // [L][H][T][T] as `attnlens-cli text --json` writes them. Throws attnlens::Error.
    void exportTo(const QString& path);

protected:
    void showEvent(QShowEvent* event) override;
    void modelReady() override;
    bool restoreInputs(const QJsonObject& state) override;
    bool hasModel() const override { return m_doc->hasModel(); }
    bool hasResult() const override { return m_doc->run() != nullptr; }
    void continueRestore() override;
    void finishRestore(); // endRestore(), then the session's draft back in the text box
    void jobFailed(int id, const QString& message) override;
    void jobCancelled(int id) override;

private:
    bool m_firstShow = true;
    bool m_runWhenShown = false;
    QWidget* buildTopBar();
    QWidget* buildSelectors();
    QWidget* buildViews();
    void refresh();
    void refreshOutput();
    int hoveredInOutput() const;
    void syncControls();
    void showStatus(const QString& text, bool error = false);
    void generateMore(int count);

    struct CacheSlot; // the GPT-2 KV cache of the run shown; touched by worker jobs only
    TextDocument* m_doc;
    std::shared_ptr<CacheSlot> m_cache;
    PrecisionNote m_precisionNote; // a bf16 load's comparison with fp32; empty for fp32
    int m_generation = 0;
    QString m_ranText; // the text box's text of the run shown

    QLineEdit* m_input = nullptr;
    QPushButton* m_run = nullptr;
    QSpinBox* m_newTokens = nullptr;
    SamplingButton* m_sampling = nullptr;
    ChatToggle* m_chat = nullptr;
    PlaybackBar* m_playback = nullptr;
    QSpinBox* m_layer = nullptr;
    HeadCombo* m_head = nullptr;
    QCheckBox* m_wordLevel = nullptr;
    QCheckBox* m_hideSpecial = nullptr;
    QCheckBox* m_valueWeighted = nullptr;
    MapScaleBox* m_scale = nullptr;
    QLabel* m_modelLabel = nullptr;
    TokenTextView* m_output = nullptr; // the tokens, one line that wraps
    QLabel* m_status = nullptr;
    QTabWidget* m_tabs = nullptr;
    HeatmapView* m_matrix = nullptr;
    MapGridView* m_grid = nullptr;
    // What the grid's streamed tiles were made for (long texts, whose maps are made on demand).
    struct GridKey {
        std::weak_ptr<const TextRun> run;
        int visible = -1;
        MapScale scale;
        bool weighted = false;
        bool operator==(const GridKey& o) const {
            return !run.owner_before(o.run) && !o.run.owner_before(run) && !run.expired() &&
                   visible == o.visible && weighted == o.weighted && scale.kind == o.scale.kind &&
                   scale.percentile == o.scale.percentile && scale.ignoredKeys == o.scale.ignoredKeys;
        }
    };
    GridKey m_gridKey;
    int m_gridJob = 0; // the worker job streaming them
    void refreshModelGrid();
    // What the matrix shows (or, while m_mapLane makes it, will show).
    struct MatrixKey {
        std::weak_ptr<const TextRun> run;
        TextDocument::ShowOptions show;
        int layer = 0, key = 0;
        MapScale scale;
        bool operator==(const MatrixKey& o) const {
            return !run.owner_before(o.run) && !o.run.owner_before(run) && !run.expired() && show == o.show &&
                   layer == o.layer && key == o.key && scale.kind == o.scale.kind &&
                   scale.percentile == o.scale.percentile && scale.ignoredKeys == o.scale.ignoredKeys;
        }
    };
    MatrixKey m_matrixKey;
    MapLane* m_mapLane = nullptr;
    void refreshMatrix();
    void showMatrix(ScaledMap scaled, const QStringList& rows, const QStringList& columns);
    void selectMatrixRow();
    TextLinesView* m_lines = nullptr;
    TextCandidates* m_candidates = nullptr;
    QLabel* m_candidatesTitle = nullptr;
    TextLenses* m_lenses = nullptr;
    TextLogitLens* m_logitLens = nullptr;
    TextKvWhatIf* m_kvWhatIf = nullptr;
};

} // namespace attnlens::ui
