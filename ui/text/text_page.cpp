#include "ui/text/text_page.h"

#include "core/export/tensor_json.h"
#include "core/util/error.h"
#include "ui/render/heatmap_image.h"
#include "ui/shell/inference_worker.h"
#include "ui/text/chat_toggle.h"
#include "ui/text/sampling_button.h"
#include "ui/text/text_candidates.h"
#include "ui/text/text_embeddings_view.h"
#include "ui/text/text_kv_whatif.h"
#include "ui/text/text_lenses.h"
#include "ui/text/text_lines_view.h"
#include "ui/text/text_logit_lens.h"
#include "ui/text/text_session.h"
#include "ui/vision/map_grid_view.h"
#include "ui/widgets/elided_label.h"
#include "ui/widgets/flow_layout.h"
#include "ui/widgets/head_toggle_bar.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/map_scale_box.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"
#include "ui/widgets/playback_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace attnlens::ui {

// The GPT-2 cache of the run on screen: only worker jobs read or write it (they run one at a time, in order).
struct TextPage::CacheSlot {
    TextCache cache;
    std::shared_ptr<const TextRun> run; // the run the cache belongs to
};

namespace {

constexpr const char* kDefaultText = "The weather is nice today and we are going to";
// The generated text's area: as tall as its text, at most six lines (then it scrolls).
class OutputScroll : public QScrollArea {
public:
    using QScrollArea::QScrollArea;
    void fit() {
        const int lines = fontMetrics().lineSpacing() * 6 + 4;
        const int h = widget() ? widget()->heightForWidth(std::max(1, width())) : 0;
        setFixedHeight(std::clamp(h, 0, lines));
    }

protected:
    void resizeEvent(QResizeEvent* event) override {
        QScrollArea::resizeEvent(event);
        if (event->oldSize().width() != event->size().width()) fit();
    }
};

enum Tab {
    kMatrixTab,
    kModelTab,
    kLinesTab,
    kHeadsTab,
    kDifferenceTab,
    kEmbeddingsTab,
    kLogitLensTab,
    kKvTab
};

} // namespace

TextPage::TextPage(QWidget* parent, const QString& modelDir)
    : WorkspacePage(ModelKind::Text, parent), m_doc(new TextDocument(this)),
      m_cache(std::make_shared<CacheSlot>()), m_mapLane(new MapLane(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 4);
    layout->setSpacing(6);
    QWidget* bar = buildTopBar();
    layout->addWidget(bar);
    messageLine()->setAnchor(bar); // floats over the page below the bar: showing it moves nothing
    m_output = new TokenTextView(this);
    m_output->setObjectName(QStringLiteral("output"));
    // A long text scrolls in at most six lines: the views keep the page.
    auto* outputScroll = new OutputScroll(this);
    outputScroll->setObjectName(QStringLiteral("outputScroll"));
    outputScroll->setWidget(m_output);
    outputScroll->setWidgetResizable(true);
    outputScroll->setFrameShape(QFrame::NoFrame);
    outputScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(outputScroll);
    layout->addWidget(buildSelectors());
    layout->addWidget(buildViews(), 1);
    layout->addWidget(statusRow(
        worker(), this, [this] { cancel(); }, m_status));

    m_playback->addShortcuts(this, tr("Next generated token"), tr("Previous generated token"));

    connect(m_doc, &TextDocument::runChanged, this, &TextPage::refresh);
    connect(m_doc, &TextDocument::selectionChanged, this, &TextPage::refresh);
    connect(m_doc, &TextDocument::modelChanged, this, &TextPage::syncControls);
    connect(m_doc, &TextDocument::hoverChanged, this, [this] {
        m_output->setHovered(hoveredInOutput());
        m_lines->update();
    });
    connect(worker(), &InferenceWorker::busyChanged, this, [this](bool) { syncControls(); });
    // Streamed thumbnails that did not all arrive are made again the next time the grid is shown.
    const auto unfinished = [this](int id) {
        if (id == m_gridJob) m_gridKey = {};
    };
    connect(worker(), &InferenceWorker::cancelled, this, unfinished);
    connect(worker(), &InferenceWorker::failed, this,
            [unfinished](int id, const QString&) { unfinished(id); });
    m_input->setText(QString::fromLatin1(kDefaultText));
    syncControls();
    openFirstModel(modelDir);
}

TextPage::~TextPage() = default;

// The built-in model loads with the window, but its first run (a generation) waits until the page is first
// shown: a user who never opens the Text page pays nothing for it, and the other pages start alone.
void TextPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (!m_firstShow) return;
    m_firstShow = false;
    if (m_runWhenShown && !m_doc->run()) runText();
    m_runWhenShown = false;
}

QWidget* TextPage::buildTopBar() {
    QFrame* bar = panelFrame(this, QStringLiteral("topBar"));
    auto* row = new QHBoxLayout(bar);
    row->setContentsMargins(8, 6, 8, 6);
    m_input = new QLineEdit(bar);
    m_input->setObjectName(QStringLiteral("textInput"));
    m_input->setPlaceholderText(tr("Type English text; BERT: put [MASK] where a word is missing"));
    m_input->setClearButtonEnabled(true);
    connect(m_input, &QLineEdit::returnPressed, this, &TextPage::runText);
    m_run = new QPushButton(tr("Run"), bar);
    m_run->setObjectName(QStringLiteral("runButton"));
    connect(m_run, &QPushButton::clicked, this, &TextPage::runText);
    m_newTokens = new QSpinBox(bar);
    m_newTokens->setObjectName(QStringLiteral("newTokens"));
    m_newTokens->setRange(0, 512);
    m_newTokens->setValue(12);
    m_newTokens->setPrefix(tr("generate ")), m_newTokens->setSuffix(tr(" tokens"));
    m_sampling = new SamplingButton(bar), m_chat = new ChatToggle(bar);
    m_playback = new PlaybackBar({{},
                                  tr("One generated token back (Alt+Left)"),
                                  tr("Play the generated tokens one by one"),
                                  tr("The next generated token; at the end, one more (Alt+Right)")},
                                 400, bar);
    connect(m_playback, &PlaybackBar::stepBack, this, &TextPage::stepBack);
    connect(m_playback, &PlaybackBar::stepForward, this, &TextPage::stepForward);
    connect(m_playback, &PlaybackBar::playingRequested, this, &TextPage::setPlaying);
    connect(m_playback, &PlaybackBar::tick, this, [this] {
        if (isBusy()) return;
        if (!m_doc->run() || m_doc->step() >= m_doc->run()->generated()) return setPlaying(false);
        m_doc->setStep(m_doc->step() + 1);
    });
    mute(m_modelLabel = new ElidedLabel(bar)); // ends in "…" on narrow windows
    row->addWidget(new QLabel(tr("Text"), bar));
    row->addWidget(m_input, 1);
    row->addWidget(m_run);
    row->addWidget(m_chat), row->addWidget(m_newTokens), row->addWidget(m_sampling);
    row->addWidget(m_playback);
    row->addWidget(m_modelLabel, 1);
    row->addWidget(exportMenuButton(bar, {{tr("This view as PNG…"),
                                           [this] {
                                               const QString path = QFileDialog::getSaveFileName(
                                                   this, tr("Export view"), {}, tr("PNG (*.png)"));
                                               if (!path.isEmpty()) try {
                                                       exportTo(path);
                                                   } catch (const Error& e) {
                                                       showError(e.what());
                                                   }
                                           }},
                                          {tr("The run as JSON (tokens, ids, attentions)…"), [this] {
                                               const QString path = QFileDialog::getSaveFileName(
                                                   this, tr("Export JSON"), {}, tr("JSON (*.json)"));
                                               if (!path.isEmpty()) try {
                                                       exportTo(path);
                                                   } catch (const Error& e) {
                                                       showError(e.what());
                                                   }
                                           }}}));
    return bar;
}

QWidget* TextPage::buildSelectors() {
    auto* w = new QWidget(this);
    auto* row = new FlowLayout(w); // wraps in a narrow window
    row->setContentsMargins(0, 0, 0, 0);
    m_layer = new QSpinBox(w);
    m_layer->setObjectName(QStringLiteral("layer"));
    m_layer->setPrefix(tr("layer "));
    connect(m_layer, &QSpinBox::valueChanged, m_doc, &TextDocument::setLayer);
    m_head = new HeadCombo(w);
    m_head->setObjectName(QStringLiteral("head"));
    connect(m_head, &HeadCombo::selectionChanged, this, [this](HeadSelection heads) {
        m_doc->setFusion(heads.fusion);
        m_doc->setHead(heads.head);
    });
    m_wordLevel = new QCheckBox(tr("Words"), w);
    m_wordLevel->setObjectName(QStringLiteral("wordLevel"));
    m_wordLevel->setToolTip(
        tr("Merge \"##\" pieces (BERT) and pieces without a leading space (GPT-2) into words: keys "
           "summed, queries averaged"));
    connect(m_wordLevel, &QCheckBox::toggled, m_doc, &TextDocument::setWordLevel);
    m_hideSpecial = new QCheckBox(tr("Hide special tokens"), w);
    m_hideSpecial->setObjectName(QStringLiteral("hideSpecial"));
    m_hideSpecial->setToolTip(
        tr("Hide [CLS], [SEP] and <|endoftext|> — the attention sinks — and renormalise each row over "
           "the tokens left ([MASK] stays)"));
    connect(m_hideSpecial, &QCheckBox::toggled, m_doc, &TextDocument::setHideSpecial);
    m_valueWeighted =
        valueWeightedBox(w, tr("key"), tr("Per head, before heads are fused or tokens hidden."));
    connect(m_valueWeighted, &QCheckBox::toggled, m_doc, &TextDocument::setValueWeighted);
    row->addWidget(new QLabel(tr("Show"), w));
    row->addWidget(m_layer);
    row->addWidget(m_head);
    row->addWidget(m_wordLevel);
    row->addWidget(m_hideSpecial);
    row->addWidget(m_valueWeighted);
    m_scale = new MapScaleBox(w);
    connect(m_scale, &MapScaleBox::changed, this, &TextPage::refresh);
    row->addWidget(m_scale);
    auto* neuron = new QPushButton(tr("Neuron view…"), w);
    neuron->setObjectName(QStringLiteral("neuronButton"));
    neuron->setToolTip(
        tr("One attention score of the shown layer and head taken apart: q, k, q·k, ÷√d, softmax"));
    connect(neuron, &QPushButton::clicked, this, [this] { m_lenses->showNeuronView(); });
    row->addWidget(neuron);
    return w;
}

QWidget* TextPage::buildViews() {
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("textSplitter"));
    m_tabs = new QTabWidget(split);
    m_tabs->setObjectName(QStringLiteral("views"));
    m_matrix = new HeatmapView(m_tabs);
    m_matrix->setObjectName(QStringLiteral("matrix"));
    m_matrix->setAxisTitles(tr("query (attends)"), tr("key (attended to)"));
    m_matrix->setMaskedText(tr("off")); // the first token's column under "Ignore first token"
    connect(m_matrix, &HeatmapView::rowSelected, m_doc, &TextDocument::setSelectedToken);
    // Hover linking: the row under the pointer in the matrix or the Lines view is the token both views and
    // the text line highlight.
    connect(m_matrix, &HeatmapView::cellHovered, m_doc,
            [this](int row, int) { m_doc->setHoveredToken(row); });
    m_tabs->addTab(m_matrix, tr("Matrix"));
    m_grid = new MapGridView(m_tabs);
    m_grid->setObjectName(QStringLiteral("modelGrid"));
    connect(m_grid, &MapGridView::tileClicked, this, [this](int index) {
        if (!m_doc->model()) return;
        const int heads = m_doc->model()->heads();
        m_doc->setLayer(index / heads);
        m_doc->setHead(index % heads);
        m_tabs->setCurrentIndex(kMatrixTab);
    });
    m_tabs->addTab(m_grid, tr("Model (layers × heads)"));
    // Lines: the heads' legend and switches (as on Translate) above the view.
    auto* linesTab = new QWidget(m_tabs);
    auto* linesLayout = new QVBoxLayout(linesTab);
    linesLayout->setContentsMargins(6, 6, 6, 0);
    auto* toggles = new HeadToggleBar(tr("Hover a token to see only its lines."), linesTab);
    auto* scroll = new QScrollArea(linesTab);
    scroll->setWidgetResizable(true);
    m_lines = new TextLinesView(m_doc, toggles, scroll);
    scroll->setWidget(m_lines);
    linesLayout->addWidget(toggles);
    linesLayout->addWidget(scroll, 1);
    m_tabs->addTab(linesTab, tr("Lines"));
    m_lenses = new TextLenses(m_doc, worker(), this);
    m_tabs->addTab(m_lenses->buildHeadsTab(m_tabs), tr("Heads"));
    m_tabs->addTab(m_lenses->buildDifferenceTab(m_tabs), tr("Difference"));
    m_tabs->addTab(new TextEmbeddingsView(m_doc, m_tabs), tr("Embeddings"));
    m_logitLens = new TextLogitLens(m_doc, worker(), m_tabs);
    m_tabs->addTab(m_logitLens, tr("Logit lens"));
    connect(m_logitLens, &TextLogitLens::headActivated, this, [this](int layer, int head) {
        m_doc->setLayer(layer);
        m_doc->setHead(head);
        m_tabs->setCurrentIndex(kMatrixTab);
    });
    connect(m_logitLens, &TextLogitLens::notice, this, &TextPage::showStatus);
    m_kvWhatIf = new TextKvWhatIf(m_doc, worker(), m_tabs);
    m_tabs->addTab(m_kvWhatIf, tr("KV cache"));
    connect(m_kvWhatIf, &TextKvWhatIf::notice, this, &TextPage::showStatus);
    const CacheSource source = [cache = m_cache](const std::shared_ptr<const TextRun>& run) {
        return cache->run == run ? &cache->cache : nullptr;
    };
    m_logitLens->setCacheSource(source);
    m_kvWhatIf->setCacheSource(source);
    connect(m_lenses, &TextLenses::ablationChanged, this, [this] {
        if (m_doc->run()) runText();
    });
    connect(m_lenses, &TextLenses::headActivated, this, [this](int layer, int head) {
        m_doc->setLayer(layer);
        m_doc->setHead(head);
        m_tabs->setCurrentIndex(kMatrixTab);
    });
    connect(m_lenses, &TextLenses::notice, this, &TextPage::showStatus);
    connect(m_tabs, &QTabWidget::currentChanged, this, &TextPage::refresh);
    auto* side = new QWidget(split);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(4, 0, 0, 0);
    m_candidatesTitle = caption(tr("Next token"), side);
    m_candidates = new TextCandidates(m_doc, side);
    sideLayout->addWidget(m_candidatesTitle);
    sideLayout->addWidget(m_candidates, 1);
    split->addWidget(m_tabs);
    split->addWidget(side);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    return split;
}

void TextPage::jobFailed(int, const QString& message) {
    setPlaying(false);
    showStatus(message, true);
}

void TextPage::jobCancelled(int) {
    showStatus(tr("Cancelled."));
}

void TextPage::showStatus(const QString& text, bool error) {
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: %1").arg(errorColor(palette()).name())
                                  : QString());
}

QString TextPage::statusText() const {
    return m_status->text();
}
void TextPage::setText(const QString& text) {
    m_input->setText(text);
}
QString TextPage::text() const {
    return m_input->text();
}
void TextPage::setNewTokens(int n) {
    m_newTokens->setValue(n);
}

void TextPage::openModel(const QString& dir) {
    setPlaying(false);
    ++m_generation;
    showStatus(tr("Loading %1…").arg(dir));
    auto cache = m_cache;
    // bf16 (Compute → Precision): measured against float32 once, at load, on the start of the text shown
    const std::string probe = m_input->text().trimmed().isEmpty() ? std::string("The quick brown fox jumps.")
                                                                  : m_input->text().trimmed().toStdString();
    struct Loaded {
        std::shared_ptr<const TextFolder> folder;
        PrecisionNote note;
    };
    loadModel<Loaded>(
        dir,
        [dir, cache, probe](const Callbacks& cb) {
            cache->run.reset();
            Loaded loaded{std::make_shared<const TextFolder>(loadTextFolder(dir.toStdString(), cb)), {}};
            if (linearPrecision() == LinearPrecision::Bf16) {
                cb.report(1.0, "checking bf16 against fp32");
                loaded.note = PrecisionNote::measure(textParityResult(*loaded.folder->model), [&] {
                    const TextFolder& f = *loaded.folder;
                    auto ids = f.encode(probe).ids; // its first 128 tokens: the check stays short
                    ids.resize(std::min<size_t>(ids.size(), std::min(128, f.maxPositions())));
                    return textPrecisionParity(*f.model, ids, [&](int id) { return f.tokenText(id); });
                });
            }
            return loaded;
        },
        [this](Loaded loaded) {
            m_precisionNote = loaded.note;
            m_doc->setModel(std::move(loaded.folder));
            showStatus(m_precisionNote.empty()
                           ? tr("Loaded %1.").arg(m_doc->modelDescription())
                           : tr("Loaded %1. %2").arg(m_doc->modelDescription(), m_precisionNote.sentence));
        });
}

void TextPage::modelReady() {
    if (!m_input->text().trimmed().isEmpty() && (isVisible() || m_doc->run() || !m_firstShow))
        runText();
    else
        m_runWhenShown = !m_input->text().trimmed().isEmpty(); // the first run waits for the page to show
}

void TextPage::runText() {
    m_runWhenShown = false;
    if (!m_doc->hasModel()) {
        showStatus(tr("No model loaded: open a BERT, GPT-2 or Llama-style folder with File → Open model…"),
                   true);
        return;
    }
    const QString text = m_input->text();
    if (text.trimmed().isEmpty()) {
        showStatus(tr("Type a text first."), true);
        return;
    }
    setPlaying(false);
    const auto folder = m_doc->model();
    int count = folder->decoderOnly() ? m_newTokens->value() : 0;
    if (restoreState() && folder->decoderOnly())
        count = restoreState()->value("generated").toInt(count); // as saved
    const int generation = ++m_generation;
    auto cache = m_cache;
    worker()->run<std::shared_ptr<const TextRun>>(
        folder->decoderOnly() ? tr("Generating") : tr("Running"),
        [folder, cache, count, text = text.toStdString(), off = m_lenses->ablated(),
         sampling = m_sampling->sampling(), chat = m_chat->chatOn(),
         budget = m_doc->captureBudget()](const Callbacks& cb) {
            cache->run = nullptr; // from here the cache holds the new run's entries, whatever becomes of it
            auto run = TextDocument::makeRun(*folder, text, &cache->cache, cb, off, sampling, chat, budget);
            if (count > 0) run = TextDocument::extendRun(*folder, *run, count, cache->cache, cb);
            cache->run = run;
            return run;
        },
        [this, generation, text](std::shared_ptr<const TextRun> run) {
            if (generation != m_generation) return;
            m_ranText = text;
            m_doc->setRun(std::move(run));
            const auto& r = *m_doc->run();
            const QString off = r.offHeads.empty()
                                    ? QString()
                                    : tr(" %n head(s) switched off.", nullptr, int(r.offHeads.size()));
            showStatus(
                (m_doc->model()->decoderOnly()
                     ? tr("%1 prompt tokens, %2 generated. Step back with ◀ or Alt+Left.")
                           .arg(r.promptLength)
                           .arg(r.generated())
                     : tr("%1 tokens.").arg(r.promptLength)) +
                off + (m_precisionNote.empty() ? QString() : QStringLiteral(" ") + m_precisionNote.sentence));
            if (restoreState()) {
                const int step = restoreState()->value("step").toInt(-1);
                if (step >= 0) m_doc->setStep(step);
                finishRestore();
            }
            emit resultReady();
        });
}

void TextPage::generateMore(int count) {
    const auto folder = m_doc->model();
    const auto shown = m_doc->run();
    if (!folder || !folder->decoderOnly() || !shown) return;
    const int generation = m_generation;
    auto cache = m_cache;
    worker()->run<std::shared_ptr<const TextRun>>(
        tr("Generating"),
        [folder, cache, shown, count](const Callbacks& cb) {
            if (cache->run != shown) throw Error("the run changed; press Run again");
            cache->run = nullptr; // the cache runs past the shown run until the new one is made
            auto run = TextDocument::extendRun(*folder, *shown, count, cache->cache, cb);
            cache->run = run;
            return run;
        },
        [this, generation](std::shared_ptr<const TextRun> run) {
            if (generation != m_generation) return;
            const int before = m_doc->run() ? m_doc->run()->generated() : 0;
            m_doc->setRun(std::move(run));
            if (m_doc->run()->generated() == before)
                showStatus(tr("Generation ended (end of text or the model's last position)."));
            emit resultReady();
        });
}

void TextPage::stepForward() {
    if (!m_doc->run()) return;
    if (m_doc->step() < m_doc->run()->generated()) {
        m_doc->setStep(m_doc->step() + 1);
        emit resultReady();
    } else {
        generateMore(1);
    }
}

void TextPage::stepBack() {
    if (!m_doc->run() || m_doc->step() == 0) return;
    m_doc->setStep(m_doc->step() - 1);
    emit resultReady();
}

void TextPage::setPlaying(bool on) {
    if (on && (!m_doc->run() || !m_doc->model()->decoderOnly())) on = false;
    if (on && m_doc->step() >= m_doc->run()->generated()) m_doc->setStep(0);
    m_playback->setPlaying(on);
}

void TextPage::cancel() {
    setPlaying(false);
    ++m_generation;
    worker()->cancel();
}

void TextPage::syncControls() {
    const auto& folder = m_doc->model();
    const bool decoder = folder && folder->decoderOnly();
    m_newTokens->setVisible(decoder), m_sampling->setVisible(decoder), m_chat->setFolder(folder.get());
    m_playback->setVisible(decoder);
    m_run->setText(decoder ? tr("Generate") : tr("Run"));
    m_modelLabel->setText(m_doc->modelDescription());
    m_modelLabel->setToolTip(m_precisionNote.empty()
                                 ? m_doc->modelDetails()
                                 : m_doc->modelDetails() + "\n" + m_precisionNote.sentence);
    const QSignalBlocker b1(m_layer), b2(m_head);
    m_layer->setRange(0, folder ? folder->layers() - 1 : 0);
    m_layer->setValue(m_doc->layer());
    m_head->setHeadCount(folder ? folder->heads() : 0, false, folder ? folder->model->kvHeads() : 0);
    m_head->setSelection({m_doc->head(), m_doc->fusion()});
    // Run stays available while a job runs: a new run supersedes the one in progress (its result is dropped).
    const bool busy = worker()->isBusy();
    m_run->setEnabled(folder != nullptr);
    const auto& run = m_doc->run();
    m_playback->setAvailable(run && m_doc->step() > 0, run != nullptr && !busy, true);
    m_valueWeighted->setEnabled(!run || m_doc->canValueWeight()); // a family whose values are not kept: off
    m_candidatesTitle->setText(decoder ? tr("Next token (top 10)") : tr("[MASK] predictions (top 5)"));
    // an encoder without an LM head (BertModel, a pipeline's CLIP text encoder) predicts nothing: no panel
    const bool predicts = folder && folder->hasLmHead();
    m_candidatesTitle->setVisible(predicts);
    m_candidates->setVisible(predicts);
}

void TextPage::refresh() {
    syncControls();
    if (m_tabs->currentIndex() == kHeadsTab) m_lenses->refreshHeads();
    if (m_tabs->currentIndex() == kDifferenceTab) m_lenses->refreshDifference();
    if (m_tabs->currentIndex() == kLogitLensTab) m_logitLens->refresh();
    if (m_tabs->currentIndex() == kKvTab) m_kvWhatIf->refresh();
    const auto& run = m_doc->run();
    if (!run) {
        m_matrixKey = {};
        m_mapLane->cancel();
        m_matrix->setMatrix(RowMatrix());
        m_grid->clear();
        m_lines->refresh();
        m_output->clear();
        m_candidates->clear();
        return;
    }
    refreshOutput();
    refreshMatrix();
    if (m_tabs->currentIndex() == kModelTab) refreshModelGrid();
    if (m_tabs->currentIndex() == kLinesTab) m_lines->refresh();
    m_candidates->refresh();
}

bool TextPage::matrixPending() const {
    return m_mapLane->pending();
}

bool TextPage::linesPending() const {
    return m_lines->pending();
}

// The matrix: a captured run's map made here; a long text's on the map lane, the view keeping the previous
// map until it arrives. Nothing is remade while what is shown stays the same.
void TextPage::refreshMatrix() {
    const MatrixKey key{m_doc->run(), m_doc->showOptions(), m_doc->layer(), m_doc->mapKey(),
                        m_scale->scale()};
    if (!(key == m_matrixKey)) {
        m_matrixKey = key;
        if (!m_doc->onDemand()) {
            TextDocument::Shown shown = m_doc->shown();
            showMatrix(scaleMap(std::move(shown.values), key.scale), shown.rows, shown.columns);
        } else {
            m_mapLane->request(
                {m_doc->run(), m_doc->model(), key.show, key.layer, key.key, key.scale, m_matrix->colorMap()},
                [this](MapLane::Result r) {
                    if (!r.error.empty()) {
                        m_matrixKey = {};
                        showStatus(QString::fromStdString(r.error), true);
                        return;
                    }
                    m_matrix->setColouredMatrix(std::move(r.scene));
                    selectMatrixRow();
                });
        }
    }
    selectMatrixRow();
}

void TextPage::showMatrix(ScaledMap scaled, const QStringList& rows, const QStringList& columns) {
    m_matrix->setMatrix(std::move(scaled.values), rows, columns);
    if (scaled.keep.size() > 0)
        m_matrix->setMask(scaled.keep);
    else
        m_matrix->clearMask();
    m_matrix->setColorScale(scaled.colorScale);
    m_matrix->setFixedRange(scaled.lo, scaled.hi);
    m_matrix->setSinkColumns(std::move(scaled.sinks));
}

void TextPage::selectMatrixRow() {
    if (m_doc->selectedToken() >= 0 && m_doc->selectedToken() < m_matrix->rows())
        m_matrix->selectRow(m_doc->selectedToken());
    else if (m_doc->model()->decoderOnly() && m_doc->step() > 0)
        m_matrix->selectRow(m_matrix->rows() - 1);
}

namespace {

QImage thumbnail(const RowMatrix& map, const MapScale& scale) {
    const ScaledMap tile = scaleMap(map, scale);
    return heatmapImage(tile.values, ColorMap::Viridis, tile.lo, tile.hi, 1, tile.colorScale)
        .scaled(96, 96, Qt::IgnoreAspectRatio, Qt::FastTransformation);
}

} // namespace

// Every layer × head as a thumbnail. A long text's maps are made on demand: on the worker, each tile
// appearing as its map is made (once per run, step and scale; the token-level maps, not merged words).
void TextPage::refreshModelGrid() {
    QStringList titles;
    const int layers = m_doc->model()->layers(), heads = m_doc->model()->heads();
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            titles << m_doc->headTitle(l, h);
    m_grid->setMaxColumns(heads);
    const MapScale scale = m_scale->scale();
    if (!m_doc->onDemand()) {
        std::vector<QImage> tiles;
        for (int l = 0; l < layers; ++l)
            for (int h = 0; h < heads; ++h)
                tiles.push_back(thumbnail(m_doc->shown(l, h).values, scale));
        m_grid->setTiles(std::move(tiles), titles);
    } else if (const GridKey key{m_doc->run(), m_doc->visibleTokens(), scale, m_doc->valueWeighted()};
               !(key == m_gridKey)) {
        m_gridKey = key;
        QImage blank(96, 96, QImage::Format_RGB32);
        blank.fill(palette().window().color());
        m_grid->setTiles(std::vector<QImage>(size_t(layers * heads), blank), titles);
        m_gridJob = worker()->stream<std::pair<int, QImage>, bool>(
            tr("Drawing every head"),
            [run = m_doc->run(), visible = key.visible, scale, layers, heads, weighted = key.weighted](
                const Callbacks& cb, const std::function<void(std::pair<int, QImage>)>& post) {
                for (int i = 0; i < layers * heads; ++i) {
                    cb.checkCancel();
                    cb.report(double(i) / (layers * heads),
                              "head " + std::to_string(i + 1) + " of " + std::to_string(layers * heads));
                    post({i,
                          thumbnail(TextDocument::visibleHead(*run, visible, i / heads, i % heads, weighted),
                                    scale)});
                }
                return true;
            },
            [this, key](std::pair<int, QImage> tile) {
                if (key == m_gridKey) m_grid->setTile(tile.first, std::move(tile.second));
            },
            [](bool) {});
    }
    if (m_doc->head() >= 0) m_grid->setSelected(m_doc->layer() * heads + m_doc->head());
}

// The text so far: the prompt, then the generated tokens up to the step (the newest underlined); the token
// under the pointer in a view is highlighted (token rows only: with words merged or tokens hidden the rows
// are not tokens).
// The token the text line marks: the hovered row when rows are tokens (not merged words, none hidden).
int TextPage::hoveredInOutput() const {
    return m_doc->wordLevel() || m_doc->hideSpecial() ? -1 : m_doc->hoveredToken();
}

void TextPage::refreshOutput() {
    const auto& run = m_doc->run();
    if (!run) return m_output->clear();
    QStringList texts;
    for (int i = 0; i < m_doc->visibleTokens(); ++i)
        texts << (m_doc->model()->piecesCarrySpaces() || m_doc->model()->piecesEndWords()
                      ? QString::fromStdString(run->texts[size_t(i)]) // CLIP's "cat</w>" reads "cat "
                      : QString::fromStdString(run->tokens[size_t(i)]) + " ");
    m_output->setTokens(texts, run->promptLength, true,
                        m_doc->model()->decoderOnly() ? QString() : tr("tokens:"));
    m_output->setHovered(hoveredInOutput());
    if (auto* scroll = static_cast<OutputScroll*>(m_output->parentWidget()->parentWidget())) scroll->fit();
}

void TextPage::exportTo(const QString& path) {
    const auto& run = m_doc->run();
    if (!run) throw Error("nothing to export yet: run a text first");
    if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) {
        // Every head over the tokens on screen (equal to one forward pass over them; with the run's heads
        // off), as `attnlens-cli text --json` writes it.
        const int n = m_doc->visibleTokens();
        const Tensor attentions = m_doc->visibleAttention();
        writeText(path.toStdString(), textRunJson({.modelType = m_doc->model()->modelType,
                                                   .tokens = {run->tokens.begin(), run->tokens.begin() + n},
                                                   .ids = {run->ids.begin(), run->ids.begin() + n},
                                                   .attentions = &attentions}));
        return;
    }
    QWidget* view = m_tabs->currentWidget();
    if (!view->grab().save(path, "PNG")) throw Error("cannot write '" + path.toStdString() + "'");
}

QString TextPage::viewTitle() const {
    return tr("Text: attention inside BERT, GPT-2 and Llama-style LLMs");
}

QString TextPage::viewExplanation() const {
    return tr(
        "<p>Each row of the <b>Matrix</b> is one token asking \"which tokens matter for me?\"; its cells are "
        "the attention weights over the tokens it can see, and they add up to 1. In GPT-2 a token sees only "
        "the tokens before it (the causal mask): the upper triangle is empty. BERT sees the whole text.</p>"
        "<p><b>Generate</b> adds the decoder's next token again and again, reusing the keys and values of "
        "the "
        "tokens before (the KV cache). Step back and forth to watch each new token's row appear; the list on "
        "the right shows the ten tokens the model considered next. <i>Chat</i> wraps the text in an instruct "
        "model's chat template first.</p>"
        "<p>[CLS], [SEP] and <|endoftext|> often collect much of the attention (\"attention sinks\"): tick "
        "<i>Hide special tokens</i> to see how the rest is shared. <i>Words</i> merges sub-word pieces.</p>"
        "<p>With BERT, type [MASK] for a missing word: the predictions for it appear on the right.</p>");
}

} // namespace attnlens::ui
