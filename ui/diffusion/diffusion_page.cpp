#include "ui/diffusion/diffusion_page.h"

#include "core/export/npy.h"
#include "core/export/overlay.h"
#include "core/io/model_folder.h"
#include "core/util/error.h"
#include "core/util/random.h"
#include "ui/diffusion/diffusion_session.h"
#include "ui/diffusion/diffusion_settings_box.h"
#include "ui/diffusion/diffusion_views.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/shell/inference_worker.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"
#include "ui/widgets/playback_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace attnlens::ui {

DiffusionPage::DiffusionPage(QWidget* parent, const QString& modelDir)
    : WorkspacePage(ModelKind::Diffusion, parent), m_doc(new DiffusionDocument(this)),
      m_lenses(new DiffusionLenses(m_doc, worker(), this)) {
    QWidget* bar = buildTopBar(); // built in this order: later builders use what earlier ones made
    QWidget* sidebar = buildSidebar();
    auto* centre = new QWidget(this);
    auto* centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->addLayout(buildTimeline());
    m_views = new DiffusionViews(m_doc, centre);
    centreLayout->addWidget(m_views, 1);
    assembleWorkspace(this, bar, messageLine(), sidebar, centre);
    connect(m_lenses, &DiffusionLenses::attentionWanted, this, &DiffusionPage::requestAttention);
    connect(m_lenses, &DiffusionLenses::notice, this,
            [this](const QString& text, bool error) { error ? showError(text) : showNotice(text); });

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
    const QString png = tr("PNG image (*.png)");
    const auto trajectory = [this](const QString& path) {
        exportTrajectory(path);
        return false; // the job says when it is written
    };
    m_export = exportButton(
        bar,
        {{tr("View as PNG…"), png, "-view.png", [this](const QString& p) { return exportView(p); }},
         {tr("U view as PNG…"), png, "-u.png", [this](const QString& p) { return exportUView(p); }},
         {tr("Step strip as PNG…"), png, "-strip.png", [this](const QString& p) { return exportStrip(p); }},
         {tr("Trajectory as animated GIF…"), tr("GIF image (*.gif)"), "-trajectory.gif", trajectory},
         {tr("Trajectory as PNG sequence…"), {}, {}, trajectory},
         {tr("Map as NumPy (.npy)…"), tr("NumPy array (*.npy)"), "-map.npy",
          [this](const QString& p) { return exportMap(p); }},
         {tr("Map as CSV…"), tr("CSV (*.csv)"), "-map.csv",
          [this](const QString& p) { return exportMap(p); }}});
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
        m_views->uView()->setLayers(m_doc->layers(), labels);
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

    m_settings = new DiffusionSettingsBox(panel);
    connect(m_settings, &DiffusionSettingsBox::generateRequested, this, &DiffusionPage::generate);
    layout->addWidget(m_settings);
    layout->addWidget(buildQueryBox(panel));
    layout->addWidget(buildMapBox(panel));
    auto* display = new MapDisplayBox(m_doc->opacity(), m_doc->colorMap(), panel);
    connect(display, &MapDisplayBox::opacityChanged, m_doc, &DiffusionDocument::setOpacity);
    connect(display, &MapDisplayBox::colorMapChanged, m_doc, &DiffusionDocument::setColorMap);
    layout->addWidget(display);
    layout->addStretch(1);
    return scroll;
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
    m_mapBox->bind(m_doc, m_lenses);
    m_over = new QComboBox(m_mapBox);
    m_over->setObjectName(QStringLiteral("over"));
    m_over->addItems({tr("x̂0 (predicted image)"), tr("x_t (noisy input)")});
    connect(m_over, &QComboBox::currentIndexChanged, this, [this](int i) { m_doc->setOnNoisy(i == 1); });
    m_mapBox->addRow(tr("Over:"), m_over);
    m_valueWeighted = valueWeightedBox(m_mapBox, tr("pixel"), tr("Per head before the fusion."));
    connect(m_valueWeighted, &QCheckBox::toggled, m_doc, &DiffusionDocument::setValueWeighted);
    m_mapBox->addRow(m_valueWeighted);
    return m_mapBox;
}

// --- model and runs -------------------------------------------------------------------------

void DiffusionPage::openModel(const QString& dir) {
    // The user has moved on: a run of the current model stops (its steps stay if the new folder fails to
    // load) instead of holding the load back until its last step.
    if (isBusy()) worker()->cancel();
    struct Loaded {
        std::shared_ptr<const DiffusionModel> model;
        PrecisionNote note;
    };
    loadModel<Loaded>(
        dir,
        [path = dir.toStdString()](const Callbacks& cb) {
            auto model = std::make_shared<const DiffusionModel>(loadDiffusionModel(path));
            if (model->unet->textConditioned())
                throw Error(
                    "'" + path +
                    "' holds a text-conditioned U-Net (UNet2DConditionModel, Stable Diffusion's): this "
                    "page runs UNet2DModel folders; `attnlens-cli unet --encoder-states` runs this one");
            PrecisionNote note;
            // on seeded noise at the middle timestep, at most 32×32 (a 256² model's check stays short)
            if (linearPrecision() == LinearPrecision::Bf16) {
                cb.report(1.0, "checking bf16 against fp32");
                note = PrecisionNote::measure("noise", [&] {
                    const auto& c = model->unet->config();
                    const int m = c.sizeMultiple(),
                              wanted = c.sampleSize > 0 ? std::min(c.sampleSize, 32) : 32;
                    const int size = std::max(m, wanted / m * m);
                    UNetConditioning conditioning;
                    if (c.numClassEmbeds > 0) conditioning.classLabel = 0;
                    return unetPrecisionParity(*model->unet, NormalRng(0).tensor({c.inChannels, size, size}),
                                               0.5f * static_cast<float>(model->scheduler.numTrainTimesteps),
                                               conditioning);
                });
            }
            return Loaded{std::move(model), note};
        },
        [this, dir](Loaded loaded) {
            setPlaying(false);
            m_precisionNote = loaded.note;
            m_doc->setModel(std::move(loaded.model), QFileInfo(QDir::cleanPath(dir)).fileName());
            m_requested.clear();
            if (!restoreState()) useFolderScheduler();
            m_modelLabel->setToolTip(m_precisionNote.sentence);
            if (!m_precisionNote.empty()) showNotice(m_precisionNote.sentence);
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

// A pipeline's scheduler_config.json names the scheduler it was saved with: the page starts with that one
// (a DDPMPipeline opened with DDIM selected surprised people); other or no names leave the choice as it is.
void DiffusionPage::useFolderScheduler() {
    const std::string& name = m_doc->model()->scheduler.className;
    if (name != "DDPMScheduler" && name != "DDIMScheduler") return;
    DiffusionSettings s = m_settings->settings();
    s.scheduler = name == "DDPMScheduler" ? SchedulerKind::Ddpm : SchedulerKind::Ddim;
    m_settings->setSettings(s);
}

DiffusionSettings DiffusionPage::settingsFromControls() const {
    return m_settings->settings();
}

void DiffusionPage::setSettings(const DiffusionSettings& s) {
    m_settings->setSettings(s);
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
    if (!m_precisionNote.empty()) showNotice(m_precisionNote.sentence); // what this run computes with
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
    return m_playback->isPlaying();
}

void DiffusionPage::setPlaying(bool playing) {
    if (playing && !m_doc->hasRun()) playing = false;
    if (playing && m_doc->currentStep() + 1 >= m_doc->completedSteps() && !m_doc->running())
        m_doc->setCurrentStep(0);
    m_playback->setPlaying(playing);
}

void DiffusionPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (!m_firstShow) return;
    m_firstShow = false;
    if (!m_doc->hasRun()) generate(); // waits for the model when it is still loading
}

// --- views ----------------------------------------------------------------------------------

void DiffusionPage::syncControls() {
    const QSignalBlocker b4(m_keySide), b5(m_over), b6(m_valueWeighted);
    m_settings->syncModel(*m_doc);
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
    m_valueWeighted->setChecked(m_doc->valueWeighted());
    m_queryLabel->setText(m_doc->queryDescription());
    m_views->uView()->setSelected(m_doc->layers().empty() ? -1 : m_doc->layer());
}

void DiffusionPage::refreshMapsSoon() {
    if (!m_doc->running() || !m_mapsDrawn.isValid() || m_mapsDrawn.elapsed() >= kRunRefreshMs) {
        refreshMaps();
        return;
    }
    if (!m_mapsTimer->isActive()) m_mapsTimer->start(static_cast<int>(kRunRefreshMs - m_mapsDrawn.elapsed()));
}

// Timeline: ◀ Back, Play, Step ▶ (PlaybackBar), the slider over the steps and the step's description.
QLayout* DiffusionPage::buildTimeline() {
    auto* timeline = new QHBoxLayout;
    m_playback = new PlaybackBar({{}, tr("Previous step"), tr("Play the steps"), tr("Next step")}, 150, this);
    m_playback->addShortcuts(this, tr("Next denoising step"), tr("Previous denoising step"));
    connect(m_playback, &PlaybackBar::stepBack, this,
            [this] { m_doc->setCurrentStep(m_doc->currentStep() - 1); });
    connect(m_playback, &PlaybackBar::stepForward, this,
            [this] { m_doc->setCurrentStep(m_doc->currentStep() + 1); });
    connect(m_playback, &PlaybackBar::playingRequested, this, &DiffusionPage::setPlaying);
    connect(m_playback, &PlaybackBar::tick, this, [this] {
        if (m_doc->currentStep() + 1 < m_doc->completedSteps())
            m_doc->setCurrentStep(m_doc->currentStep() + 1);
        else if (!m_doc->running())
            setPlaying(false);
    });
    m_timeline = new QSlider(Qt::Horizontal, this);
    m_timeline->setObjectName(QStringLiteral("timeline"));
    m_timeline->setToolTip(tr("The denoising steps, from pure noise (left) to the image (right)"));
    connect(m_timeline, &QSlider::valueChanged, m_doc, &DiffusionDocument::setCurrentStep);
    m_stepLabel = caption(QString(), this);
    m_stepLabel->setObjectName(QStringLiteral("stepLabel"));
    m_stepLabel->setMinimumWidth(200);
    timeline->addWidget(m_playback);
    timeline->addWidget(m_timeline, 1);
    timeline->addWidget(m_stepLabel);
    return timeline;
}

void DiffusionPage::refreshStep() {
    const int n = m_doc->completedSteps(), step = m_doc->currentStep();
    {
        const QSignalBlocker block(m_timeline);
        m_timeline->setRange(0, std::max(0, m_doc->stepCount() - 1));
        m_timeline->setValue(std::max(step, 0));
    }
    m_timeline->setEnabled(n > 0);
    m_playback->setAvailable(step > 0, step >= 0 && step + 1 < n, n > 1);
    m_stepLabel->setText(
        m_doc->running()
            ? tr("%1 · generating %2 / %3").arg(m_doc->stepDescription(step)).arg(n).arg(m_doc->stepCount())
            : m_doc->stepDescription(step));
    m_views->refreshStepImages();
}

void DiffusionPage::refreshMaps() {
    m_mapsTimer->stop();
    m_mapsDrawn.start();
    m_views->refreshMaps();
    if (m_doc->currentStep() >= 0 && !m_doc->running()) requestAttention();
}

PatchImageView* DiffusionPage::overlayView() const {
    return m_views->overlayView();
}
UShapeView* DiffusionPage::uView() const {
    return m_views->uView();
}
MapGridView* DiffusionPage::stepStrip() const {
    return m_views->stepStrip();
}
MapGridView* DiffusionPage::stepImages() const {
    return m_views->stepImages();
}
ColorBar* DiffusionPage::colorBar() const {
    return m_views->colorBar();
}

// --- exports --------------------------------------------------------------------------------

namespace {

constexpr int kExportMinSide = 256; // exported views, as `attnlens-cli diffuse --overlay` draws them

void savePng(const QImage& image, const QString& path) {
    if (image.isNull()) throw Error("nothing to export yet: generate an image first");
    if (!image.save(path, "PNG")) throw Error("'" + path.toStdString() + "': cannot write the file");
}

} // namespace

QString DiffusionPage::exportBaseName() const {
    return QStringLiteral("%1-step%2").arg(m_doc->modelName()).arg(m_doc->currentStep());
}

bool DiffusionPage::exportView(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        if (m_doc->currentStep() < 0) throw Error("nothing to export yet: generate an image first");
        writePng(p.toStdString(), m_doc->renderView(m_doc->currentStep(), kExportMinSide));
    });
}

bool DiffusionPage::exportUView(const QString& path) {
    return exportWith(path, [this](const QString& p) { savePng(m_views->uViewImage(), p); });
}

bool DiffusionPage::exportStrip(const QString& path) {
    return exportWith(path, [this](const QString& p) { savePng(m_views->stripImage(), p); });
}

bool DiffusionPage::exportMap(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        const RowMatrix map = m_doc->currentMap(); // [h, w] of the layer
        if (map.size() == 0) throw Error("no map to export yet: generate an image first");
        writeMatrix(p.toStdString(), map);
    });
}

void DiffusionPage::exportTrajectory(const QString& path) {
    if (!m_doc->hasRun() || m_doc->running()) {
        showError(tr("Export the trajectory once a run has finished."));
        return;
    }
    DiffusionDocument::Trajectory t;
    for (int s = 0; s < m_doc->completedSteps(); ++s) {
        t.frames.push_back(m_doc->frameShared(s));
        t.attention.push_back(m_doc->attention(s));
    }
    t.view = m_doc->view();
    t.view.minSide = kExportMinSide;
    t.layer = m_doc->layers().empty() ? -1 : m_doc->layer();
    const bool gif = path.endsWith(QStringLiteral(".gif"), Qt::CaseInsensitive);
    worker()->run<int>(
        gif ? tr("Writing the GIF") : tr("Writing the PNG sequence"),
        [model = m_doc->model(), label = m_doc->settings().classLabel, t, gif,
         out = path.toStdString()](const Callbacks& cb) {
            return DiffusionDocument::writeTrajectory(*model, label, t, out, gif, cb);
        },
        [this, path](int count) {
            showNotice(tr("Wrote %n frame(s) to %1.", nullptr, count).arg(path));
            emit exported(path);
        });
}

// --- session (ui/diffusion/diffusion_session.h) --------------------------------------------

QJsonObject DiffusionPage::saveSession() const {
    DiffusionSession d = DiffusionSession::capture(*m_doc);
    d.settings = m_doc->hasRun() ? m_doc->settings() : settingsFromControls();
    d.ablated = m_lenses->ablated();
    if (const auto* w = m_lenses->differenceWindow(); w && w->hasPin())
        d.pinned = PinnedMap{w->pinnedMap(), w->pinnedDescription()};
    QJsonObject s = modelSessionState();
    d.write(s);
    return s;
}

QString DiffusionPage::checkSession(const QJsonObject& state) const {
    SessionReader r = sessionReader(state);
    (void)DiffusionSession::parse(r);
    return r.error();
}

bool DiffusionPage::restoreInputs(const QJsonObject& state) {
    SessionReader r = sessionReader(state);
    const DiffusionSession d = DiffusionSession::parse(r);
    if (!r.ok()) {
        showError(r.error());
        return false;
    }
    setPlaying(false);
    m_firstShow = false; // the session decides whether there is a run
    m_generateWhenLoaded = false;
    d.applyLook(*m_doc);
    return true;
}

// The model is here: the settings, then the run (made again; its end applies the view) or the view now.
void DiffusionPage::continueRestore() {
    if (!restoreState()) return;
    if (!m_doc->model()) {
        endRestore();
        showError(tr("Session restored without a model: open a diffusion model with File → Open model…"));
        return;
    }
    SessionReader r = sessionReader(*restoreState());
    const DiffusionSession d = DiffusionSession::parse(r);
    setSettings(d.settings);
    if (d.generated)
        generate(); // then applyRestoredView()
    else
        applyRestoredView();
}

void DiffusionPage::applyRestoredView() {
    if (!restoreState()) return;
    SessionReader r = sessionReader(*restoreState());
    const DiffusionSession d = DiffusionSession::parse(r);
    endRestore();
    d.applyView(*m_doc);
    syncControls();
    if (!d.ablated.empty()) m_lenses->setAblated(d.ablated);
    if (d.pinned) m_lenses->pinAs(d.pinned->map, d.pinned->description);
    showNotice(tr("Session restored."));
}

} // namespace attnlens::ui
