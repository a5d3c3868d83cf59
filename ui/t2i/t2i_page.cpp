#include "ui/t2i/t2i_page.h"

#include "core/util/error.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/shell/inference_worker.h"
#include "ui/t2i/t2i_word_chips.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/widgets/candidate_bars.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace attnlens::ui {

TextToImagePage::TextToImagePage(QWidget* parent, const QString& modelDir)
    : WorkspacePage(ModelKind::TextToImage, parent), m_doc(new T2iDocument(this)) {
    QWidget* bar = buildTopBar();
    QWidget* sidebar = buildSidebar();
    QWidget* centre = buildCentre();
    assembleWorkspace(this, bar, messageLine(), sidebar, centre);
    connectDocument();
    syncModelControls();
    syncControls();
    refreshStep();
    refreshViews();
    openFirstModel(modelDir);
}

TextToImagePage::~TextToImagePage() = default;

QWidget* TextToImagePage::buildTopBar() {
    auto* bar = panelFrame(this, QStringLiteral("t2iBar"), 4);
    auto* layout = new QHBoxLayout(bar);
    layout->setContentsMargins(8, 4, 8, 4);
    auto* open = new QPushButton(tr("Open model…"), bar);
    open->setObjectName(QStringLiteral("openModel"));
    open->setToolTip(
        tr("Open a Stable Diffusion pipeline folder (model_index.json, unet/, vae/, text_encoder/, "
           "tokenizer/, scheduler/)"));
    connect(open, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a Stable Diffusion pipeline"));
        if (!dir.isEmpty()) openModel(dir);
    });
    m_modelLabel = new QLabel(tr("no model"), bar);
    m_modelLabel->setObjectName(QStringLiteral("modelLabel"));
    mute(m_modelLabel);
    auto* status = new JobStatus(worker(), bar);
    const QString png = tr("PNG image (*.png)");
    m_export = exportButton(
        bar, {{tr("Image as PNG…"), png, "-image.png", [this](const QString& p) { return exportImage(p); }},
              {tr("View as PNG…"), png, "-view.png", [this](const QString& p) { return exportView(p); }},
              {tr("Every word's map as PNG…"), png, "-words.png",
               [this](const QString& p) { return exportWordStrip(p); }},
              {tr("The word through the steps as PNG…"), png, "-steps.png",
               [this](const QString& p) { return exportStepStrip(p); }},
              {tr("Word maps as NumPy (.npy)…"), tr("NumPy array (*.npy)"), "-maps.npy",
               [this](const QString& p) { return exportWordMaps(p); }},
              {tr("Run as JSON…"), tr("JSON (*.json)"), "-run.json",
               [this](const QString& p) { return exportRun(p); }}});
    layout->addWidget(open);
    layout->addSpacing(12);
    layout->addWidget(m_modelLabel, 1);
    layout->addWidget(status);
    layout->addWidget(m_export);
    return bar;
}

QWidget* TextToImagePage::buildSidebar() {
    const auto [scroll, panel, layout] = makeSidebar(this, 300);
    layout->addWidget(buildPromptBox(panel));
    layout->addWidget(buildMapBox(panel));
    layout->addWidget(buildPixelBox(panel));
    for (QComboBox* box : {m_size, m_scheduler, m_layer, m_head, m_half, m_selfLayer}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon); // long layer names
        box->setMinimumContentsLength(8);                                           // stay in the sidebar
    }
    auto* display = new MapDisplayBox(m_doc->opacity(), m_doc->colorMap(), panel);
    connect(display, &MapDisplayBox::opacityChanged, m_doc, &T2iDocument::setOpacity);
    connect(display, &MapDisplayBox::colorMapChanged, m_doc, &T2iDocument::setColorMap);
    layout->addWidget(display);
    layout->addStretch(1);
    return scroll;
}

QWidget* TextToImagePage::buildPromptBox(QWidget* panel) {
    auto* box = new QGroupBox(tr("Prompt"), panel);
    auto* form = new QFormLayout(box);
    const T2iSettings defaults;
    m_prompt = new QLineEdit(defaults.prompt, box);
    m_prompt->setObjectName(QStringLiteral("prompt"));
    m_prompt->setPlaceholderText(tr("what to draw"));
    connect(m_prompt, &QLineEdit::returnPressed, this, [this] { generate(); });
    connect(m_prompt, &QLineEdit::textChanged, this, &TextToImagePage::updatePromptNote);
    form->addRow(m_prompt);
    m_promptNote = new QLabel(box);
    m_promptNote->setObjectName(QStringLiteral("promptNote"));
    m_promptNote->setWordWrap(true);
    mute(m_promptNote);
    form->addRow(m_promptNote);
    m_negative = new QLineEdit(box);
    m_negative->setObjectName(QStringLiteral("negative"));
    m_negative->setPlaceholderText(tr("negative prompt (the unconditional half)"));
    form->addRow(m_negative);
    m_seed = new QSpinBox(box);
    m_seed->setObjectName(QStringLiteral("seed"));
    m_seed->setRange(0, 2147483647);
    form->addRow(tr("Seed:"), m_seed);
    m_steps = new QSpinBox(box);
    m_steps->setObjectName(QStringLiteral("steps"));
    m_steps->setRange(1, 1000);
    m_steps->setValue(defaults.steps);
    form->addRow(tr("Steps:"), m_steps);
    m_guidance = new QDoubleSpinBox(box);
    m_guidance->setObjectName(QStringLiteral("guidance"));
    m_guidance->setRange(0.0, 100.0);
    m_guidance->setSingleStep(0.5);
    m_guidance->setValue(defaults.guidance);
    m_guidance->setToolTip(
        tr("Classifier-free guidance: above 1 the U-Net also runs on the negative prompt and "
           "the page keeps both halves' maps; 1 runs the prompt alone"));
    form->addRow(tr("Guidance:"), m_guidance);
    m_size = new QComboBox(box);
    m_size->setObjectName(QStringLiteral("size"));
    form->addRow(tr("Size:"), m_size);
    m_scheduler = new QComboBox(box);
    m_scheduler->setObjectName(QStringLiteral("scheduler"));
    form->addRow(tr("Scheduler:"), m_scheduler);
    m_allHeadsBox = new QCheckBox(tr("Keep every head (else their mean)"), box);
    m_allHeadsBox->setObjectName(QStringLiteral("allHeads"));
    m_allHeadsBox->setToolTip(tr("One head's map, or their max, needs every head kept: the maps take "
                                 "as many times the memory as the layers have heads"));
    form->addRow(m_allHeadsBox);
    m_keepWeightedBox = new QCheckBox(tr("Keep value-weighted maps too"), box);
    m_keepWeightedBox->setObjectName(QStringLiteral("keepValueWeighted"));
    m_keepWeightedBox->setToolTip(
        tr("Also keep each map with every weight times the length of what its token "
           "sends through the head, ‖v·W_O‖ (Kobayashi et al., 2020): twice the "
           "maps' memory"));
    form->addRow(m_keepWeightedBox);
    m_generate = new QPushButton(tr("Generate"), box);
    m_generate->setObjectName(QStringLiteral("generate"));
    m_generate->setDefault(true);
    connect(m_generate, &QPushButton::clicked, this, [this] { generate(); });
    form->addRow(m_generate);
    return box;
}

QWidget* TextToImagePage::buildMapBox(QWidget* panel) {
    auto* box = new QGroupBox(tr("Word map"), panel);
    auto* form = new QFormLayout(box);
    m_allSteps = new QCheckBox(tr("Aggregate over the steps"), box);
    m_allSteps->setObjectName(QStringLiteral("allSteps"));
    m_allSteps->setToolTip(tr("DAAM's map: the mean over every step made; off: the step on the timeline"));
    connect(m_allSteps, &QCheckBox::toggled, m_doc, &T2iDocument::setAllSteps);
    form->addRow(m_allSteps);
    m_layer = new QComboBox(box);
    m_layer->setObjectName(QStringLiteral("layer"));
    connect(m_layer, &QComboBox::activated, this, [this](int i) { m_doc->setLayer(i - 1); });
    form->addRow(tr("Layer:"), m_layer);
    m_head = new QComboBox(box);
    m_head->setObjectName(QStringLiteral("head"));
    connect(m_head, &QComboBox::activated, this, [this](int i) {
        HeadSelection h;
        if (i <= 2)
            h.fusion = i == 0 ? HeadFusion::Mean : i == 1 ? HeadFusion::Max : HeadFusion::Min;
        else
            h.head = i - 3;
        m_doc->setHeads(h);
    });
    form->addRow(tr("Heads:"), m_head);
    m_half = new QComboBox(box);
    m_half->setObjectName(QStringLiteral("half"));
    m_half->addItems({tr("Prompt (cond)"), tr("Negative / empty (uncond)"), tr("cond − uncond")});
    m_half->setToolTip(tr("Classifier-free guidance runs the U-Net twice a step: on the prompt and on the "
                          "negative (or empty) prompt, the natural baseline of a word's map"));
    connect(m_half, &QComboBox::activated, this, [this](int i) { m_doc->setHalf(static_cast<T2iHalf>(i)); });
    form->addRow(tr("Half:"), m_half);
    m_valueWeighted = valueWeightedBox(
        box, tr("token"), tr("Per head before the fusion; the pixel's self-attention map follows."));
    connect(m_valueWeighted, &QCheckBox::toggled, m_doc, &T2iDocument::setValueWeighted);
    form->addRow(m_valueWeighted);
    m_showSpecial = new QCheckBox(tr("Show <start>, <end> and padding"), box);
    m_showSpecial->setObjectName(QStringLiteral("showSpecial"));
    connect(m_showSpecial, &QCheckBox::toggled, m_doc, &T2iDocument::setShowSpecial);
    form->addRow(m_showSpecial);
    return box;
}

QWidget* TextToImagePage::buildPixelBox(QWidget* panel) {
    auto* box = new QGroupBox(tr("Pixel"), panel);
    auto* layout = new QVBoxLayout(box);
    m_pixelLabel = new QLabel(tr("Click the image: which words that pixel attends to."), box);
    m_pixelLabel->setObjectName(QStringLiteral("pixelLabel"));
    m_pixelLabel->setWordWrap(true);
    layout->addWidget(m_pixelLabel);
    m_pixelBars = new CandidateBars(box);
    m_pixelBars->setObjectName(QStringLiteral("pixelWords"));
    layout->addWidget(m_pixelBars);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Self-attention:"), box));
    m_selfLayer = new QComboBox(box);
    m_selfLayer->setObjectName(QStringLiteral("selfLayer"));
    m_selfLayer->setToolTip(
        tr("Where the pixel looks in the picture itself, in this self-attention layer at the "
           "shown step: computed on demand (the run keeps no self-attention)"));
    connect(m_selfLayer, &QComboBox::activated, this,
            [this](int i) { m_doc->setSelfLayer(m_selfLayer->itemData(i).toInt()); });
    row->addWidget(m_selfLayer, 1);
    layout->addLayout(row);
    m_selfView = new PatchImageView(box);
    m_selfView->setObjectName(QStringLiteral("selfView"));
    m_selfView->setGridVisible(false);
    m_selfView->setMinimumSize(200, 200);
    m_selfView->setPlaceholderText(tr("no pixel chosen"));
    layout->addWidget(m_selfView);
    return box;
}

QWidget* TextToImagePage::buildCentre() {
    auto* centre = new QWidget(this);
    auto* layout = new QVBoxLayout(centre);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* timeline = new QHBoxLayout;
    m_stepLabel = new QLabel(centre);
    m_stepLabel->setObjectName(QStringLiteral("stepLabel"));
    m_timeline = new QSlider(Qt::Horizontal, centre);
    m_timeline->setObjectName(QStringLiteral("timeline"));
    connect(m_timeline, &QSlider::valueChanged, m_doc, &T2iDocument::setShownStep);
    m_decodeStep = new QPushButton(tr("Decode step"), centre);
    m_decodeStep->setObjectName(QStringLiteral("decodeStep"));
    m_decodeStep->setToolTip(
        tr("Run the VAE on this step's latents (the timeline shows them as a cheap preview)"));
    connect(m_decodeStep, &QPushButton::clicked, this, &TextToImagePage::decodeShownStep);
    timeline->addWidget(m_stepLabel);
    timeline->addWidget(m_timeline, 1);
    timeline->addWidget(m_decodeStep);
    layout->addLayout(timeline);
    m_chips = new T2iWordChips(m_doc, centre);
    layout->addWidget(m_chips->inScrollArea(3));

    auto* split = new QSplitter(Qt::Vertical, centre);
    auto* top = new QSplitter(Qt::Horizontal, split);
    m_view = new PatchImageView(top);
    m_view->setObjectName(QStringLiteral("view"));
    m_view->setGridVisible(false);
    m_view->setPlaceholderText(tr("Generate to see the image and where each word lands"));
    connect(m_view, &PatchImageView::patchClicked, this, [this](int patch, bool) {
        const PatchGrid& g = m_view->grid();
        const int cell = g.patch();
        m_doc->setPixel(
            std::pair{(patch / g.cols()) * cell + cell / 2, (patch % g.cols()) * cell + cell / 2});
    });
    m_compare = new MapGridView(top);
    m_compare->setObjectName(QStringLiteral("compare"));
    m_compare->setToolTip(tr("Shift-click words to compare their maps side by side"));
    m_compare->hide();
    top->addWidget(m_view);
    top->addWidget(m_compare);
    m_tabs = new QTabWidget(split);
    m_tabs->setObjectName(QStringLiteral("tabs"));
    m_wordStrip = new MapGridView(m_tabs);
    m_wordStrip->setObjectName(QStringLiteral("wordStrip"));
    connect(m_wordStrip, &MapGridView::tileClicked, this, [this](int i) {
        const auto words = m_doc->visibleWords();
        if (i < 0 || i >= static_cast<int>(words.size())) return;
        if (QApplication::keyboardModifiers() & Qt::ShiftModifier)
            m_doc->toggleCompared(words[size_t(i)]);
        else
            m_doc->setWord(words[size_t(i)]);
    });
    m_stepStrip = new MapGridView(m_tabs);
    m_stepStrip->setObjectName(QStringLiteral("stepStrip"));
    connect(m_stepStrip, &MapGridView::tileClicked, this, [this](int i) {
        m_doc->setAllSteps(false);
        m_doc->setShownStep(i);
    });
    m_uView = new UShapeView(m_tabs);
    m_uView->setObjectName(QStringLiteral("uView"));
    connect(m_uView, &UShapeView::layerClicked, this,
            [this](int l) { m_doc->setLayer(m_doc->layer() == l ? -1 : l); });
    for (QWidget* strip : {static_cast<QWidget*>(m_wordStrip), static_cast<QWidget*>(m_stepStrip),
                           static_cast<QWidget*>(m_uView)})
        strip->setMinimumSize(160, 120); // tiles shrink to fit: 26 steps must not make the page scroll
    m_tabs->addTab(m_wordStrip, tr("Every word"));
    m_tabs->addTab(m_stepStrip, tr("The word through the steps"));
    m_tabs->addTab(m_uView, tr("U view (cross-attention layers)"));
    connect(m_tabs, &QTabWidget::currentChanged, this, &TextToImagePage::refreshViews);
    split->addWidget(top);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    split->setSizes({520, 300}); // the strips stay in sight under the image instead of below the fold
    m_tabs->setMinimumHeight(220);
    layout->addWidget(split, 1);
    return centre;
}

void TextToImagePage::connectDocument() {
    connect(m_doc, &T2iDocument::pipelineChanged, this, [this] {
        m_modelLabel->setText(modelDescription());
        syncModelControls();
        updatePromptNote();
    });
    connect(m_doc, &T2iDocument::runChanged, this, [this] {
        refreshStep();
        refreshViewsSoon();
    });
    connect(m_doc, &T2iDocument::selectionChanged, this, [this] {
        syncControls();
        refreshStep();
        refreshViews();
        requestSelfAttention();
    });
    connect(m_doc, &T2iDocument::lookChanged, this, &TextToImagePage::refreshViews);
    connect(m_doc, &T2iDocument::selfChanged, this, &TextToImagePage::refreshPixelPanel);
}

// --- model and runs -----------------------------------------------------------------------------------

void TextToImagePage::openModel(const QString& dir) {
    if (isBusy()) worker()->cancel();
    struct Loaded {
        std::shared_ptr<const TextToImagePipeline> pipe;
        PrecisionNote note;
    };
    // bf16 (Compute → Precision): measured against float32 once, at load, on the prompt shown
    const std::string prompt = m_prompt->text().trimmed().isEmpty()
                                   ? std::string("a photo of a cat")
                                   : m_prompt->text().trimmed().toStdString();
    loadModel<Loaded>(
        dir,
        [path = dir.toStdString(), prompt](const Callbacks& cb) {
            Loaded loaded{TextToImagePipeline::load(path, cb), {}};
            if (linearPrecision() == LinearPrecision::Bf16) {
                cb.report(1.0, "checking bf16 against fp32");
                loaded.note =
                    PrecisionNote::measure("noise", [&] { return t2iPrecisionParity(*loaded.pipe, prompt); });
            }
            return loaded;
        },
        [this, dir](Loaded loaded) {
            m_precisionNote = loaded.note;
            m_doc->setPipeline(std::move(loaded.pipe), QFileInfo(QDir::cleanPath(dir)).fileName());
            m_modelLabel->setToolTip(m_precisionNote.sentence);
            if (!m_precisionNote.empty()) showNotice(m_precisionNote.sentence);
        });
}

void TextToImagePage::modelReady() {
    if (m_generateWhenLoaded || (!m_firstShow && isVisible())) {
        m_generateWhenLoaded = false;
        generate();
    }
}

void TextToImagePage::showEvent(QShowEvent* event) {
    WorkspacePage::showEvent(event);
    if (!m_firstShow) return;
    m_firstShow = false;
    if (restoringSession()) return;
    if (m_doc->pipeline())
        generate();
    else
        m_generateWhenLoaded = true;
}

QString TextToImagePage::modelDescription() const {
    const auto& pipe = m_doc->pipeline();
    if (!pipe) return tr("no model");
    const auto& u = pipe->unet();
    return tr("%1 · %2 · U-Net %3 M parameters · text encoder %4 wide · %5×%5")
        .arg(m_doc->modelName(), QString::fromStdString(pipe->className()))
        .arg(static_cast<double>(u.parameterCount()) / 1e6, 0, 'f', 1)
        .arg(pipe->textEncoderConfig().hiddenSize)
        .arg(pipe->defaultSize());
}

T2iSettings TextToImagePage::settingsFromControls() const {
    T2iSettings s;
    s.prompt = m_prompt->text();
    s.negative = m_negative->text();
    s.seed = m_seed->value();
    s.steps = m_steps->value();
    s.guidance = m_guidance->value();
    s.size = m_size->currentData().toInt();
    if (const QVariant k = m_scheduler->currentData(); k.isValid() && k.toInt() >= 0) // not the folder's
        s.sampler = static_cast<SamplerKind>(k.toInt());
    s.allHeads = m_allHeadsBox->isChecked();
    s.valueWeighted = m_keepWeightedBox->isChecked();
    return s;
}

void TextToImagePage::setSettings(const T2iSettings& s) {
    m_prompt->setText(s.prompt);
    m_negative->setText(s.negative);
    m_seed->setValue(s.seed);
    m_steps->setValue(s.steps);
    m_guidance->setValue(s.guidance);
    if (const int i = m_size->findData(s.size); i >= 0) m_size->setCurrentIndex(i);
    if (const int i = m_scheduler->findData(s.sampler ? static_cast<int>(*s.sampler) : -1); i >= 0)
        m_scheduler->setCurrentIndex(i);
    m_allHeadsBox->setChecked(s.allHeads);
    m_keepWeightedBox->setChecked(s.valueWeighted);
}

namespace {

// The picture of a step: the VAE's decode where it is cheap (latents of at most 32×32), else the latents.
T2iFrame makeFrame(const TextToImagePipeline& pipe, const T2iStep& step) {
    T2iFrame f{step, {}, false};
    if (step.latents.dim(1) * step.latents.dim(2) > 32 * 32) {
        f.picture = latentPreview(step.latents);
        return f;
    }
    f.picture = t2iImageU8(decodeLatents(pipe, step.latents));
    f.decoded = true;
    return f;
}

} // namespace

void TextToImagePage::generate(const T2iSettings& s) {
    const auto pipe = m_doc->pipeline();
    if (!pipe) {
        m_generateWhenLoaded = true;
        return;
    }
    if (isBusy()) worker()->cancel();
    T2iRequest r;
    r.prompt = s.prompt.toStdString();
    r.negative = s.negative.toStdString();
    r.steps = s.steps;
    r.guidance = static_cast<float>(s.guidance);
    r.seed = static_cast<uint64_t>(s.seed);
    r.sampler = s.sampler;
    r.height = r.width = s.size > 0 ? s.size : pipe->defaultSize();
    r.allHeads = s.allHeads;
    r.valueWeighted = s.valueWeighted;
    int calls = 0;
    try {
        const auto kind = s.sampler ? s.sampler : pipe->folderSampler();
        if (!kind)
            throw Error("the folder's scheduler " + pipe->schedulerClass() + " is not supported: choose one");
        Sampler sampler(*kind, pipe->schedulerConfig());
        sampler.setTimesteps(r.steps);
        calls = static_cast<int>(sampler.timesteps().size());
        m_doc->beginRun(s, t2iPrompt(*pipe, r.prompt), r.height, r.width, calls);
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        if (restoreState()) endRestore(); // the session's run cannot start: the restore ends here
        return;
    }
    updatePromptNote();
    if (!m_precisionNote.empty()) showNotice(m_precisionNote.sentence); // what this run computes with
    const int id = m_doc->runId(); // results of an earlier run arriving late are dropped
    m_runJob = worker()->stream<T2iFrame, std::shared_ptr<T2iResult>>(
        tr("Generating"),
        [pipe, r](const Callbacks& cb, const std::function<void(T2iFrame)>& post) {
            auto result = std::make_shared<T2iResult>(
                runTextToImage(*pipe, r, &cb, [&](const T2iStep& step) { post(makeFrame(*pipe, step)); }));
            result->steps.clear(); // the frames brought them
            return result;
        },
        [this, id](T2iFrame frame) {
            if (id == m_doc->runId()) m_doc->addFrame(std::move(frame));
        },
        [this, id](std::shared_ptr<T2iResult> result) {
            if (id != m_doc->runId()) return;
            m_doc->finishRun(result.get());
            if (restoreState()) applyRestoredView();
            requestSelfAttention();
            emit resultReady();
            emit runFinished();
        });
}

void TextToImagePage::decodeShownStep() {
    const auto pipe = m_doc->pipeline();
    const int step = m_doc->shownStep();
    if (!pipe || !m_doc->hasRun() || m_doc->stepDecoded(step)) return;
    const Tensor latents = m_doc->run().steps[size_t(step)].latents;
    m_decodeJob = worker()->run<ImageU8>(
        tr("Decoding step %1").arg(step),
        [pipe, latents](const Callbacks& cb) { return t2iImageU8(decodeLatents(*pipe, latents, &cb)); },
        [this, step, id = m_doc->runId()](ImageU8 picture) {
            if (id == m_doc->runId()) m_doc->setStepPicture(step, std::move(picture));
        });
}

void TextToImagePage::requestSelfAttention() {
    const auto pipe = m_doc->pipeline();
    if (!pipe || !m_doc->pixel() || !m_doc->hasRun() || m_doc->running() || m_doc->selfLayer() < 0 ||
        m_doc->selfAttention())
        return;
    if (m_selfJob) {
        m_selfAgain = true;
        return;
    }
    const int step = m_doc->shownStep(), layer = m_doc->selfLayer();
    const T2iStep& s = m_doc->run().steps[size_t(step)];
    T2iStep replay{s.index, s.timestep, s.input, {}, {}};
    const Tensor states = m_doc->condStates();
    const std::string prompt = m_doc->runSettings().prompt.toStdString();
    using Out = std::pair<Tensor, UNetAttentionMap>;
    m_selfJob = worker()->run<std::shared_ptr<Out>>(
        tr("Self-attention of layer %1").arg(layer),
        [pipe, replay, states, prompt, layer](const Callbacks& cb) {
            auto out = std::make_shared<Out>();
            out->first = states.empty() ? pipe->encodePrompt(*pipe->loadTextEncoder(), prompt) : states;
            out->second = t2iSelfAttention(*pipe, out->first, replay, layer, &cb);
            return out;
        },
        [this, step, layer, id = m_doc->runId()](std::shared_ptr<Out> out) {
            m_selfJob = 0;
            if (id != m_doc->runId()) return requestSelfAttention(); // another run's: ask again for this one
            m_doc->setCondStates(std::move(out->first));
            m_doc->setSelfAttention(step, layer, std::move(out->second));
            emit selfComputed();
            if (std::exchange(m_selfAgain, false)) requestSelfAttention();
        });
}

void TextToImagePage::jobFailed(int id, const QString&) {
    if (id == m_selfJob) m_selfJob = 0, m_selfAgain = false;
    if (id == m_runJob && m_doc->running()) {
        m_doc->finishRun(nullptr);
        emit runFinished();
    }
}

void TextToImagePage::jobCancelled(int id) {
    if (id == m_selfJob) m_selfJob = 0, m_selfAgain = false;
    if (id == m_runJob && m_doc->running()) {
        m_doc->finishRun(nullptr);
        showNotice(tr("Stopped after %n step(s); they stay on the timeline (Decode step shows one).", nullptr,
                      m_doc->completedSteps()));
        emit runFinished();
    }
}

} // namespace attnlens::ui
