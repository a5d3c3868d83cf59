#include "ui/translate/translate_page.h"

#include "core/analysis/precision_parity.h"
#include "core/io/model_folder.h"
#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/beam_view.h"
#include "ui/translate/embeddings_view.h"
#include "ui/translate/line_view.h"
#include "ui/translate/matrix_view.h"
#include "ui/translate/model_grid_view.h"
#include "ui/translate/step_panel.h"
#include "ui/translate/token_chips.h"
#include "ui/translate/translate_selectors.h"
#include "ui/translate/translate_session.h"
#include "ui/translate/translation_export.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/elided_label.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"
#include "ui/widgets/playback_bar.h"
#include "ui/widgets/precision_note.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <chrono>

namespace attnlens::ui {

// The session lives here, shared by the queued jobs; only worker jobs read or write it.
struct TranslatePage::SessionSlot {
    std::shared_ptr<DecodeSession> session;
};

namespace {

constexpr const char* kPrecisionProbe = "Der Hund läuft schnell über die Straße."; // when the input is empty

// What the loading job hands to the GUI thread: the model and, for a bf16 load, its measured parity.
struct LoadedMarian {
    MarianFolder folder;
    PrecisionNote note; // empty for fp32
};

struct StepResult {
    std::shared_ptr<const TranslationSnapshot> snapshot;
};

} // namespace

std::optional<TranslatePage::View> TranslatePage::parseView(const QString& name) {
    const QString n = name.toLower();
    if (n == QLatin1String("matrix")) return View::Matrix;
    if (n == QLatin1String("model")) return View::Model;
    if (n == QLatin1String("lines") || n == QLatin1String("line")) return View::Lines;
    if (n == QLatin1String("embeddings")) return View::Embeddings;
    if (n == QLatin1String("beam")) return View::Beam;
    if (n == QLatin1String("heads")) return View::Heads;
    if (n == QLatin1String("difference") || n == QLatin1String("diff")) return View::Difference;
    return std::nullopt;
}

TranslatePage::TranslatePage(QWidget* parent, bool loadBuiltin)
    : WorkspacePage(ModelKind::Marian, parent), m_doc(new TranslationDocument(this)),
      m_slot(std::make_shared<SessionSlot>()) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 4);
    layout->setSpacing(6);
    layout->addWidget(buildTopBar());
    layout->addWidget(messageLine());

    layout->addWidget(buildTokenPanel());
    layout->addWidget(buildSelectors());

    layout->addWidget(buildViews(), 1);
    layout->addWidget(buildStatusBar());

    connectViews();
    addStepShortcuts();
    connect(worker(), &InferenceWorker::busyChanged, this, [this](bool) { updateButtons(); });

    syncSelectors();
    updateButtons();
    if (loadBuiltin) openFirstModel({});
}

TranslatePage::~TranslatePage() = default;

// --- construction ------------------------------------------------------------------------------

// Source and target token chips and the translation.
QWidget* TranslatePage::buildTokenPanel() {
    auto* chipsFrame = panelFrame(this, QStringLiteral("chipsPanel"));
    auto* chipsLayout = new QVBoxLayout(chipsFrame);
    chipsLayout->setContentsMargins(8, 5, 8, 5);
    chipsLayout->setSpacing(3);
    m_sourceChips = new TokenChips(m_doc, TokenSide::Source, chipsFrame);
    m_targetChips = new TokenChips(m_doc, TokenSide::Target, chipsFrame);
    m_translation = new QLabel(chipsFrame);
    m_translation->setObjectName(QStringLiteral("translation"));
    m_translation->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Long inputs: at most four lines of source chips and three of target chips, the rest scrolls (the
    // views below keep their room).
    auto scrolled = [chipsFrame](TokenChips* chips, int lines) {
        auto* scroll = new QScrollArea(chipsFrame);
        scroll->setObjectName(chips->objectName() + QStringLiteral("Scroll"));
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        scroll->setWidget(chips);
        const int cap = lines * TokenChips::kLineHeight + 4;
        auto fit = [scroll, cap](int h) { scroll->setFixedHeight(std::min(h, cap)); };
        QObject::connect(chips, &TokenChips::heightChanged, scroll, fit);
        fit(chips->height());
        return scroll;
    };
    chipsLayout->addWidget(scrolled(m_sourceChips, 4));
    chipsLayout->addWidget(scrolled(m_targetChips, 3));
    chipsLayout->addWidget(m_translation);
    return chipsFrame;
}

// The view tabs and the step panel beside them.
QWidget* TranslatePage::buildViews() {
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("translateSplitter")); // remembered by the main window
    m_tabs = new QTabWidget(splitter);
    m_tabs->setObjectName(QStringLiteral("views"));
    m_matrixView = new AttentionMatrixView(m_doc, m_tabs);
    m_modelView = new ModelGridView(m_doc, m_tabs);
    m_lineView = new AttentionLineView(m_doc, m_tabs);
    m_embeddingsView = new EmbeddingsView(m_doc, m_tabs);
    m_beamView = new BeamView(m_doc, m_tabs);
    m_matrixView->heatmap()->setContextMenuHook([this](QMenu& menu, HeatmapCell cell) {
        if (!cell.isValid() || !m_doc->trace()) return;
        menu.addSeparator();
        menu.addAction(tr("Inside this score…"), this, [this, cell] { showNeuronView(cell.row, cell.col); });
    });
    m_tabs->addTab(m_matrixView, tr("Matrix"));
    m_tabs->addTab(m_modelView, tr("Model"));
    m_tabs->addTab(m_lineView, tr("Lines"));
    m_tabs->addTab(m_embeddingsView, tr("Embeddings"));
    m_tabs->addTab(m_beamView, tr("Beam"));
    m_lenses = new TranslateLenses(m_doc, worker(), m_tabs, this);
    m_tabs->addTab(m_lenses->buildHeadsTab(), tr("Heads"));
    m_tabs->addTab(m_lenses->buildDifferenceTab(), tr("Difference"));
    // The step panel scrolls when the window is short (it never sets the window's minimum height).
    auto* stepScroll = new QScrollArea(splitter);
    stepScroll->setObjectName(QStringLiteral("stepPanelScroll"));
    stepScroll->setWidgetResizable(true);
    stepScroll->setFrameShape(QFrame::NoFrame);
    stepScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stepPanel = new StepPanel(m_doc, stepScroll);
    stepScroll->setWidget(m_stepPanel);
    splitter->addWidget(m_tabs);
    splitter->addWidget(stepScroll);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({900, 330});
    return splitter;
}

void TranslatePage::connectViews() {
    connect(m_modelView, &ModelGridView::headActivated, this, [this] { showView(View::Matrix); });
    connect(m_lenses, &TranslateLenses::headActivated, this, [this] { showView(View::Matrix); });
    connect(m_lenses, &TranslateLenses::showDifferenceTab, this, [this] { showView(View::Difference); });
    connect(m_lenses, &TranslateLenses::translationLineChanged, this,
            &TranslatePage::refreshTranslationLabel);
    connect(m_lenses, &TranslateLenses::notice, this, &TranslatePage::showStatus);
    connect(m_lenses, &TranslateLenses::ablationChanged, this, [this] {
        if (m_doc->hasModel() && !m_input->text().trimmed().isEmpty()) translate();
    });
    connect(m_doc, &TranslationDocument::selectionChanged, this, &TranslatePage::syncSelectors);
    connect(m_doc, &TranslationDocument::modelChanged, this, &TranslatePage::syncSelectors);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, [this] {
        refreshTranslationLabel();
        updateButtons();
    });
}

// Shortcuts for stepping (the line edit keeps plain arrows for the cursor).
void TranslatePage::addStepShortcuts() {
    m_playback->addShortcuts(this, tr("Next decoding step"), tr("Previous decoding step"));
    auto* s = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
    s->setContext(Qt::WidgetWithChildrenShortcut);
    s->setWhatsThis(tr("Translate the sentence")); // listed in Help → Keyboard shortcuts
    connect(s, &QShortcut::activated, this, &TranslatePage::translate);
}

void TranslatePage::jobFailed(int, const QString&) {
    setPlaying(false);
}

void TranslatePage::jobCancelled(int) {
    showStatus(tr("Cancelled."));
}

QWidget* TranslatePage::buildTopBar() {
    auto* bar = panelFrame(this, QStringLiteral("translateBar"));
    auto* row = new QHBoxLayout(bar);
    row->setContentsMargins(10, 5, 10, 5);
    row->setSpacing(6);
    m_input = new QLineEdit(bar);
    m_input->setObjectName(QStringLiteral("sourceInput"));
    m_input->setPlaceholderText(tr("German sentence, e.g. Wie geht es dir?"));
    m_input->setText(QStringLiteral("Wie geht es dir?"));
    m_input->setClearButtonEnabled(true);
    m_translate = new QPushButton(tr("Translate"), bar);
    m_translate->setObjectName(QStringLiteral("translateButton"));
    m_translate->setDefault(true);
    m_translate->setToolTip(tr("Translate to the end (Enter); then step back and forth"));
    m_playback = new PlaybackBar({tr("Back to step 0 (encoder only)"), tr("Step back (Alt+Left, Ctrl+[)"),
                                  tr("Play / pause the decoding step by step (Ctrl+P)"),
                                  tr("Step forward (Alt+Right, Ctrl+])")},
                                 450, bar);
    m_mode = new QComboBox(bar);
    m_mode->setObjectName(QStringLiteral("searchMode"));
    m_mode->addItem(tr("Greedy"));
    m_mode->addItem(tr("Beam search"));
    m_beamWidth = new QSpinBox(bar);
    m_beamWidth->setObjectName(QStringLiteral("beamWidth"));
    m_beamWidth->setRange(2, 16);
    m_beamWidth->setValue(4);
    m_beamWidth->setPrefix(tr("width "));
    m_beamWidth->setEnabled(false);
    m_maxLength = new QSpinBox(bar);
    m_maxLength->setObjectName(QStringLiteral("maxLength"));
    m_maxLength->setRange(1, 512);
    m_maxLength->setValue(40);
    m_maxLength->setPrefix(tr("max "));
    m_maxLength->setSuffix(tr(" tokens"));
    m_maxLength->setToolTip(tr("Most target tokens to generate (the last one is forced to </s>)"));
    m_modelLabel = new ElidedLabel(bar); // ends in "…" on narrow windows (the whole text is in the tooltip)
    mute(m_modelLabel);
    m_modelLabel->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    row->addWidget(new QLabel(tr("German"), bar));
    row->addWidget(m_input, 1);
    row->addWidget(m_translate);
    row->addSpacing(6);
    row->addWidget(m_playback);
    row->addSpacing(6);
    row->addWidget(m_mode);
    row->addWidget(m_beamWidth);
    row->addWidget(m_maxLength);

    connect(m_input, &QLineEdit::returnPressed, this, &TranslatePage::translate);
    connect(m_translate, &QPushButton::clicked, this, &TranslatePage::translate);
    connect(m_playback, &PlaybackBar::stepForward, this, &TranslatePage::stepForward);
    connect(m_playback, &PlaybackBar::stepBack, this, &TranslatePage::stepBack);
    connect(m_playback, &PlaybackBar::resetRequested, this, &TranslatePage::reset);
    connect(m_playback, &PlaybackBar::playingRequested, this, &TranslatePage::setPlaying);
    connect(m_playback, &PlaybackBar::tick, this, &TranslatePage::playTick);
    connect(m_mode, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_beamWidth->setEnabled(i == 1); });
    return bar;
}

// Export: the current view as PNG/SVG, the attention as JSON/CSV/NPY.
QToolButton* TranslatePage::buildExportButton(QWidget* w) {
    auto ask = [this](const QString& filter, const QString& suffix, bool data) {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export"), QStringLiteral("attention.") + suffix, filter);
        if (path.isEmpty()) return;
        try {
            if (data)
                exportData(path);
            else
                exportView(path);
            showStatus(tr("Wrote %1").arg(path));
        } catch (const std::exception& e) {
            showStatus(QString::fromStdString(e.what()), true);
        }
    };
    auto* exportButton = exportMenuButton(
        w, {
               {tr("Current view as PNG…"),
                [ask] { ask(tr("PNG image (*.png)"), QStringLiteral("png"), false); }},
               {tr("Current view as SVG…"),
                [ask] { ask(tr("SVG image (*.svg)"), QStringLiteral("svg"), false); }},
               {QString(), {}},
               {tr("Attention as JSON…"), [ask] { ask(tr("JSON (*.json)"), QStringLiteral("json"), true); }},
               {tr("Shown matrix as CSV…"), [ask] { ask(tr("CSV (*.csv)"), QStringLiteral("csv"), true); }},
               {tr("Attention tensor as NPY…"),
                [ask] { ask(tr("NumPy (*.npy)"), QStringLiteral("npy"), true); }},
           });
    exportButton->setObjectName(QStringLiteral("exportButton"));
    return exportButton;
}

QWidget* TranslatePage::buildSelectors() {
    auto* w = new QWidget(this);
    auto* row = new QHBoxLayout(w);
    row->setContentsMargins(2, 0, 2, 0);
    row->setSpacing(6);
    m_selectors = new TranslateSelectors(m_doc, w);
    auto* neuron = new QToolButton(w);
    neuron->setObjectName(QStringLiteral("neuronButton"));
    neuron->setText(tr("Inside a score…"));
    neuron->setToolTip(
        tr("The neuron view: one attention score of this kind taken apart — the query and key vectors, "
           "their products per dimension, q·k, ÷√d_k and the softmax (also on a matrix cell's "
           "right-click menu)"));
    connect(neuron, &QToolButton::clicked, this, [this] { showNeuronView(); });
    row->addWidget(m_selectors);
    row->addStretch(1);
    row->addWidget(m_modelLabel, 1);
    row->addWidget(neuron);
    row->addWidget(buildExportButton(w));
    return w;
}

QWidget* TranslatePage::buildStatusBar() {
    auto* w = new QWidget(this);
    auto* row = new QHBoxLayout(w);
    row->setContentsMargins(2, 0, 2, 0);
    m_status = new QLabel(w);
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setWordWrap(true);
    auto* jobStatus = new JobStatus(worker(), w, [this] { cancel(); });
    jobStatus->setTextVisible(true);
    row->addWidget(m_status, 1);
    row->addWidget(jobStatus);
    return w;
}

void TranslatePage::syncSelectors() {
    m_selectors->sync();
    m_modelLabel->setText(m_doc->modelDescription());
    m_modelLabel->setToolTip(m_precisionNote.sentence.isEmpty()
                                 ? m_doc->modelDescription()
                                 : m_doc->modelDescription() + "\n" + m_precisionNote.sentence);
}

void TranslatePage::updateButtons() {
    const auto snap = m_doc->snapshot();
    const bool has = m_doc->hasModel();
    m_translate->setEnabled(has);
    m_playback->setAvailable(snap && snap->step > 0, snap && !snap->finished, snap && !snap->finished);
}

// Errors go to the banner, as on every page; the status line keeps saying what happened last.
void TranslatePage::showStatus(const QString& text, bool error) {
    if (error) {
        showError(text);
        return;
    }
    dismissMessage();
    m_status->setText(text);
}

QString TranslatePage::statusText() const {
    return m_status->text();
}

TokenChips* TranslatePage::chips(TokenSide side) const {
    return side == TokenSide::Source ? m_sourceChips : m_targetChips;
}

// --- actions -------------------------------------------------------------------------------------

void TranslatePage::openModel(const QString& dir) {
    setPlaying(false);
    showStatus(tr("Loading %1…").arg(dir));
    auto slot = m_slot;
    ++m_generation;
    // bf16 (Compute → Precision): measured against float32 once, at load, on the sentence being shown.
    const std::string probe = m_input->text().trimmed().isEmpty() ? std::string(kPrecisionProbe)
                                                                  : m_input->text().trimmed().toStdString();
    loadModel<std::shared_ptr<LoadedMarian>>(
        dir,
        [dir, slot, probe](const Callbacks& cb) {
            slot->session.reset();
            auto loaded = std::make_shared<LoadedMarian>();
            loaded->folder = loadMarianFolder(dir.toStdString(), cb);
            if (linearPrecision() == LinearPrecision::Bf16) {
                cb.report(1.0, "checking bf16 against fp32");
                loaded->note = PrecisionNote::measure("translation", [&] {
                    return marianPrecisionParity(loaded->folder.model, loaded->folder.tokenizer, probe,
                                                 DecodeOptions{});
                });
            }
            return loaded;
        },
        [this, dir](std::shared_ptr<LoadedMarian> loaded) {
            m_precisionNote = loaded->note;
            if (loaded->folder.model->dir() !=
                (m_doc->hasModel() ? m_doc->model().model->dir() : std::filesystem::path()))
                m_lenses->forgetAblation(); // another model's heads
            m_doc->setModel(loaded->folder, dir);
            showStatus(m_precisionNote.empty()
                           ? tr("Loaded %1.").arg(m_doc->modelDescription())
                           : tr("Loaded %1. %2").arg(m_doc->modelDescription(), m_precisionNote.sentence));
        });
}

void TranslatePage::modelReady() {
    if (!m_input->text().trimmed().isEmpty()) translate();
}

void TranslatePage::setInput(const QString& text) {
    m_input->setText(text);
}
QString TranslatePage::input() const {
    return m_input->text();
}
void TranslatePage::setBeamWidth(int width) {
    m_mode->setCurrentIndex(width > 1 ? 1 : 0);
    if (width > 1) m_beamWidth->setValue(width);
}
void TranslatePage::setMaxNewTokens(int n) {
    m_maxLength->setValue(n);
}

void TranslatePage::translate() {
    if (!m_doc->hasModel()) {
        showStatus(tr("No model loaded: open a Marian model with File → Open model…"), true);
        return;
    }
    const QString text = m_input->text().trimmed();
    if (text.isEmpty()) {
        showStatus(tr("Type a German sentence first."), true);
        return;
    }
    setPlaying(false);
    DecodeOptions options;
    options.numBeams = m_mode->currentIndex() == 1 ? m_beamWidth->value() : 1;
    options.maxNewTokens = m_maxLength->value();
    options.ablation = m_lenses->ablation();
    m_lenses->forgetComparison();
    const MarianFolder model = m_doc->model();
    auto slot = m_slot;
    const int generation = ++m_generation;
    const int growth = ++m_growth;
    m_clock.start();
    showStatus(tr("Translating…"));
    // The first slice is one step, so that the first heatmap appears at once; the rest follows in
    // slices of kSliceMs, each shown as it arrives (a long translation on a large model grows on
    // screen instead of appearing at the end).
    worker()->run<StepResult>(
        tr("Translating"),
        [model, slot, options, text = text.toStdString()](const Callbacks& cb) {
            auto session = std::make_shared<DecodeSession>(model.model, model.tokenizer, text, options);
            slot->session = session;
            session->runFor(std::chrono::milliseconds(0), cb);
            return StepResult{makeSnapshot(*session, *model.model, *model.tokenizer)};
        },
        [this, generation, growth](StepResult r) { showTranslationSlice(r.snapshot, generation, growth); });
}

void TranslatePage::continueTranslation(int generation, int growth) {
    const MarianFolder model = m_doc->model();
    auto slot = m_slot;
    worker()->run<StepResult>(
        tr("Translating"),
        [model, slot](const Callbacks& cb) {
            if (!slot->session) throw Error("nothing to continue: translate a sentence first");
            slot->session->runFor(std::chrono::milliseconds(kSliceMs), cb);
            return StepResult{makeSnapshot(*slot->session, *model.model, *model.tokenizer)};
        },
        [this, generation, growth](StepResult r) { showTranslationSlice(r.snapshot, generation, growth); });
}

void TranslatePage::showTranslationSlice(const std::shared_ptr<const TranslationSnapshot>& snapshot,
                                         int generation, int growth) {
    // A newer translation, a step/back/reset or Cancel took over.
    if (generation != m_generation || growth != m_growth) return;
    m_doc->setSnapshot(snapshot);
    if (!snapshot->finished) {
        showStatus(tr("Translating… step %1 of at most %2").arg(snapshot->step).arg(snapshot->maxNewTokens));
        emit partialResult();
        continueTranslation(generation, growth);
        return;
    }
    m_lastTranslateMs = m_clock.elapsed();
    if (m_lenses->ablation().any()) m_lenses->compareWithAllHeads();
    if (restoreState()) { // a session being restored: its step, then its view
        restoreStep();
        if (!restoreState()) emit resultReady();
        return;
    }
    showStatus(tr("Translated in %1 ms: %2 steps, %3. Step back with ◀ or Alt+Left.")
                   .arg(m_lastTranslateMs)
                   .arg(snapshot->step)
                   .arg(snapshot->numBeams > 1 ? tr("beam width %1").arg(snapshot->numBeams) : tr("greedy")) +
               (m_precisionNote.empty() ? QString() : QStringLiteral(" ") + m_precisionNote.sentence));
    emit resultReady();
}

// action: 0 forward, 1 back, 2 reset, 3 to step `target`
void TranslatePage::submitStep(const QString& label, int action, int target) {
    if (!m_doc->snapshot()) {
        showStatus(tr("Translate a sentence first."), true);
        return;
    }
    const MarianFolder model = m_doc->model();
    auto slot = m_slot;
    const int generation = m_generation;
    ++m_growth; // a step/back/reset stops a translation that is still growing
    worker()->run<StepResult>(
        label,
        [model, slot, action, target](const Callbacks&) {
            if (!slot->session) throw Error("nothing to step: translate a sentence first");
            DecodeSession& s = *slot->session;
            if (action == 0)
                s.step();
            else if (action == 1)
                s.back();
            else if (action == 2)
                s.reset();
            else {
                while (s.stepCount() > target && s.back()) {
                }
                while (s.stepCount() < target && s.step()) {
                }
            }
            return StepResult{makeSnapshot(s, *model.model, *model.tokenizer)};
        },
        [this, generation](StepResult r) {
            if (generation != m_generation) return;
            m_doc->setSnapshot(r.snapshot);
            showStatus(
                r.snapshot->finished
                    ? tr("Step %1: finished.").arg(r.snapshot->step)
                    : tr("Step %1 of at most %2.").arg(r.snapshot->step).arg(r.snapshot->maxNewTokens));
            if (restoreState()) restoreStep();
            if (!restoreState()) emit resultReady();
        });
}

void TranslatePage::stepForward() {
    submitStep(tr("Step"), 0);
}
void TranslatePage::stepBack() {
    submitStep(tr("Step back"), 1);
}
void TranslatePage::goToStep(int step) {
    submitStep(tr("Go to step %1").arg(step), 3, std::max(0, step));
}
void TranslatePage::reset() {
    submitStep(tr("Reset"), 2);
}

void TranslatePage::setPlaying(bool on) {
    if (on && !m_doc->snapshot()) on = false;
    if (on) {
        // Play from the start when the decoding is already complete.
        if (m_doc->snapshot()->finished) reset();
    }
    m_playback->setPlaying(on);
}

bool TranslatePage::isPlaying() const {
    return m_playback->isPlaying();
}

void TranslatePage::playTick() {
    if (worker()->isBusy()) return;
    const auto snap = m_doc->snapshot();
    if (!snap || snap->finished) {
        setPlaying(false);
        return;
    }
    stepForward();
}

void TranslatePage::cancel() {
    setPlaying(false);
    ++m_growth; // a slice already delivered must not queue the next one
    worker()->cancel();
}

void TranslatePage::refreshTranslationLabel() {
    QString tip;
    m_translation->setText(m_lenses->translationLine(tip));
    m_translation->setToolTip(tip);
}

QString TranslatePage::ablationDetails() const {
    return m_translation->toolTip();
}

void TranslatePage::showView(View view) {
    m_tabs->setCurrentIndex(static_cast<int>(view));
}
TranslatePage::View TranslatePage::currentView() const {
    return static_cast<View>(m_tabs->currentIndex());
}

QWidget* TranslatePage::currentExportWidget() const {
    switch (currentView()) {
    case View::Matrix:
        return m_matrixView->heatmap();
    case View::Model:
        return m_modelView->canvas();
    case View::Lines:
        return m_lineView->canvas();
    case View::Embeddings:
        return m_embeddingsView;
    case View::Beam:
        return m_beamView->canvas();
    case View::Heads:
        return m_lenses->headsView();
    case View::Difference:
        return m_lenses->differenceView();
    }
    return m_tabs->currentWidget();
}

void TranslatePage::exportView(const QString& path) {
    if (currentView() != View::Matrix)
        return saveView(path, currentExportWidget(), m_tabs->tabText(m_tabs->currentIndex()));
    if (m_doc->currentMatrix().empty()) throw Error(path.toStdString() + ": the matrix view is empty");
    saveView(path, *m_matrixView->heatmap(), m_matrixView->title());
}

void TranslatePage::exportData(const QString& path) {
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("json"))
        writeAttentionJson(path, *m_doc);
    else if (ext == QLatin1String("csv"))
        writeMatrixCsv(path, m_doc->currentMatrix());
    else if (ext == QLatin1String("npy"))
        writeAttentionNpy(path, *m_doc);
    else
        throw Error(path.toStdString() + ": attention exports as .json, .csv or .npy");
}

// --- session (ui/translate/translate_session.h) ------------------------------------------------

QJsonObject TranslatePage::saveSession() const {
    TranslateSession t = TranslateSession::capture(*m_doc);
    t.input = m_input->text();
    t.beamWidth = m_mode->currentIndex() == 1 ? m_beamWidth->value() : 1;
    t.maxNewTokens = m_maxLength->value();
    const auto snapshot = m_doc->snapshot();
    t.translated = snapshot != nullptr;
    t.step = snapshot ? snapshot->step : -1;
    t.view = TranslateSession::kViews[static_cast<int>(currentView())];
    t.setAblation(m_lenses->ablation());
    if (const auto pinned = m_lenses->pinned()) std::tie(t.pinned, t.pinnedDescription) = *pinned;
    QJsonObject s;
    saveModelDir(s, m_doc->modelDir(), ModelKind::Marian);
    t.write(s);
    return s;
}

QString TranslatePage::checkSession(const QJsonObject& state) const {
    SessionReader r(state, QStringLiteral("pages.translate"));
    (void)TranslateSession::parse(state, r, m_beamWidth->maximum(), m_maxLength->maximum());
    return r.error();
}

TranslateSession TranslatePage::restoring() const {
    SessionReader r(*restoreState(), QStringLiteral("pages.translate"));
    return TranslateSession::parse(*restoreState(), r, m_beamWidth->maximum(), m_maxLength->maximum());
}

bool TranslatePage::restoreInputs(const QJsonObject& state) {
    SessionReader r(state, QStringLiteral("pages.translate"));
    const TranslateSession t =
        TranslateSession::parse(state, r, m_beamWidth->maximum(), m_maxLength->maximum());
    if (!r.ok()) {
        showStatus(r.error(), true);
        return false;
    }
    setPlaying(false);
    m_restoreStepAsked = false;
    m_input->setText(t.input);
    setBeamWidth(t.beamWidth);
    if (t.maxNewTokens > 0) setMaxNewTokens(t.maxNewTokens);
    if (t.pinned)
        m_lenses->setPinned(*t.pinned, t.pinnedDescription);
    else
        m_lenses->unpin();
    return true;
}

// The session's model is here: the heads off, then the translation (then the step and the view) or the view.
void TranslatePage::continueRestore() {
    if (!restoreState()) return;
    if (!m_doc->hasModel()) { // nothing to translate with: the settings and the text are back, nothing more
        endRestore();
        showStatus(tr("Session restored without a model: open one with File → Open model…"), true);
        return;
    }
    const TranslateSession t = restoring();
    try {
        m_lenses->forgetAblation();
        const QSignalBlocker quiet(m_lenses); // the translation below is the session's
        m_lenses->setAblation(t.ablationFor(m_doc->model().model->config()));
    } catch (const Error& e) {
        messageLine()->showError( // the restore goes on
            tr("The session's heads switched off do not fit this model (%1); all heads are on.")
                .arg(QString::fromStdString(e.what())));
    }
    if (t.translated && !t.input.trimmed().isEmpty())
        translate();
    else
        applyRestoredView();
}

void TranslatePage::restoreStep() {
    if (!restoreState()) return;
    const auto snapshot = m_doc->snapshot();
    const int target = restoring().step;
    if (snapshot && target >= 0 && snapshot->step != target && !m_restoreStepAsked) {
        m_restoreStepAsked = true; // once: a shorter decoding than saved stays where it ends
        goToStep(target);
        return;
    }
    applyRestoredView();
}

void TranslatePage::applyRestoredView() {
    if (!restoreState()) return;
    const TranslateSession t = restoring();
    endRestore();
    t.applyView(*m_doc);
    syncSelectors();
    m_lenses->refreshDifference();
    showView(*parseView(t.view));
    showStatus(tr("Session restored."));
}

} // namespace attnlens::ui
