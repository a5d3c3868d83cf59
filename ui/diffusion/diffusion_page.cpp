#include "ui/diffusion/diffusion_page.h"

#include "core/io/model_folder.h"
#include "core/util/error.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/render/heatmap_image.h"
#include "ui/shell/inference_worker.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/widgets/color_bar.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <climits>

namespace attnlens::ui {

namespace {

constexpr int kTileMinSide = 112; // U view and strip tiles: the image enlarged to at least this

QString folderName(const QString& dir) {
    return QFileInfo(QDir::cleanPath(dir)).fileName();
}

} // namespace

DiffusionPage::DiffusionPage(QWidget* parent, const QString& modelDir)
    : WorkspacePage(ModelKind::Diffusion, parent), m_doc(new DiffusionDocument(this)) {
    QWidget* bar = buildTopBar(); // built in this order: later builders use what earlier ones made
    QWidget* sidebar = buildSidebar();
    QWidget* centre = buildCentre();
    assembleWorkspace(this, bar, messageLine(), sidebar, centre);

    m_playTimer = new QTimer(this);
    m_playTimer->setInterval(150);
    connect(m_playTimer, &QTimer::timeout, this, [this] {
        if (m_doc->currentStep() + 1 >= m_doc->completedSteps()) {
            if (!m_doc->running()) setPlaying(false);
            return;
        }
        m_doc->setCurrentStep(m_doc->currentStep() + 1);
    });

    m_mapsTimer = new QTimer(this);
    m_mapsTimer->setSingleShot(true);
    connect(m_mapsTimer, &QTimer::timeout, this, &DiffusionPage::refreshMaps);
    connectDocument();
    syncControls();
    refreshMaps();
    openFirstModel(modelDir);
}

DiffusionPage::~DiffusionPage() = default;

// Top bar: model, progress (JobStatus), export menu.
QWidget* DiffusionPage::buildTopBar() {
    auto* bar = panelFrame(this, QStringLiteral("diffusionBar"), 4);
    auto* barLayout = new QHBoxLayout(bar);
    barLayout->setContentsMargins(8, 4, 8, 4);
    auto* open = new QPushButton(tr("Open model…"), bar);
    open->setObjectName(QStringLiteral("openModel"));
    open->setToolTip(tr("Open a diffusers UNet2DModel folder or a DDPM/DDIM pipeline folder"));
    connect(open, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a diffusers model folder"));
        if (!dir.isEmpty()) openModel(dir);
    });
    m_modelLabel = new QLabel(tr("no model"), bar);
    m_modelLabel->setObjectName(QStringLiteral("modelLabel"));
    mute(m_modelLabel);
    auto* jobStatus = new JobStatus(worker(), bar);
    m_export = exportMenuButton(
        bar, {
                 {tr("View as PNG…"), [this] { chooseExport(Export::View); }},
                 {tr("U view as PNG…"), [this] { chooseExport(Export::UView); }},
                 {tr("Step strip as PNG…"), [this] { chooseExport(Export::Strip); }},
                 {tr("Trajectory as animated GIF…"), [this] { chooseExport(Export::Gif); }},
                 {tr("Trajectory as PNG sequence…"), [this] { chooseExport(Export::PngSequence); }},
                 {tr("Map as NumPy (.npy)…"), [this] { chooseExport(Export::MapNpy); }},
                 {tr("Map as CSV…"), [this] { chooseExport(Export::MapCsv); }},
             });
    m_export->setObjectName(QStringLiteral("export"));
    barLayout->addWidget(open);
    barLayout->addSpacing(12);
    barLayout->addWidget(m_modelLabel, 1);
    barLayout->addWidget(jobStatus);
    barLayout->addWidget(m_export);
    return bar;
}

// Document → views.
void DiffusionPage::connectDocument() {
    connect(m_doc, &DiffusionDocument::modelChanged, this, [this] {
        m_modelLabel->setText(modelDescription());
        QStringList labels;
        for (const auto& l : m_doc->layers())
            labels << DiffusionDocument::shortLayerName(l);
        m_uView->setLayers(m_doc->layers(), labels);
        syncControls();
    });
    connect(m_doc, &DiffusionDocument::runChanged, this, [this] {
        refreshStep();
        refreshMapsSoon();
    });
    connect(m_doc, &DiffusionDocument::stepChanged, this, [this] {
        refreshStep();
        refreshMapsSoon();
    });
    connect(m_doc, &DiffusionDocument::attentionChanged, this, &DiffusionPage::refreshMaps);
    connect(m_doc, &DiffusionDocument::selectionChanged, this, [this] {
        syncControls();
        refreshMaps();
    });
    connect(m_doc, &DiffusionDocument::lookChanged, this, &DiffusionPage::refreshMaps);
}

// A failed or cancelled job (the error is on the message line): its requests are forgotten, a run ends with
// the steps it made.
void DiffusionPage::jobFailed(int id, const QString&) {
    m_requested.clear();
    if (id == m_attentionJob) m_attentionJob = 0, m_attentionAgain = false;
    if (id == m_runJob && m_doc->running()) {
        m_doc->finishRun(false);
        emit runFinished();
    }
}

void DiffusionPage::jobCancelled(int id) {
    m_requested.clear();
    if (id == m_attentionJob) m_attentionJob = 0, m_attentionAgain = false;
    if (id == m_runJob && m_doc->running()) {
        m_doc->finishRun(false);
        showNotice(
            tr("Stopped after %n step(s); they stay on the timeline.", nullptr, m_doc->completedSteps()));
        emit runFinished();
    }
}

QWidget* DiffusionPage::buildSidebar() {
    const auto [scroll, panel, layout] = makeSidebar(this);

    layout->addWidget(buildGenerateBox(panel));
    layout->addWidget(buildQueryBox(panel));
    layout->addWidget(buildMapBox(panel));
    layout->addWidget(buildDisplayBox(panel));
    layout->addStretch(1);
    return scroll;
}

QWidget* DiffusionPage::buildGenerateBox(QWidget* panel) {
    auto* genBox = new QGroupBox(tr("Generate"), panel);
    auto* genForm = new QFormLayout(genBox);
    m_class = new QComboBox(genBox);
    m_class->setObjectName(QStringLiteral("class"));
    m_class->setToolTip(tr("The class the image is generated for (class-conditional models)"));
    m_seed = new QSpinBox(genBox);
    m_seed->setObjectName(QStringLiteral("seed"));
    m_seed->setRange(0, INT_MAX);
    m_seed->setValue(1);
    m_seed->setToolTip(
        tr("The seed of the initial noise and every step's noise: the same seed gives the same image"));
    m_scheduler = new QComboBox(genBox);
    m_scheduler->setObjectName(QStringLiteral("scheduler"));
    m_scheduler->addItem(tr("DDIM"), static_cast<int>(SchedulerKind::Ddim));
    m_scheduler->addItem(tr("DDPM"), static_cast<int>(SchedulerKind::Ddpm));
    m_steps = new QSpinBox(genBox);
    m_steps->setObjectName(QStringLiteral("steps"));
    m_steps->setRange(1, DenoiseSession::kMaxSteps);
    m_steps->setValue(50);
    m_generate = new QPushButton(tr("Generate"), genBox);
    m_generate->setObjectName(QStringLiteral("generate"));
    m_generate->setDefault(true);
    connect(m_generate, &QPushButton::clicked, this, &DiffusionPage::generate);
    genForm->addRow(tr("Class:"), m_class);
    genForm->addRow(tr("Seed:"), m_seed);
    genForm->addRow(tr("Scheduler:"), m_scheduler);
    genForm->addRow(tr("Steps:"), m_steps);
    genForm->addRow(m_generate);
    return genBox;
}

QWidget* DiffusionPage::buildQueryBox(QWidget* panel) {
    auto* queryBox = new QGroupBox(tr("Query"), panel);
    auto* queryLayout = new QVBoxLayout(queryBox);
    m_queryLabel = new QLabel(queryBox);
    m_queryLabel->setObjectName(QStringLiteral("queryLabel"));
    m_queryLabel->setWordWrap(true);
    queryLayout->addWidget(m_queryLabel);
    m_keySide = new QCheckBox(tr("Key side: who attends to the query"), queryBox);
    m_keySide->setObjectName(QStringLiteral("keySide"));
    connect(m_keySide, &QCheckBox::toggled, m_doc, &DiffusionDocument::setKeySide);
    queryLayout->addWidget(m_keySide);
    queryLayout->addWidget(
        hint(tr("Click the large image to make a pixel the query; drag for a region."), queryBox));
    return queryBox;
}

QWidget* DiffusionPage::buildMapBox(QWidget* panel) {
    m_mapBox = new MapLensBox(
        {tr("What every head of every layer does at this step (entropy, distance in pixels, …); "
            "switch heads off and see the step predicted without them; rank them by importance"),
         tr("The neuron view: the query pixel's score for one key pixel taken apart — the head's query "
            "and key vectors, their products per dimension, q·k, ÷√d_k and the softmax"),
         tr("Difference maps: keep this layer's map as A, then change the step, seed, class, query or layer "
            "(of the same size) and compare")},
        panel);
    connect(m_mapBox, &MapLensBox::layerChosen, m_doc, &DiffusionDocument::setLayer);
    connect(m_mapBox, &MapLensBox::headsChosen, this, [this](HeadSelection heads) {
        m_doc->setFusion(heads.fusion);
        m_doc->setHead(heads.head);
    });
    connect(m_mapBox, &MapLensBox::headStatsRequested, this, &DiffusionPage::showHeadStats);
    connect(m_mapBox, &MapLensBox::neuronRequested, this, &DiffusionPage::showNeuronView);
    connect(m_mapBox, &MapLensBox::pinRequested, this, &DiffusionPage::pinMap);
    m_over = new QComboBox(m_mapBox);
    m_over->setObjectName(QStringLiteral("over"));
    m_over->addItems({tr("x̂0 (predicted image)"), tr("x_t (noisy input)")});
    connect(m_over, &QComboBox::currentIndexChanged, this, [this](int i) { m_doc->setOnNoisy(i == 1); });
    m_mapBox->addRow(tr("Over:"), m_over);
    return m_mapBox;
}

QWidget* DiffusionPage::buildDisplayBox(QWidget* panel) {
    auto* box = new MapDisplayBox(m_doc->opacity(), m_doc->colorMap(), panel);
    connect(box, &MapDisplayBox::opacityChanged, m_doc, &DiffusionDocument::setOpacity);
    connect(box, &MapDisplayBox::colorMapChanged, m_doc, &DiffusionDocument::setColorMap);
    return box;
}

QWidget* DiffusionPage::buildCentre() {
    auto* centre = new QWidget(this);
    auto* layout = new QVBoxLayout(centre);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(buildTimeline(centre));
    auto* split = new QSplitter(Qt::Vertical, centre);
    split->setObjectName(QStringLiteral("diffusionSplitter")); // remembered by the main window
    split->setChildrenCollapsible(false);
    auto* top = new QWidget(split);
    auto* topLayout = new QHBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(buildStepImages(top));
    topLayout->addLayout(buildLargeView(top), 1);
    topLayout->addLayout(buildUView(top), 1);
    split->addWidget(top);
    split->addWidget(buildStrip(split));
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({560, 200});
    layout->addWidget(split, 1);
    return centre;
}

// Timeline: ◀, the slider over the steps, ▶, Play and the step's description.
QLayout* DiffusionPage::buildTimeline(QWidget* centre) {
    auto* timeline = new QHBoxLayout;
    m_prev = new QPushButton(QStringLiteral("◀"), centre);
    m_prev->setObjectName(QStringLiteral("prevStep"));
    m_prev->setToolTip(tr("Previous step (Alt+Left)"));
    m_prev->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    m_prev->setMaximumWidth(36);
    connect(m_prev, &QPushButton::clicked, this, [this] { m_doc->setCurrentStep(m_doc->currentStep() - 1); });
    m_timeline = new QSlider(Qt::Horizontal, centre);
    m_timeline->setObjectName(QStringLiteral("timeline"));
    m_timeline->setToolTip(tr("The denoising steps, from pure noise (left) to the image (right)"));
    connect(m_timeline, &QSlider::valueChanged, m_doc, &DiffusionDocument::setCurrentStep);
    m_next = new QPushButton(QStringLiteral("▶"), centre);
    m_next->setObjectName(QStringLiteral("nextStep"));
    m_next->setToolTip(tr("Next step (Alt+Right)"));
    m_next->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    m_next->setMaximumWidth(36);
    connect(m_next, &QPushButton::clicked, this, [this] { m_doc->setCurrentStep(m_doc->currentStep() + 1); });
    m_play = new QPushButton(tr("Play"), centre);
    m_play->setObjectName(QStringLiteral("play"));
    m_play->setCheckable(true);
    connect(m_play, &QPushButton::toggled, this, &DiffusionPage::setPlaying);
    m_stepLabel = caption(QString(), centre);
    m_stepLabel->setObjectName(QStringLiteral("stepLabel"));
    m_stepLabel->setMinimumWidth(200);
    timeline->addWidget(m_prev);
    timeline->addWidget(m_timeline, 1);
    timeline->addWidget(m_next);
    timeline->addWidget(m_play);
    timeline->addWidget(m_stepLabel);
    return timeline;
}

// x_t, ε̂, x̂0 (and the final image) of the step shown, one above the other.
QWidget* DiffusionPage::buildStepImages(QWidget* top) {
    m_stepImages = new MapGridView(top);
    m_stepImages->setObjectName(QStringLiteral("stepImages"));
    m_stepImages->setMaxColumns(1);
    m_stepImages->setFixedWidth(150);
    m_stepImages->setToolTip(
        tr("The step's input x_t, the noise the U-Net predicts in it (shown over ±3) and the "
           "clean image x̂0 that prediction implies; click x_t or x̂0 to draw the map over it"));
    connect(m_stepImages, &MapGridView::tileClicked, this, [this](int i) {
        if (i == 0 || i == 2) m_doc->setOnNoisy(i == 0);
    });
    return m_stepImages;
}

// The chosen layer's map over the image, large, with its colour bar; click or drag sets the query.
QLayout* DiffusionPage::buildLargeView(QWidget* top) {
    auto* viewBox = new QVBoxLayout;
    m_viewTitle = caption(QString(), top);
    m_viewTitle->setObjectName(QStringLiteral("viewTitle"));
    m_viewTitle->setWordWrap(true);
    viewBox->addWidget(m_viewTitle);
    auto* viewRow = new QHBoxLayout;
    m_overlay = new PatchImageView(top);
    m_overlay->setObjectName(QStringLiteral("overlayView"));
    m_overlay->setGridVisible(false);
    m_overlay->setMinimumSize(240, 240);
    m_overlay->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding);
    m_overlay->setPlaceholderText(tr("Press Generate."));
    connect(m_overlay, &PatchImageView::patchClicked, this, [this](int pixel, bool) {
        const int w = std::max(1, m_doc->imageWidth());
        m_doc->setQuery(PixelRegion::pixel(pixel / w, pixel % w));
    });
    connect(m_overlay, &PatchImageView::patchesSelected, this, [this](std::vector<int> pixels, bool) {
        if (pixels.empty()) return;
        const int w = std::max(1, m_doc->imageWidth());
        PixelRegion r{pixels.front() / w, pixels.front() % w, pixels.front() / w, pixels.front() % w};
        for (int p : pixels) {
            r.row0 = std::min(r.row0, p / w);
            r.row1 = std::max(r.row1, p / w);
            r.col0 = std::min(r.col0, p % w);
            r.col1 = std::max(r.col1, p % w);
        }
        m_doc->setQuery(r);
    });
    connect(m_overlay, &PatchImageView::patchHovered, this, [this](int pixel) {
        const RowMatrix map = pixel >= 0 ? m_doc->currentMap() : RowMatrix();
        if (pixel < 0 || map.size() == 0 || m_doc->imageWidth() <= 0) {
            m_overlay->setToolTip(QString());
            return;
        }
        const int r = pixel / m_doc->imageWidth(), c = pixel % m_doc->imageWidth();
        const int mr = static_cast<int>(int64_t{r} * map.rows() / m_doc->imageHeight());
        const int mc = static_cast<int>(int64_t{c} * map.cols() / m_doc->imageWidth());
        m_overlay->setToolTip(tr("pixel (%1, %2) · cell (%3, %4) of %5×%6: %7")
                                  .arg(r)
                                  .arg(c)
                                  .arg(mr)
                                  .arg(mc)
                                  .arg(map.rows())
                                  .arg(map.cols())
                                  .arg(map(mr, mc), 0, 'f', 4));
    });
    viewRow->addWidget(m_overlay, 1);
    m_colorBar = new ColorBar(top);
    m_colorBar->setObjectName(QStringLiteral("colorBar"));
    m_colorBar->setToolTip(tr("The colours of the map: its smallest and largest weight"));
    m_overlay->installEventFilter(this);
    viewRow->addWidget(m_colorBar);
    viewBox->addLayout(viewRow, 1);
    return viewBox;
}

// Every attention layer laid out as the U.
QLayout* DiffusionPage::buildUView(QWidget* top) {
    auto* uBox = new QVBoxLayout;
    m_uTitle = caption(tr("Every attention layer, laid out as the U"), top);
    uBox->addWidget(m_uTitle);
    m_uView = new UShapeView(top);
    m_uView->setObjectName(QStringLiteral("uView"));
    m_uView->setPlaceholderText(tr("This U-Net has no attention layer."));
    m_uView->setToolTip(
        tr("Contracting path down the left, bottleneck at the bottom, expansive path up the right; "
           "dashed: skip connections. Click a layer to show it large."));
    connect(m_uView, &UShapeView::layerClicked, m_doc, &DiffusionDocument::setLayer);
    uBox->addWidget(m_uView, 1);
    return uBox;
}

// The same query and layer at evenly spaced steps.
QWidget* DiffusionPage::buildStrip(QWidget* parent) {
    auto* bottom = new QWidget(parent);
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 4, 0, 0);
    m_stripTitle = caption(tr("The query across the steps"), bottom);
    bottomLayout->addWidget(m_stripTitle);
    m_strip = new MapGridView(bottom);
    m_strip->setObjectName(QStringLiteral("stepStrip"));
    m_strip->setToolTip(tr("The same query and layer at evenly spaced steps; click one to go there"));
    connect(m_strip, &MapGridView::tileClicked, this, [this](int i) {
        const std::vector<int> steps = m_doc->stripSteps(); // what the strip shows
        if (i >= 0 && i < static_cast<int>(steps.size()))
            m_doc->setCurrentStep(steps[static_cast<size_t>(i)]);
    });
    bottomLayout->addWidget(m_strip, 1);
    return bottom;
}

// --- model and runs -------------------------------------------------------------------------

void DiffusionPage::openModel(const QString& dir) {
    // The user has moved on: a run of the current model stops (its steps stay if the new folder fails to
    // load) instead of holding the load back until its last step.
    if (isBusy()) worker()->cancel();
    loadModel<std::shared_ptr<const DiffusionModel>>(
        dir,
        [path = dir.toStdString()](const Callbacks&) {
            return std::make_shared<const DiffusionModel>(loadDiffusionModel(path));
        },
        [this, dir](std::shared_ptr<const DiffusionModel> model) {
            setPlaying(false);
            m_doc->setModel(std::move(model), folderName(dir));
            m_requested.clear();
        });
}

void DiffusionPage::modelReady() {
    if (m_generateWhenLoaded || (!m_firstShow && isVisible())) {
        m_generateWhenLoaded = false;
        generate();
    }
}

QString DiffusionPage::modelDescription() const {
    const auto& model = m_doc->model();
    if (!model) return tr("no model");
    const auto& c = model->unet->config();
    return tr("%1 · UNet2DModel, %2 M parameters · %3×%3 · %4 attention layers%5")
        .arg(m_doc->modelName())
        .arg(static_cast<double>(model->unet->parameterCount()) / 1e6, 0, 'f', 2)
        .arg(c.sampleSize)
        .arg(m_doc->layers().size())
        .arg(c.numClassEmbeds > 0 ? tr(" · %1 classes").arg(c.numClassEmbeds) : QString());
}

DiffusionSettings DiffusionPage::settingsFromControls() const {
    DiffusionSettings s;
    s.scheduler = static_cast<SchedulerKind>(m_scheduler->currentData().toInt());
    s.steps = m_steps->value();
    s.seed = static_cast<uint64_t>(m_seed->value());
    if (m_doc->classCount() > 0 && m_class->currentIndex() >= 0) s.classLabel = m_class->currentIndex();
    return s;
}

void DiffusionPage::setSettings(const DiffusionSettings& s) {
    m_scheduler->setCurrentIndex(s.scheduler == SchedulerKind::Ddim ? 0 : 1);
    m_steps->setValue(s.steps);
    m_seed->setValue(static_cast<int>(std::min<uint64_t>(s.seed, INT_MAX)));
    if (s.classLabel && *s.classLabel < m_class->count()) m_class->setCurrentIndex(*s.classLabel);
}

void DiffusionPage::generate() {
    if (!m_doc->model()) {
        m_generateWhenLoaded = true;
        return;
    }
    const DiffusionSettings settings = settingsFromControls();
    DenoiseOptions options;
    options.scheduler = settings.scheduler;
    options.steps = settings.steps;
    options.classLabel = settings.classLabel;
    options.seed = settings.seed;
    std::shared_ptr<DenoiseSession> session;
    try {
        session = std::make_shared<DenoiseSession>(*m_doc->model(), options);
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return;
    }
    if (isBusy()) worker()->cancel();
    dismissMessage();
    m_doc->beginRun(settings, session->timesteps());
    m_requested.clear();
    const bool capture = DiffusionDocument::attentionBytesPerStep(*m_doc->model()) <= m_captureLimit;
    const int runId = m_doc->runId();
    using Partial = std::pair<std::shared_ptr<const DiffusionFrame>, std::shared_ptr<const StepAttention>>;
    m_runJob = worker()->stream<Partial, Tensor>(
        tr("Generating"),
        [session, capture](const Callbacks& cb, const std::function<void(Partial)>& post) {
            for (int i = 0; !session->done(); ++i) {
                cb.checkCancel();
                std::vector<UNetAttentionMap> attention;
                session->step(&cb, capture ? &attention : nullptr);
                post({DiffusionDocument::makeFrame(i, session->stepAt(i)),
                      capture ? DiffusionDocument::makeAttention(std::move(attention)) : nullptr});
                cb.report(static_cast<double>(i + 1) / session->stepCount(),
                          "step " + std::to_string(i + 1) + " of " + std::to_string(session->stepCount()));
            }
            return session->finalSample();
        },
        [this, runId](Partial step) {
            if (m_doc->runId() == runId) m_doc->addFrame(step.first, step.second);
        },
        [this, runId](Tensor finalSample) {
            if (m_doc->runId() != runId) return;
            m_doc->finishRun(true, finalSample);
            if (restoreState()) applyRestoredView();
            requestAttention();
            emit resultReady();
            emit runFinished();
        });
}

void DiffusionPage::requestAttention() {
    if (!m_doc->model() || m_doc->layers().empty() || !m_doc->hasRun()) return;
    if (m_attentionJob != 0) {
        m_attentionAgain = true;
        return;
    }
    std::vector<int> wanted{m_doc->currentStep()};
    for (int s : m_doc->stripSteps())
        wanted.push_back(s);
    std::vector<int> steps;
    for (int s : m_doc->missingAttention(wanted))
        if (m_requested.insert({m_doc->runId(), s}).second) steps.push_back(s);
    if (steps.empty()) return;
    std::vector<std::shared_ptr<const DiffusionFrame>> frames;
    for (int s : steps)
        frames.push_back(m_doc->frameShared(s));
    const int runId = m_doc->runId();
    using Partial = std::pair<int, std::shared_ptr<const StepAttention>>; // (step, its maps)
    m_attentionJob = worker()->stream<Partial, bool>(
        tr("Computing attention"),
        [model = m_doc->model(), label = m_doc->settings().classLabel,
         frames](const Callbacks& cb, const std::function<void(Partial)>& post) {
            for (size_t i = 0; i < frames.size(); ++i) {
                cb.checkCancel();
                const int step = frames[i]->index;
                post({step, DiffusionDocument::computeAttention(*model, label, *frames[i], cb)});
                cb.report(static_cast<double>(i + 1) / frames.size(),
                          "attention of step " + std::to_string(step));
            }
            return true;
        },
        [this, runId](Partial maps) {
            if (m_doc->runId() == runId) m_doc->storeAttention(maps.first, maps.second);
        },
        [this](bool) { attentionJobEnded(); });
}

void DiffusionPage::attentionJobEnded() {
    m_attentionJob = 0;
    if (!m_attentionAgain) return;
    m_attentionAgain = false;
    requestAttention();
}

bool DiffusionPage::isPlaying() const {
    return m_playTimer->isActive();
}

void DiffusionPage::setPlaying(bool playing) {
    if (playing && !m_doc->hasRun()) playing = false;
    if (playing && m_doc->currentStep() + 1 >= m_doc->completedSteps() && !m_doc->running())
        m_doc->setCurrentStep(0);
    if (playing)
        m_playTimer->start();
    else
        m_playTimer->stop();
    const QSignalBlocker block(m_play);
    m_play->setChecked(playing);
    m_play->setText(playing ? tr("Pause") : tr("Play"));
}

bool DiffusionPage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_overlay && (event->type() == QEvent::Resize || event->type() == QEvent::Move))
        syncColorBarSpan();
    return QWidget::eventFilter(watched, event);
}

void DiffusionPage::syncColorBarSpan() {
    // The bar spans the picture (mapped into the bar's coordinates); nothing is resized.
    const QRectF picture = m_overlay->imageRect();
    const QPoint top =
        m_colorBar->mapFrom(m_overlay->parentWidget(), m_overlay->mapToParent(picture.topLeft().toPoint()));
    m_colorBar->setSpan(top.y(), static_cast<int>(picture.height()));
}

void DiffusionPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (!m_firstShow) return;
    m_firstShow = false;
    if (!m_doc->hasRun()) generate(); // waits for the model when it is still loading
}

// --- views ----------------------------------------------------------------------------------

void DiffusionPage::syncControls() {
    const QSignalBlocker b1(m_class), b4(m_keySide), b5(m_over);
    const int classes = m_doc->classCount();
    if (m_class->count() != classes) {
        m_class->clear();
        for (int c = 0; c < classes; ++c)
            m_class->addItem(QStringLiteral("%1 · %2").arg(c).arg(m_doc->className(c)));
    }
    m_class->setEnabled(classes > 0);
    m_class->setToolTip(classes > 0 ? tr("The class the image is generated for")
                                    : tr("This model is unconditional"));
    QStringList layers;
    for (const auto& l : m_doc->layers())
        layers << QStringLiteral("%1 · %2×%3 · %4")
                      .arg(DiffusionDocument::shortLayerName(l))
                      .arg(l.height)
                      .arg(l.width)
                      .arg(QString::fromLatin1(unetPathName(l.path)));
    m_mapBox->setLayers(layers);
    m_mapBox->setSelection(m_doc->layer(), m_doc->headCount(), {m_doc->head(), m_doc->fusion()});
    for (int i = 0; i < m_mapBox->layerCombo()->count(); ++i)
        m_mapBox->layerCombo()->setItemData(i, m_doc->layerDescription(i), Qt::ToolTipRole);
    m_keySide->setChecked(m_doc->keySide());
    m_over->setCurrentIndex(m_doc->onNoisy() ? 1 : 0);
    m_queryLabel->setText(m_doc->queryDescription());
    m_uView->setSelected(m_doc->layers().empty() ? -1 : m_doc->layer());
    m_generate->setEnabled(m_doc->model() != nullptr);
    if (m_doc->model()) m_steps->setMaximum(m_doc->model()->scheduler.numTrainTimesteps);
}

void DiffusionPage::refreshStep() {
    const int n = m_doc->completedSteps(), step = m_doc->currentStep();
    {
        const QSignalBlocker block(m_timeline);
        m_timeline->setRange(0, std::max(0, m_doc->stepCount() - 1));
        m_timeline->setValue(std::max(step, 0));
    }
    m_timeline->setEnabled(n > 0);
    m_prev->setEnabled(step > 0);
    m_next->setEnabled(step >= 0 && step + 1 < n);
    m_play->setEnabled(n > 1);
    m_stepLabel->setText(
        m_doc->running()
            ? tr("%1 · generating %2 / %3").arg(m_doc->stepDescription(step)).arg(n).arg(m_doc->stepCount())
            : m_doc->stepDescription(step));
    if (step < 0) {
        m_stepImages->clear();
        return;
    }
    const DiffusionFrame& f = m_doc->frame(step);
    auto big = [](const ImageU8& img) {
        return toQImage(enlargeNearest(img, enlargeFactor(img, kTileMinSide)));
    };
    std::vector<QImage> tiles{big(f.noisy), big(f.noise), big(f.clean)};
    QStringList titles{tr("x_t (t = %1)").arg(f.step.timestep), tr("predicted noise ε̂"), tr("predicted x̂0")};
    if (!m_doc->finalImage().empty()) {
        tiles.push_back(big(m_doc->finalImage()));
        titles << tr("final image");
    }
    m_stepImages->setTiles(std::move(tiles), titles);
    m_stepImages->setSelected(m_doc->onNoisy() ? 0 : 2);
}

void DiffusionPage::refreshMapsSoon() {
    if (!m_doc->running() || !m_mapsDrawn.isValid() || m_mapsDrawn.elapsed() >= kRunRefreshMs) {
        refreshMaps();
        return;
    }
    if (!m_mapsTimer->isActive()) m_mapsTimer->start(static_cast<int>(kRunRefreshMs - m_mapsDrawn.elapsed()));
}

void DiffusionPage::refreshMaps() {
    m_mapsTimer->stop();
    m_mapsDrawn.start();
    const int step = m_doc->currentStep();
    if (step < 0) {
        m_overlay->clear();
        m_uView->setTiles({});
        m_strip->clear();
        m_colorBar->clearRange();
        m_viewTitle->setText(m_doc->model() ? tr("Press Generate.") : tr("No model"));
        return;
    }
    m_stepImages->setSelected(m_doc->onNoisy() ? 0 : 2);
    const int h = m_doc->imageHeight(), w = m_doc->imageWidth();
    // The large view at the image's own size (the widget enlarges it with crisp pixels).
    const QImage view = toQImage(m_doc->renderView(step, 1));
    if (m_overlay->grid().imageWidth() != w || m_overlay->grid().imageHeight() != h)
        m_overlay->setPicture(view, PatchGrid(w, h, w, h, 1));
    else
        m_overlay->setPicture(view);
    const PixelRegion& q = m_doc->query();
    std::vector<int> pixels;
    for (int r = q.row0; r <= q.row1; ++r)
        for (int c = q.col0; c <= q.col1; ++c)
            pixels.push_back(r * w + c);
    m_overlay->setSelection(pixels, false);

    const RowMatrix map = m_doc->currentMap();
    const bool hasMap = map.size() > 0;
    m_colorBar->setColorMap(m_doc->colorMap());
    syncColorBarSpan();
    if (hasMap)
        m_colorBar->setRange(map.minCoeff(), map.maxCoeff());
    else
        m_colorBar->clearRange();
    const QString heads =
        m_doc->head() >= 0
            ? tr("head %1").arg(m_doc->head())
            : tr("%1 of heads").arg(m_doc->fusion() == HeadFusion::Max ? tr("max") : tr("mean"));
    m_viewTitle->setText(m_doc->layers().empty()
                             ? tr("%1 — this U-Net has no attention layer").arg(m_doc->stepDescription(step))
                             : tr("%1 · %2 · %3 · over %4%5")
                                   .arg(m_doc->queryDescription(), m_doc->layerDescription(m_doc->layer()),
                                        heads, m_doc->onNoisy() ? tr("x_t") : tr("x̂0"),
                                        hasMap ? QString() : tr(" (computing attention…)")));

    std::vector<QImage> tiles;
    for (int l = 0; l < static_cast<int>(m_doc->layers().size()); ++l) {
        const RgbImage px = m_doc->attention(step) ? m_doc->renderLayerTile(l, kTileMinSide) : RgbImage{};
        tiles.push_back(toQImage(px));
    }
    m_uView->setTiles(std::move(tiles));

    const std::vector<int> stripSteps = m_doc->stripSteps();
    std::vector<QImage> strip;
    QStringList titles;
    for (int s : stripSteps) {
        strip.push_back(toQImage(m_doc->renderView(s, kTileMinSide)));
        titles << tr("step %1 · t=%2").arg(s).arg(m_doc->frame(s).step.timestep);
    }
    m_strip->setMaxColumns(DiffusionDocument::kStripTiles);
    m_strip->setTiles(std::move(strip), titles);
    const auto it = std::find(stripSteps.begin(), stripSteps.end(), step);
    m_strip->setSelected(it == stripSteps.end() ? -1 : static_cast<int>(it - stripSteps.begin()));
    m_stripTitle->setText(
        tr("The query across the steps — %1")
            .arg(DiffusionDocument::shortLayerName(
                m_doc->layers().empty() ? UNetAttentionInfo{}
                                        : m_doc->layers()[static_cast<size_t>(m_doc->layer())])));
    if (!m_doc->running()) requestAttention();
}

} // namespace attnlens::ui
