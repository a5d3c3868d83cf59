#include "ui/translate/translate_page.h"

#include "core/analysis/precision_parity.h"
#include "core/io/model_folder.h"
#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/decode_settings.h"
#include "ui/translate/sentence_bar.h"
#include "ui/translate/step_panel.h"
#include "ui/translate/token_chips.h"
#include "ui/translate/translate_logit_lens.h"
#include "ui/translate/translate_selectors.h"
#include "ui/translate/translate_session.h"
#include "ui/translate/translate_views.h"
#include "ui/translate/translation_export.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/elided_label.h"
#include "ui/widgets/flow_layout.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"
#include "ui/widgets/playback_bar.h"
#include "ui/widgets/precision_note.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSpinBox>
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

using Snapshot = std::shared_ptr<const TranslationSnapshot>;

} // namespace

TranslatePage::TranslatePage(QWidget* parent, bool loadBuiltin)
    : WorkspacePage(ModelKind::Marian, parent), m_doc(new TranslationDocument(this)),
      m_slot(std::make_shared<SessionSlot>()) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 4);
    layout->setSpacing(6);
    QWidget* bar = buildTopBar();
    layout->addWidget(bar);
    messageLine()->setAnchor(bar); // floats over the page below the bar: showing it moves nothing
    m_sentences = new SentenceBar(worker(), this); // a paragraph: the sentence shown, the whole translation
    layout->addWidget(m_sentences);
    connect(m_sentences, &SentenceBar::sentenceChosen, this, &TranslatePage::translate);
    layout->addWidget(buildTokenPanel(m_doc, this, m_sourceChips, m_targetChips, m_translation));
    layout->addWidget(buildSelectors());

    layout->addWidget(buildViews(), 1);
    layout->addWidget(statusRow(
        worker(), this, [this] { cancel(); }, m_status, true));

    connectViews();
    addStepShortcuts();
    connect(worker(), &InferenceWorker::busyChanged, this, [this](bool) { updateButtons(); });

    syncSelectors();
    updateButtons();
    if (loadBuiltin) openFirstModel({});
}

TranslatePage::~TranslatePage() = default;

// The view tabs and the step panel beside them, the lenses' tabs among them.
QWidget* TranslatePage::buildViews() {
    m_views = new TranslateViews(m_doc, this);
    m_lenses = new TranslateLenses(m_doc, worker(), m_views->tabs(), this);
    QWidget* heads = m_lenses->buildHeadsTab();
    m_views->addLensTabs(heads, m_lenses->buildDifferenceTab(), m_lenses->differenceView());
    m_logitLens = new TranslateLogitLens(
        m_doc, worker(), [this] { return m_lenses->ablation(); }, m_views->tabs());
    m_views->addLogitLensTab(m_logitLens);
    connect(m_views->tabs(), &QTabWidget::currentChanged, m_logitLens, &TranslateLogitLens::refresh);
    connect(m_doc, &TranslationDocument::snapshotChanged, m_logitLens, &TranslateLogitLens::refresh);
    connect(m_views, &TranslateViews::neuronRequested, m_lenses, &TranslateLenses::showNeuronView);
    return m_views;
}

void TranslatePage::connectViews() {
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
    if (m_status->text() == m_loadingStatus)
        m_status->setText(m_statusBeforeLoad); // not "Loading …" for ever
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
    m_decode = new DecodeSettings(bar);
    m_modelLabel = new ElidedLabel(bar); // ends in "…" on narrow windows (the whole text is in the tooltip)
    mute(m_modelLabel);
    m_modelLabel->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    row->addWidget(new QLabel(tr("German"), bar));
    row->addWidget(m_input, 1);
    row->addWidget(m_translate);
    row->addSpacing(6);
    row->addWidget(m_playback);
    row->addSpacing(6);
    row->addWidget(m_decode);

    connect(m_input, &QLineEdit::returnPressed, this, &TranslatePage::translate);
    connect(m_translate, &QPushButton::clicked, this, &TranslatePage::translate);
    connect(m_playback, &PlaybackBar::stepForward, this, &TranslatePage::stepForward);
    connect(m_playback, &PlaybackBar::stepBack, this, &TranslatePage::stepBack);
    connect(m_playback, &PlaybackBar::resetRequested, this, &TranslatePage::reset);
    connect(m_playback, &PlaybackBar::playingRequested, this, &TranslatePage::setPlaying);
    connect(m_playback, &PlaybackBar::tick, this, &TranslatePage::playTick);
    return bar;
}

// Export: the current view as PNG/SVG, the attention as JSON/CSV/NPY.
QToolButton* TranslatePage::buildExportButton(QWidget* w) {
    const auto view = [this](const QString& p) {
        return exportWith(p, [this](const QString& q) { exportView(q); });
    };
    const auto data = [this](const QString& p) {
        return exportWith(p, [this](const QString& q) { exportData(q); });
    };
    auto* button = exportButton(w, {{tr("Current view as PNG…"), tr("PNG image (*.png)"), ".png", view},
                                    {tr("Current view as SVG…"), tr("SVG image (*.svg)"), ".svg", view},
                                    {QString(), {}, {}, {}},
                                    {tr("Attention as JSON…"), tr("JSON (*.json)"), ".json", data},
                                    {tr("Shown matrix as CSV…"), tr("CSV (*.csv)"), ".csv", data},
                                    {tr("Attention tensor as NPY…"), tr("NumPy (*.npy)"), ".npy", data}});
    button->setObjectName(QStringLiteral("exportButton"));
    return button;
}

QString TranslatePage::exportBaseName() const {
    return QStringLiteral("attention");
}

QWidget* TranslatePage::buildSelectors() {
    auto* w = new QWidget(this);
    auto* row = new FlowLayout(w); // wraps in a narrow window
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
    row->addWidget(m_modelLabel, 1);
    row->addWidget(neuron);
    row->addWidget(buildExportButton(w));
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

TokenChips* TranslatePage::chips(TokenSide side) const {
    return side == TokenSide::Source ? m_sourceChips : m_targetChips;
}

// --- actions -------------------------------------------------------------------------------------

void TranslatePage::openModel(const QString& dir) {
    setPlaying(false);
    m_statusBeforeLoad = m_status->text(); // what the line says again if the load fails
    showStatus(m_loadingStatus = tr("Loading %1…").arg(dir));
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
    m_decode->setBeamWidth(width);
}
void TranslatePage::setMaxNewTokens(int n) {
    m_decode->setMaxNewTokens(n);
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
    options.numBeams = m_decode->beamWidth();
    options.maxNewTokens = m_decode->maxNewTokens();
    options.ablation = m_lenses->ablation();
    m_lenses->forgetComparison();
    const int generation = ++m_generation;
    const int growth = ++m_growth;
    m_clock.start();
    showStatus(tr("Translating…"));
    m_translatedText = text;
    m_source = m_sentences->prepare(text).toStdString(); // the sentence shown (a paragraph's), or the input
    m_paragraphOptions = options;
    translateSlice(generation, growth, options);
}

// One slice of the translation, shown as it arrives: the first (`start`: a new session) is one step, so that
// the first heatmap appears at once; the rest follows in slices of kSliceMs (a long translation on a large
// model grows on screen instead of appearing at the end).
void TranslatePage::translateSlice(int generation, int growth, std::optional<DecodeOptions> start) {
    const MarianFolder model = m_doc->model();
    worker()->run<Snapshot>(
        tr("Translating"),
        [model, slot = m_slot, start, text = m_source](const Callbacks& cb) {
            if (start)
                slot->session = std::make_shared<DecodeSession>(model.model, model.tokenizer, text, *start);
            if (!slot->session) throw Error("nothing to continue: translate a sentence first");
            slot->session->runFor(std::chrono::milliseconds(start ? 0 : kSliceMs), cb);
            return Snapshot(makeSnapshot(*slot->session, *model.model, *model.tokenizer));
        },
        [this, generation, growth](Snapshot snapshot) {
            showTranslationSlice(snapshot, generation, growth);
        });
}

void TranslatePage::showTranslationSlice(const std::shared_ptr<const TranslationSnapshot>& snapshot,
                                         int generation, int growth) {
    // A newer translation, a step/back/reset or Cancel took over.
    if (generation != m_generation || growth != m_growth) return;
    m_doc->setSnapshot(snapshot);
    if (!snapshot->finished) {
        showStatus(tr("Translating… step %1 of at most %2").arg(snapshot->step).arg(snapshot->maxNewTokens));
        emit partialResult();
        translateSlice(generation, growth, std::nullopt);
        return;
    }
    m_lastTranslateMs = m_clock.elapsed();
    m_sentences->translateParagraph(m_doc->model(), m_paragraphOptions); // the rest of a paragraph, after
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

void TranslatePage::submitStep(const QString& label, StepAction action, int target) {
    if (!m_doc->snapshot()) {
        showStatus(tr("Translate a sentence first."), true);
        return;
    }
    const MarianFolder model = m_doc->model();
    auto slot = m_slot;
    const int generation = m_generation;
    ++m_growth; // a step/back/reset stops a translation that is still growing
    worker()->run<Snapshot>(
        label,
        [model, slot, action, target](const Callbacks&) {
            if (!slot->session) throw Error("nothing to step: translate a sentence first");
            DecodeSession& s = *slot->session;
            switch (action) {
            case StepAction::Forward:
                s.step();
                break;
            case StepAction::Back:
                s.back();
                break;
            case StepAction::Reset:
                s.reset();
                break;
            case StepAction::To:
                while (s.stepCount() > target && s.back()) {
                }
                while (s.stepCount() < target && s.step()) {
                }
            }
            return Snapshot(makeSnapshot(s, *model.model, *model.tokenizer));
        },
        [this, generation](Snapshot snapshot) {
            if (generation != m_generation) return;
            m_doc->setSnapshot(snapshot);
            showStatus(snapshot->finished
                           ? tr("Step %1: finished.").arg(snapshot->step)
                           : tr("Step %1 of at most %2.").arg(snapshot->step).arg(snapshot->maxNewTokens));
            if (restoreState()) restoreStep();
            if (!restoreState()) emit resultReady();
        });
}

void TranslatePage::stepForward() {
    submitStep(tr("Step"), StepAction::Forward);
}
void TranslatePage::stepBack() {
    submitStep(tr("Step back"), StepAction::Back);
}
void TranslatePage::goToStep(int step) {
    submitStep(tr("Go to step %1").arg(step), StepAction::To, std::max(0, step));
}
void TranslatePage::reset() {
    submitStep(tr("Reset"), StepAction::Reset);
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
    m_views->showView(view);
}

TranslatePage::View TranslatePage::currentView() const {
    return m_views->currentView();
}

void TranslatePage::exportView(const QString& path) {
    m_views->exportView(path);
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
    t.sentence = m_sentences->current();
    t.wholeInput = m_sentences->wholeInput();
    t.beamWidth = m_decode->beamWidth();
    t.maxNewTokens = m_decode->maxNewTokens();
    const auto snapshot = m_doc->snapshot();
    t.translated = snapshot != nullptr;
    t.step = snapshot ? snapshot->step : -1;
    if (t.translated && m_input->text().trimmed() != m_translatedText) { // edited since: both are kept
        t.draft = m_input->text();
        t.input = m_translatedText;
    }
    if (t.translated) { // the settings of the translation shown (the boxes may have changed since)
        t.beamWidth = m_paragraphOptions.numBeams.value_or(t.beamWidth);
        t.maxNewTokens = m_paragraphOptions.maxNewTokens.value_or(t.maxNewTokens);
    }
    t.view = TranslateSession::kViews[static_cast<int>(currentView())];
    t.setAblation(m_lenses->ablation());
    if (const auto pinned = m_lenses->pinned()) std::tie(t.pinned, t.pinnedDescription) = *pinned;
    QJsonObject s = modelSessionState();
    t.write(s);
    return s;
}

QString TranslatePage::checkSession(const QJsonObject& state) const {
    SessionReader r = sessionReader(state);
    (void)TranslateSession::parse(state, r, DecodeSettings::kMaxBeam, DecodeSettings::kMaxTokens);
    return r.error();
}

TranslateSession TranslatePage::restoring() const {
    SessionReader r = sessionReader(*restoreState());
    return TranslateSession::parse(*restoreState(), r, DecodeSettings::kMaxBeam, DecodeSettings::kMaxTokens);
}

bool TranslatePage::restoreInputs(const QJsonObject& state) {
    SessionReader r = sessionReader(state);
    const TranslateSession t =
        TranslateSession::parse(state, r, DecodeSettings::kMaxBeam, DecodeSettings::kMaxTokens);
    if (!r.ok()) {
        showStatus(r.error(), true);
        return false;
    }
    setPlaying(false);
    m_restoreStepAsked = false;
    m_input->setText(t.input);
    m_sentences->prepare(t.input); // the paragraph's sentences, then the one the session showed
    m_sentences->setWholeInput(t.wholeInput);
    m_sentences->setCurrent(t.sentence);
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
        const auto draft = restoring().draft;
        endRestore();
        if (draft) m_input->setText(*draft);
        showStatus(tr("Session restored without a model: open one with File → Open model…"), true);
        return;
    }
    const TranslateSession t = restoring();
    try {
        m_lenses->forgetAblation();
        const QSignalBlocker quiet(m_lenses); // the translation below is the session's
        m_lenses->setAblation(t.ablationFor(m_doc->model().model->config()));
    } catch (const Error& e) {
        messageLine()->showError( // the restore goes on; the restored translation does not clear it
            tr("The session's heads switched off do not fit this model (%1); all heads are on.")
                .arg(QString::fromStdString(e.what())),
            true);
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
    if (t.draft) m_input->setText(*t.draft); // what was typed after the translation, back in the box
    t.applyView(*m_doc);
    syncSelectors();
    m_lenses->refreshDifference();
    showView(*parseTranslateView(t.view));
    showStatus(tr("Session restored."));
}

} // namespace attnlens::ui
