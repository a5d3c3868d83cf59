#include "ui/vision/vision_page.h"

#include "core/analysis/precision_parity.h"
#include "core/export/npy.h"
#include "core/io/model_folder.h"
#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "core/vision/preprocess.h"
#include "ui/render/heatmap_image.h"
#include "ui/render/overlay_caption.h"
#include "ui/shell/inference_worker.h"
#include "ui/vision/clip_text_box.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/sample_gallery.h"
#include "ui/vision/vision_session.h"
#include "ui/vision/vision_views.h"
#include "ui/widgets/elided_label.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"
#include "ui/widgets/precision_note.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace attnlens::ui {

namespace {

// A switch of the Map box: named (tests, screenshots), explained by its tooltip, bound to the document.
QCheckBox* mapSwitch(QWidget* parent, const QString& text, const char* name, const QString& tip,
                     VisionDocument* doc, void (VisionDocument::*set)(bool)) {
    auto* box = new QCheckBox(text, parent);
    box->setObjectName(QLatin1String(name));
    box->setToolTip(tip);
    QObject::connect(box, &QCheckBox::toggled, doc, set);
    return box;
}

// What the loader hands the page: the vision tower, a CLIPModel's text side, the bf16 note.
struct LoadedVision {
    std::shared_ptr<const VitModel> model;
    std::shared_ptr<const ClipTextSide> text;
    PrecisionNote note;
};

QString ms(double seconds) {
    return QString::number(seconds * 1000.0, 'f', seconds < 0.1 ? 1 : 0) + " ms";
}

} // namespace

VisionPage::VisionPage(QWidget* parent, const QString& modelDir)
    : WorkspacePage(ModelKind::Vit, parent), m_doc(new VisionDocument(this)),
      m_lenses(new VisionLenses(m_doc, worker(), this)) {
    setAcceptDrops(true);
    QWidget* bar = buildTopBar(); // built in this order: later builders use what earlier ones made
    QWidget* sidebar = buildSidebar();
    m_views = new VisionViews(m_doc, this);
    QWidget* centre = m_views;
    assembleWorkspace(this, bar, messageLine(), sidebar, centre);

    auto* pasteShortcut = new QShortcut(QKeySequence::Paste, this);
    pasteShortcut->setWhatsThis(tr("Paste an image from the clipboard"));
    pasteShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(pasteShortcut, &QShortcut::activated, this, &VisionPage::pasteImage);

    connectDocument();
    connect(m_lenses, &VisionLenses::ablationChanged, this, [this] {
        if (!m_lastImage.empty())
            runImage(m_lastImage, m_imageLabel->property("source").toString(), m_lastImagePath);
    });
    connect(m_lenses, &VisionLenses::notice, this,
            [this](const QString& text, bool error) { error ? showError(text) : showNotice(text); });

    const int samples = m_gallery->loadSamples();
    if (!m_gallery->problem().isEmpty()) showNotice(m_gallery->problem()); // surfaced, never swallowed
    if (samples > 0) m_pendingSample = m_gallery->samplePaths().front();
    syncControls();
    openFirstModel(modelDir);
}

VisionPage::~VisionPage() = default;

PatchImageView* VisionPage::imageView() const {
    return m_views->imageView();
}
HeatmapView* VisionPage::rawMapView() const {
    return m_views->rawMapView();
}
MapGridView* VisionPage::headsGrid() const {
    return m_views->headsGrid();
}
MapGridView* VisionPage::layersStrip() const {
    return m_views->layersStrip();
}
PredictionsView* VisionPage::predictionsView() const {
    return m_views->predictionsView();
}

// Top bar: image source, model, progress (JobStatus) and export.
QWidget* VisionPage::buildTopBar() {
    auto* bar = panelFrame(this, QStringLiteral("visionBar"), 4);
    auto* barLayout = new QHBoxLayout(bar);
    barLayout->setContentsMargins(8, 4, 8, 4);
    auto* open = new QPushButton(tr("Open image…"), bar);
    open->setObjectName(QStringLiteral("openImage"));
    open->setToolTip(tr("Open a PNG, JPEG, BMP, TIFF or WebP image (or drop one on the page)"));
    connect(open, &QPushButton::clicked, this, &VisionPage::chooseImage);
    auto* paste = new QPushButton(tr("Paste"), bar);
    paste->setObjectName(QStringLiteral("pasteImage"));
    paste->setToolTip(tr("Paste an image from the clipboard (Ctrl+V)"));
    connect(paste, &QPushButton::clicked, this, &VisionPage::pasteImage);
    m_imageLabel = new ElidedLabel(bar); // ends in "…" when narrow (it was cut mid-word: "forward 12.")
    m_imageLabel->setText(tr("No image"));
    // A long file name or a large picture's description is clipped (full text in the tooltip) instead
    // of widening the bar and with it the window.
    m_imageLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_imageLabel->setMinimumWidth(120);
    m_modelLabel = new QLabel(bar);
    mute(m_modelLabel);
    auto* jobStatus = new JobStatus(worker(), bar);
    const QString png = tr("PNG image (*.png)");
    m_export =
        exportButton(bar, {{tr("Overlay as PNG (original resolution)…"), png, "-overlay.png",
                            [this](const QString& p) { return exportOverlay(p); }},
                           {tr("Overlay with colour bar and caption (PNG)…"), png, "-overlay-captioned.png",
                            [this](const QString& p) { return exportCaptionedOverlay(p); }},
                           {tr("Heads grid as PNG…"), png, "-heads.png",
                            [this](const QString& p) { return exportHeadsGrid(p); }},
                           {tr("Map as NumPy (.npy)…"), tr("NumPy array (*.npy)"), "-map.npy",
                            [this](const QString& p) { return exportMap(p); }},
                           {tr("Map as CSV…"), tr("CSV (*.csv)"), "-map.csv",
                            [this](const QString& p) { return exportMap(p); }}});
    barLayout->addWidget(open);
    barLayout->addWidget(paste);
    barLayout->addSpacing(12);
    barLayout->addWidget(m_imageLabel, 1);
    barLayout->addWidget(m_modelLabel);
    barLayout->addWidget(jobStatus);
    barLayout->addWidget(m_export);
    return bar;
}

// Document → views.
void VisionPage::connectDocument() {
    connect(m_doc, &VisionDocument::modelChanged, this, [this] {
        syncControls();
        m_modelLabel->setText(modelDescription());
        m_modelLabel->setToolTip(m_precisionNote.sentence);
    });
    connect(m_doc, &VisionDocument::imageChanged, this, [this] {
        refreshPredictions();
        refreshMaps();
    });
    connect(m_doc, &VisionDocument::selectionChanged, this, [this] {
        syncControls();
        refreshMaps();
    });
    connect(m_doc, &VisionDocument::viewChanged, this, [this] {
        syncControls();
        refreshMaps();
    });
    connect(m_doc, &VisionDocument::lookChanged, this, &VisionPage::refreshMaps);
}

void VisionPage::jobCancelled(int) {
    m_lenses->forgetFlowRequest();
    showNotice(tr("Cancelled."));
}

QWidget* VisionPage::buildSidebar() {
    const auto [scroll, panel, layout] = makeSidebar(this, 292);

    layout->addWidget(buildSamplesBox(panel));
    layout->addWidget(buildQueryBox(panel));
    m_textBox = new ClipTextBox(m_doc, panel);
    connect(m_textBox, &ClipTextBox::textsEntered, this, &VisionPage::runTexts);
    layout->addWidget(m_textBox);
    layout->addWidget(buildMapBox(panel));
    layout->addWidget(buildDisplayBox(panel));

    m_timing = hint(QString(), panel);
    layout->addWidget(m_timing);
    layout->addStretch(1);
    return scroll;
}

QWidget* VisionPage::buildSamplesBox(QWidget* panel) {
    auto* samplesBox = new QGroupBox(tr("Samples"), panel);
    auto* samplesLayout = new QVBoxLayout(samplesBox);
    m_gallery = new SampleGallery(samplesBox);
    m_gallery->setObjectName(QStringLiteral("samples"));
    m_gallery->setFixedHeight(206);
    connect(m_gallery, &SampleGallery::sampleChosen, this, [this](const QString& path) { openImage(path); });
    samplesLayout->addWidget(m_gallery);
    samplesLayout->addWidget(
        hint(tr("…or drop an image here, paste one (Ctrl+V) or use Open image."), samplesBox));
    return samplesBox;
}

QWidget* VisionPage::buildQueryBox(QWidget* panel) {
    auto* queryBox = new QGroupBox(tr("Query"), panel);
    auto* queryLayout = new QVBoxLayout(queryBox);
    auto* queryRow = new QHBoxLayout;
    m_clsButton = new QPushButton(tr("CLS"), queryBox);
    m_clsButton->setObjectName(QStringLiteral("clsButton"));
    m_clsButton->setCheckable(true);
    m_clsButton->setToolTip(tr("Use the class token as the query"));
    connect(m_clsButton, &QPushButton::clicked, this, [this] {
        m_doc->selectCls();
        syncControls(); // a click on the checked button would otherwise uncheck it
    });
    m_registerBox = new QComboBox(queryBox);
    m_registerBox->setObjectName(QStringLiteral("registerQuery"));
    m_registerBox->setToolTip(tr("A register token as the query: where it reads from (with Key side: which "
                                 "patches read it)"));
    connect(m_registerBox, &QComboBox::activated, this, [this](int i) {
        if (i > 0) m_doc->selectRegister(i - 1);
    });
    m_selectionLabel = new QLabel(queryBox);
    queryRow->addWidget(m_clsButton);
    queryRow->addWidget(m_registerBox);
    queryRow->addWidget(m_selectionLabel, 1);
    queryLayout->addLayout(queryRow);
    auto* form = new QFormLayout;
    m_reduce = new QComboBox(queryBox);
    m_reduce->setObjectName(QStringLiteral("reduce"));
    m_reduce->addItems({tr("Sum"), tr("Mean")});
    m_reduce->setToolTip(tr("How the maps of several selected patches are combined"));
    connect(m_reduce, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_doc->setReduce(i == 0 ? TokenReduce::Sum : TokenReduce::Mean); });
    form->addRow(tr("Several patches:"), m_reduce);
    queryLayout->addLayout(form);
    m_keySide = new QCheckBox(tr("Key side: who attends to the selection"), queryBox);
    m_keySide->setObjectName(QStringLiteral("keySide"));
    connect(m_keySide, &QCheckBox::toggled, m_doc, &VisionDocument::setKeySide);
    queryLayout->addWidget(m_keySide);
    queryLayout->addWidget(
        hint(tr("Click a patch to make it the query; shift-click or drag to select several."), queryBox));
    return queryBox;
}

QWidget* VisionPage::buildMapBox(QWidget* panel) {
    m_mapBox = new MapLensBox(
        {tr("What every head does on this picture: entropy, distance, share on CLS, … (sortable)"),
         tr("The neuron view: the query patch's score for one key taken apart — the head's query and key "
            "vectors, their products per dimension, q·k, ÷√d_k and the softmax"),
         tr("Difference maps: keep this map as A, then change the picture, layer, head, query or model and "
            "compare (A, B and A − B in a window)")},
        panel);
    m_mapBox->bind(m_doc, m_lenses);
    m_rollout = mapSwitch(m_mapBox, tr("Rollout through layers 0…L"), "rollout",
                          tr("Attention rollout (Abnar & Zuidema 2020): heads fused, residual added, "
                             "layers multiplied up to the chosen layer"),
                          m_doc, &VisionDocument::setRollout);
    m_flow = mapSwitch(
        m_mapBox, tr("Attention flow through layers 0…L"), "flow",
        tr("Attention flow (Abnar & Zuidema 2020): a maximum flow through the layers, heads fused and "
           "the residual added — unlike rollout, a path is only as strong as its weakest edge. One "
           "max-flow per patch: computed on the worker; too large an input falls back to rollout."),
        m_doc, &VisionDocument::setFlow);
    m_norms = mapSwitch(
        m_mapBox, tr("Token norms ‖x‖ after layer L"), "tokenNorms",
        tr("The norm of every patch token's residual stream after the layer, instead of attention: the "
           "high-norm outlier patches of \"Vision Transformers Need Registers\" (Darcet et al. 2024) stand "
           "out. The title gives CLS's and the registers' norms."),
        m_doc, &VisionDocument::setTokenNorms);
    auto* weighted = valueWeightedBox(
        m_mapBox, tr("patch"), tr("Per head before the fusion; rollout and flow stay on the weights."));
    connect(weighted, &QCheckBox::toggled, m_doc, &VisionDocument::setValueWeighted);
    m_mapBox->addRow(m_rollout);
    m_mapBox->addRow(m_flow);
    m_mapBox->addRow(m_norms);
    m_mapBox->addRow(weighted);
    return m_mapBox;
}

QWidget* VisionPage::buildDisplayBox(QWidget* panel) {
    auto* box = new MapDisplayBox(m_doc->opacity(), m_doc->colorMap(), panel);
    connect(box, &MapDisplayBox::opacityChanged, m_doc, &VisionDocument::setOpacity);
    connect(box, &MapDisplayBox::colorMapChanged, m_doc, &VisionDocument::setColorMap);
    m_smooth = new QCheckBox(tr("Smooth map"), box);
    m_smooth->setObjectName(QStringLiteral("smooth"));
    m_smooth->setChecked(m_doc->smooth());
    m_smooth->setToolTip(tr("Bilinear upsampling of the patch map; off shows one flat colour per patch"));
    connect(m_smooth, &QCheckBox::toggled, m_doc, &VisionDocument::setSmooth);
    box->addRow(m_smooth);
    return box;
}

QString VisionPage::modelDescription() const {
    const auto& model = m_doc->model();
    if (!model) return tr("no model");
    const VitConfig& c = model->config();
    const ImageProcessorConfig& proc = model->processor();
    const QString resize = proc.shortestEdge > 0 ? tr("shortest edge %1").arg(proc.shortestEdge)
                                                 : tr("%1×%2").arg(proc.width).arg(proc.height);
    const QString input =
        proc.doCenterCrop
            ? tr("%1, centre crop %2×%3 input").arg(resize).arg(proc.cropWidth).arg(proc.cropHeight)
            : tr("%1 input").arg(resize);
    const QString registers = c.numRegisterTokens > 0 ? tr(" · %1 registers").arg(c.numRegisterTokens)
                              : m_doc->textSide() ? (m_doc->textSide()->siglip() ? tr(" · SigLIP text tower")
                                                                                 : tr(" · CLIP text tower"))
                                                  : QString();
    return tr("%1 · %2 layers × %3 heads · patch %4%5 · %6")
        .arg(QFileInfo(QString::fromStdString(model->dir().string())).fileName())
        .arg(c.numLayers)
        .arg(c.numHeads)
        .arg(c.patchSize)
        .arg(registers, input);
}

void VisionPage::openModel(const QString& dir) {
    const std::filesystem::path path = dir.toStdString();
    // bf16 (Compute → Precision): measured against float32 once, at load, on the picture being shown
    // (or a mid-grey one).
    const ImageU8 probe = m_lastImage;
    loadModel<LoadedVision>(
        dir,
        [path, probe](const Callbacks& cb) {
            auto model = VitModel::load(path, cb);
            auto text = ClipTextSide::present(path) ? ClipTextSide::load(path, cb) : nullptr;
            PrecisionNote note;
            if (linearPrecision() == LinearPrecision::Bf16) {
                cb.report(1.0, "checking bf16 against fp32");
                ImageU8 picture = probe;
                if (picture.empty()) {
                    picture = ImageU8(64, 64, 3);
                    std::fill(picture.pixels.begin(), picture.pixels.end(), uint8_t{128});
                }
                const auto input = preprocessImage(picture, model->processor(), model->config().numChannels);
                note = PrecisionNote::measure("top-1 class",
                                              [&] { return vitPrecisionParity(*model, input.pixels); });
            }
            return LoadedVision{std::move(model), std::move(text), note};
        },
        [this](LoadedVision loaded) {
            {
                const QSignalBlocker quiet(m_lenses); // the heads of another model; modelReady() runs again
                m_lenses->setAblated({});
            }
            m_precisionNote = loaded.note;
            m_doc->setModel(std::move(loaded.model), std::move(loaded.text));
            if (!m_precisionNote.empty()) showNotice(m_precisionNote.sentence);
        });
}

// The picture on screen belongs to the previous model: run it again with this one.
void VisionPage::modelReady() {
    if (!m_lastImage.empty())
        runImage(m_lastImage, m_imageLabel->property("source").toString(), m_lastImagePath);
    else if (!m_pendingSample.isEmpty())
        openImage(std::exchange(m_pendingSample, QString()));
}

void VisionPage::openImage(const QString& pathArg) {
    const QString path = pathArg; // may refer to a member cleared below
    const std::filesystem::path file = path.toStdString();
    analyse([file] { return loadImage(file); }, QFileInfo(path).fileName(), path);
}

void VisionPage::openImage(const QImage& image, const QString& source) {
    if (image.isNull()) {
        showError(tr("The clipboard or drop held no readable image."));
        return;
    }
    runImage(fromQImage(image), source, QString());
}

void VisionPage::runImage(ImageU8 image, const QString& source, const QString& path) {
    analyse([image = std::move(image)] { return image; }, source, path);
}

void VisionPage::analyse(std::function<ImageU8()> load, const QString& source, const QString& path) {
    const auto model = m_doc->model();
    if (!model) {
        showError(tr("Load a vision model first (File → Open model…)."));
        return;
    }
    m_pendingSample.clear();
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    auto job = std::make_shared<int>(0);
    *job = worker()->run<std::shared_ptr<const VisionImage>>(
        tr("Analysing %1").arg(source),
        [model, load = std::move(load), source, ablated = m_lenses->ablated(), side = m_doc->textSide(),
         texts = m_doc->texts()](const Callbacks& cb) {
            auto image = VisionDocument::analyse(*model, load(), source, cb, ablated);
            return side && !texts.empty() ? VisionDocument::withTexts(*image, side.get(), texts) : image;
        },
        [this, path, timer, model, job](std::shared_ptr<const VisionImage> result) {
            if (result == nullptr) return;
            // while a session is restored, only its own picture counts: one asked for before (the first
            // sample, started as the built-in model arrived) would end the restore with the wrong picture
            if (restoreState() && *job != m_restoreImageJob) return;
            if (model != m_doc->model()) { // another model was opened meanwhile: analyse again with it
                const bool restoring = restoreState().has_value();
                runImage(result->image, result->source, path);
                if (restoring) m_restoreImageJob = m_analyseJob;
                return;
            }
            m_lastImagePath = path;
            m_lastImage = result->image;
            m_lastImagePng.clear();
            m_imageLabel->setProperty("source", result->source);
            dismissMessage();
            if (!m_precisionNote.empty()) showNotice(m_precisionNote.sentence);
            m_doc->setImage(std::move(result));
            m_timing->setProperty("firstOverlayMs", static_cast<double>(timer->nsecsElapsed()) / 1e6);
            if (restoreState()) applyRestoredView();
            emit resultReady();
            if (!path.isEmpty()) emit inputFileShown(path);
        });
    m_analyseJob = *job;
}

// Enter in the Texts box: kept for later pictures, run against this one on the worker; the first text's map
// is shown when no text's was.
void VisionPage::runTexts(const QString& line) {
    std::vector<std::string> texts;
    try {
        texts = splitClipTexts(line.toStdString());
    } catch (const Error& e) {
        showError(QString::fromStdString(e.what()));
        return;
    }
    m_doc->setTexts(texts);
    const auto image = m_doc->image();
    if (!image || !m_doc->textSide()) return;
    worker()->run<std::shared_ptr<const VisionImage>>(
        tr("Scoring %n text(s)", nullptr, int(texts.size())),
        [image, side = m_doc->textSide(), texts](const Callbacks&) {
            return VisionDocument::withTexts(*image, side.get(), texts);
        },
        [this, image](std::shared_ptr<const VisionImage> result) {
            if (!result || m_doc->image() != image) return; // another picture or model meanwhile
            dismissMessage();
            const bool first = !result->texts.empty() && !m_doc->textMapShown();
            m_doc->setImage(std::move(result));
            if (first) m_doc->setTextMap(0);
            m_textBox->refresh();
        });
}

void VisionPage::pasteImage() {
    const QMimeData* mime = QApplication::clipboard()->mimeData();
    if (mime && mime->hasImage()) {
        openImage(qvariant_cast<QImage>(mime->imageData()), tr("pasted image"));
    } else if (mime && mime->hasUrls() && mime->urls().value(0).isLocalFile()) {
        openImage(mime->urls().value(0).toLocalFile());
    } else {
        showError(tr("The clipboard holds no image."));
    }
}

void VisionPage::chooseImage() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open an image"), QFileInfo(m_lastImagePath).absolutePath(),
        tr("Images (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp);;All files (*)"));
    if (!path.isEmpty()) openImage(path);
}

void VisionPage::dragEnterEvent(QDragEnterEvent* event) {
    const QMimeData* mime = event->mimeData();
    // A folder or a session file is left to the window (it opens model folders and sessions); other files and
    // images are pictures.
    const QFileInfo dropped(mime->hasUrls() && mime->urls().value(0).isLocalFile()
                                ? mime->urls().value(0).toLocalFile()
                                : QString());
    const bool file =
        !dropped.filePath().isEmpty() && !dropped.isDir() && dropped.suffix() != QLatin1String("attnlens");
    if (mime->hasImage() || file) event->acceptProposedAction();
}

void VisionPage::dropEvent(QDropEvent* event) {
    const QMimeData* mime = event->mimeData();
    if (mime->hasUrls() && mime->urls().value(0).isLocalFile()) {
        openImage(mime->urls().value(0).toLocalFile());
    } else if (mime->hasImage()) {
        openImage(qvariant_cast<QImage>(mime->imageData()), tr("dropped image"));
    } else {
        return;
    }
    event->acceptProposedAction();
}

void VisionPage::syncControls() {
    const QSignalBlocker b3(m_rollout), b4(m_keySide), b5(m_reduce), b6(m_flow), b7(m_norms);
    QStringList layers;
    for (int l = 0; l < m_doc->numLayers(); ++l)
        layers << tr("Layer %1").arg(l);
    m_mapBox->setLayers(layers);
    m_mapBox->setSelection(m_doc->layer(), m_doc->numHeads(), {m_doc->head(), m_doc->fusion()});
    m_mapBox->headCombo()->setEnabled(
        (!m_doc->rollout() && !m_doc->flow() && !m_doc->tokenNorms() && !m_doc->textMapShown()) ||
        m_doc->head() < 0);
    m_rollout->setChecked(m_doc->rollout());
    m_flow->setChecked(m_doc->flow());
    m_norms->setChecked(m_doc->tokenNorms());
    m_keySide->setChecked(m_doc->keySide());
    m_keySide->setEnabled(!m_doc->flow() && !m_doc->probeQuery()); // flow is query → patches only
    m_flow->setEnabled(!m_doc->probeQuery()); // flow starts from tokens; the probe is none
    m_clsButton->setText(m_doc->hasCls() ? tr("CLS") : tr("Probe"));
    m_clsButton->setToolTip(m_doc->hasCls()
                                ? tr("Use the class token as the query")
                                : tr("SigLIP has no class token: its attention-pooling head's learned probe "
                                     "reads the last layer's patches and makes the image embedding. Its "
                                     "attention per head is the map."));
    m_reduce->setCurrentIndex(m_doc->reduce() == TokenReduce::Sum ? 0 : 1);
    m_reduce->setEnabled(m_doc->patches().size() > 1);
    m_clsButton->setChecked(m_doc->query() == VisionDocument::Query::Cls);
    if (m_registerBox->count() != m_doc->registers() + 1) {
        const QSignalBlocker b8(m_registerBox);
        m_registerBox->clear();
        m_registerBox->addItem(tr("Registers"));
        for (int r = 0; r < m_doc->registers(); ++r)
            m_registerBox->addItem(tr("reg%1").arg(r));
    }
    m_registerBox->setVisible(m_doc->registers() > 0);
    m_registerBox->setCurrentIndex(
        m_doc->query() == VisionDocument::Query::Register ? m_doc->queryRegister() + 1 : 0);
    m_textBox->refresh();
    m_selectionLabel->setText(m_doc->hasImage() ? tr("Query: %1").arg(m_doc->queryDescription()) : QString());
    m_export->setEnabled(m_doc->hasImage());
}

bool VisionPage::exportOverlay(const QString& path) {
    return exportWith(
        path, [this](const QString& p) { writePng(p.toStdString(), m_doc->renderOriginalOverlay()); });
}

bool VisionPage::exportCaptionedOverlay(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        const RowMatrix map = m_doc->currentMap();
        if (map.size() == 0) throw Error("no map to export: open an image first");
        const QString caption = tr("%1 — %2, %3")
                                    .arg(m_doc->mapDescription(), m_modelLabel->text(),
                                         QFileInfo(m_imageLabel->property("source").toString()).fileName());
        const QImage out =
            captionedOverlay(toQImage(m_doc->renderOriginalOverlay()), m_doc->colorMap(), map.minCoeff(),
                             map.maxCoeff(), caption, heatmapStyle(palette(), font()));
        if (!out.save(p, "PNG")) throw Error(p.toStdString() + ": cannot write the file");
    });
}

bool VisionPage::exportHeadsGrid(const QString& path) {
    MapGridView* grid = m_views->headsGrid();
    if (grid->count() == 0) return false;
    return exportWith(path, [grid](const QString& p) {
        const QImage img = grid->renderImage(std::max(grid->tile(0).width(), 160));
        if (!img.save(p, "PNG")) throw Error("'" + p.toStdString() + "': cannot write the file");
    });
}

bool VisionPage::exportMap(const QString& path) {
    const RowMatrix map = m_doc->currentMap(); // [rows, cols]
    if (map.size() == 0) return false;
    return exportWith(path, [&map](const QString& p) { writeMatrix(p.toStdString(), map); });
}

void VisionPage::refreshPredictions() {
    const auto& img = m_doc->image();
    const bool builtin =
        QFileInfo(loadedModelDir()).fileName() == QLatin1String(builtinModelName(ModelKind::Vit).data());
    m_views->refreshPredictions(m_gallery->expectedClass(m_lastImagePath), builtin);
    if (!img) {
        m_imageLabel->setText(tr("No image"));
        return;
    }
    const auto& grid = img->result.grid;
    // What changes from picture to picture first: its name and the forward's time, then the sizes.
    m_imageLabel->setText(tr("%1 · forward %8 · %2×%3 px → %4×%5 input · %6×%7 patches")
                              .arg(img->source)
                              .arg(img->image.width)
                              .arg(img->image.height)
                              .arg(grid.inputWidth())
                              .arg(grid.inputHeight())
                              .arg(grid.rows())
                              .arg(grid.cols())
                              .arg(ms(img->seconds)));
    m_imageLabel->setToolTip(m_imageLabel->text());
}

void VisionPage::refreshMaps() {
    syncControls();
    if (m_doc->flowPending()) m_lenses->requestFlow();
    const double updateMs = m_views->refreshMaps();
    if (!m_doc->hasImage()) return;
    m_timing->setProperty("updateMs", updateMs);
    m_timing->setText(
        tr("Forward pass %1 · map update %2").arg(ms(m_doc->image()->seconds)).arg(ms(updateMs / 1000.0)));
}

// --- session (ui/vision/vision_session.h) ----------------------------------------------------

QJsonObject VisionPage::saveSession() const {
    VisionSession v = VisionSession::capture(*m_doc);
    if (!m_lastImagePath.isEmpty())
        v.imagePath = QFileInfo(m_lastImagePath).absoluteFilePath();
    else if (!m_lastImage
                  .empty()) { // pasted: the picture itself, encoded once (autosave asks every few seconds)
        if (m_lastImagePng.isEmpty()) m_lastImagePng = VisionSession::png(m_lastImage);
        v.imagePng = m_lastImagePng;
    }
    v.ablated = m_lenses->ablated();
    if (const auto* d = m_lenses->differenceWindow(); d && d->hasPin())
        v.pinned = PinnedMap{d->pinnedMap(), d->pinnedDescription()};
    QJsonObject s = modelSessionState();
    v.write(s);
    return s;
}

QString VisionPage::checkSession(const QJsonObject& state) const {
    SessionReader r = sessionReader(state);
    (void)VisionSession::parse(state, r);
    return r.error();
}

bool VisionPage::restoreInputs(const QJsonObject& state) {
    SessionReader r = sessionReader(state);
    const VisionSession v = VisionSession::parse(state, r);
    if (!r.ok()) {
        showError(r.error());
        return false;
    }
    m_pendingSample.clear();
    v.applyLook(*m_doc);
    return true;
}

// The model is here: the heads off, then the picture (whose result applies the view).
void VisionPage::continueRestore() {
    if (!restoreState()) return;
    SessionReader r = sessionReader(*restoreState());
    const VisionSession v = VisionSession::parse(*restoreState(), r);
    HeadList off;
    for (const auto& [l, h] : v.ablated)
        if (l < m_doc->numLayers() && h < m_doc->numHeads()) off.emplace_back(l, h);
    if (off.size() != v.ablated.size())
        showError(tr("Some of the session's heads switched off do not exist in this model."));
    {
        const QSignalBlocker quiet(m_lenses); // the picture below runs with them
        m_lenses->setAblated(std::move(off));
    }
    if (!m_doc->model()) {
        endRestore();
        showError(tr("Session restored without a model: open a vision model with File → Open model…"));
    } else if (!v.imagePath.isEmpty()) {
        openImage(v.imagePath); // then applyRestoredView()
        m_restoreImageJob = m_analyseJob;
    } else if (!v.imagePng.isEmpty()) {
        openImage(QImage::fromData(v.imagePng, "PNG"), tr("pasted image"));
        m_restoreImageJob = m_analyseJob;
    } else {
        applyRestoredView();
    }
}

void VisionPage::applyRestoredView() {
    if (!restoreState()) return;
    SessionReader r = sessionReader(*restoreState());
    const VisionSession v = VisionSession::parse(*restoreState(), r);
    endRestore();
    v.applyView(*m_doc);
    syncControls();
    if (v.pinned) m_lenses->pinAs(v.pinned->map, v.pinned->description);
    showNotice(tr("Session restored."));
}

QString VisionPage::exportBaseName() const {
    return QFileInfo(m_imageLabel->property("source").toString()).completeBaseName();
}

} // namespace attnlens::ui
