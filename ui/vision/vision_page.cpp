#include "ui/vision/vision_page.h"

#include "core/analysis/precision_parity.h"
#include "core/export/npy.h"
#include "core/io/model_folder.h"
#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "core/vision/domain_check.h"
#include "core/vision/preprocess.h"
#include "ui/render/heatmap_image.h"
#include "ui/render/overlay_caption.h"
#include "ui/shell/inference_worker.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/vision/predictions_view.h"
#include "ui/vision/sample_gallery.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/job_status.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"
#include "ui/widgets/precision_note.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSlider>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cstring>
#include <utility>

namespace attnlens::ui {

namespace {

QString ms(double seconds) {
    return QString::number(seconds * 1000.0, 'f', seconds < 0.1 ? 1 : 0) + " ms";
}

} // namespace

VisionPage::VisionPage(QWidget* parent, const QString& modelDir)
    : WorkspacePage(ModelKind::Vit, parent), m_doc(new VisionDocument(this)) {
    setAcceptDrops(true);
    QWidget* bar = buildTopBar(); // built in this order: later builders use what earlier ones made
    QWidget* sidebar = buildSidebar();
    QWidget* centre = buildCentre();
    assembleWorkspace(this, bar, messageLine(), sidebar, centre);

    auto* pasteShortcut = new QShortcut(QKeySequence::Paste, this);
    pasteShortcut->setWhatsThis(tr("Paste an image from the clipboard"));
    pasteShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(pasteShortcut, &QShortcut::activated, this, &VisionPage::pasteImage);

    connectDocument();

    const int samples = m_gallery->loadSamples();
    if (!m_gallery->problem().isEmpty()) showNotice(m_gallery->problem()); // surfaced, never swallowed
    if (samples > 0) m_pendingSample = m_gallery->samplePaths().front();
    syncControls();
    openFirstModel(modelDir);
}

VisionPage::~VisionPage() = default;

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
    m_imageLabel = new QLabel(tr("No image"), bar);
    m_imageLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long file name or a large picture's description is clipped (full text in the tooltip) instead
    // of widening the bar and with it the window.
    m_imageLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_imageLabel->setMinimumWidth(120);
    m_modelLabel = new QLabel(bar);
    mute(m_modelLabel);
    auto* jobStatus = new JobStatus(worker(), bar);
    m_export = exportMenuButton(
        bar, {
                 {tr("Overlay as PNG (original resolution)…"), [this] { chooseExport(Export::Overlay); }},
                 {tr("Overlay with colour bar and caption (PNG)…"),
                  [this] { chooseExport(Export::CaptionedOverlay); }},
                 {tr("Heads grid as PNG…"), [this] { chooseExport(Export::HeadsGrid); }},
                 {tr("Map as NumPy (.npy)…"), [this] { chooseExport(Export::MapNpy); }},
                 {tr("Map as CSV…"), [this] { chooseExport(Export::MapCsv); }},
             });
    m_export->setObjectName(QStringLiteral("export"));
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
    m_flowRequested = {}; // a cancelled flow is asked for again when next needed
    showNotice(tr("Cancelled."));
}

QWidget* VisionPage::buildSidebar() {
    const auto [scroll, panel, layout] = makeSidebar(this, 292);

    layout->addWidget(buildSamplesBox(panel));
    layout->addWidget(buildQueryBox(panel));
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
    m_selectionLabel = new QLabel(queryBox);
    queryRow->addWidget(m_clsButton);
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
    connect(m_mapBox, &MapLensBox::layerChosen, m_doc, &VisionDocument::setLayer);
    connect(m_mapBox, &MapLensBox::headsChosen, this, [this](HeadSelection heads) {
        m_doc->setFusion(heads.fusion);
        m_doc->setHead(heads.head);
    });
    connect(m_mapBox, &MapLensBox::headStatsRequested, this, &VisionPage::showHeadStats);
    connect(m_mapBox, &MapLensBox::neuronRequested, this, &VisionPage::showNeuronView);
    connect(m_mapBox, &MapLensBox::pinRequested, this, &VisionPage::pinMap);
    m_rollout = new QCheckBox(tr("Rollout through layers 0…L"), m_mapBox);
    m_rollout->setObjectName(QStringLiteral("rollout"));
    m_rollout->setToolTip(tr("Attention rollout (Abnar & Zuidema 2020): heads fused, residual added, "
                             "layers multiplied up to the chosen layer"));
    connect(m_rollout, &QCheckBox::toggled, m_doc, &VisionDocument::setRollout);
    m_flow = new QCheckBox(tr("Attention flow through layers 0…L"), m_mapBox);
    m_flow->setObjectName(QStringLiteral("flow"));
    m_flow->setToolTip(
        tr("Attention flow (Abnar & Zuidema 2020): a maximum flow through the layers, heads fused and "
           "the residual added — unlike rollout, a path is only as strong as its weakest edge. One "
           "max-flow per patch: computed on the worker; too large an input falls back to rollout."));
    connect(m_flow, &QCheckBox::toggled, m_doc, &VisionDocument::setFlow);
    m_mapBox->addRow(m_rollout);
    m_mapBox->addRow(m_flow);
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

QWidget* VisionPage::buildCentre() {
    auto* centre = new QWidget(this);
    auto* layout = new QVBoxLayout(centre);
    layout->setContentsMargins(0, 0, 0, 0);
    m_mapTitle = caption(QString(), centre);
    m_mapTitle->setObjectName(QStringLiteral("mapTitle"));
    layout->addWidget(m_mapTitle);

    auto* top = new QSplitter(Qt::Horizontal, centre);
    top->setObjectName(QStringLiteral("visionTopSplitter")); // remembered by the main window
    m_imageView = new PatchImageView(top);
    m_imageView->setObjectName(QStringLiteral("imageView"));
    m_imageView->setPlaceholderText(tr("Drop an image here, paste one, or pick a sample."));
    connectImageView();

    auto* side = buildImageSide(top);
    top->addWidget(m_imageView);
    top->addWidget(side);
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Vertical, centre);
    split->setObjectName(QStringLiteral("visionSplitter"));
    split->setChildrenCollapsible(false);
    split->addWidget(top);
    split->addWidget(buildGrids(split));
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({560, 440}); // proportions; the picture keeps the larger share
    layout->addWidget(split, 1);
    return centre;
}

// Clicks, drags and hover on the picture → the query and the tooltip.
void VisionPage::connectImageView() {
    connect(m_imageView, &PatchImageView::patchClicked, this, [this](int patch, bool additive) {
        if (additive)
            m_doc->togglePatch(patch);
        else
            m_doc->selectPatches({patch});
    });
    connect(m_imageView, &PatchImageView::patchesSelected, this,
            [this](std::vector<int> patches, bool additive) {
                if (additive && m_doc->query() == VisionDocument::Query::Patches)
                    patches.insert(patches.end(), m_doc->patches().begin(), m_doc->patches().end());
                m_doc->selectPatches(std::move(patches));
            });
    connect(m_imageView, &PatchImageView::patchHovered, this, [this](int patch) {
        const RowMatrix map = patch >= 0 ? m_doc->currentMap() : RowMatrix();
        if (patch < 0 || map.size() == 0) {
            m_imageView->setToolTip(QString());
            return;
        }
        const int r = patch / m_doc->gridCols(), c = patch % m_doc->gridCols();
        m_imageView->setToolTip(tr("patch (%1, %2): %3").arg(r).arg(c).arg(map(r, c), 0, 'f', 4));
    });
}

// Beside the picture: the predictions and the map as a labelled patch grid.
QWidget* VisionPage::buildImageSide(QWidget* parent) {
    auto* side = new QWidget(parent);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(6, 0, 0, 0);
    sideLayout->addWidget(caption(tr("Prediction"), side));
    m_predictions = new PredictionsView(side);
    m_predictions->setObjectName(QStringLiteral("predictions"));
    sideLayout->addWidget(m_predictions);
    // Lines under the predictions, hidden until they have something to say.
    auto note = [side, sideLayout](const char* name) {
        auto* label = new QLabel(side);
        label->setObjectName(QString::fromLatin1(name));
        label->setWordWrap(true);
        label->setTextFormat(Qt::RichText);
        label->hide();
        sideLayout->addWidget(label);
        return label;
    };
    m_domainNote = note("domainNote");     // the picture is unlike the training data
    m_ablationNote = note("ablationNote"); // heads switched off
    sideLayout->addSpacing(8);
    sideLayout->addWidget(caption(tr("Patch-grid map"), side));
    m_rawMap = new HeatmapView(side);
    m_rawMap->setObjectName(QStringLiteral("rawMap"));
    m_rawMap->setRangeMode(HeatmapView::RangeMode::Auto);
    m_rawMap->setAxisTitles(tr("row"), tr("column"));
    m_rawMap->setValueDecimals(2);
    m_rawMap->setMaximumCellSize(48);
    m_rawMap->setPreferredCellSize(28);
    connect(m_rawMap, &HeatmapView::cellClicked, this,
            [this](int r, int c) { m_doc->selectPatches({r * m_doc->gridCols() + c}); });
    sideLayout->addWidget(m_rawMap, 1);
    return side;
}

// Below: every head of the layer and the same head through every layer.
QWidget* VisionPage::buildGrids(QWidget* parent) {
    auto* bottomWidget = new QWidget(parent);
    auto* bottom = new QHBoxLayout(bottomWidget);
    bottom->setContentsMargins(0, 4, 0, 0);
    auto* headsBox = new QVBoxLayout;
    m_headsTitle = caption(tr("Heads"), bottomWidget);
    m_headsGrid = new MapGridView(bottomWidget);
    m_headsGrid->setObjectName(QStringLiteral("headsGrid"));
    m_headsGrid->setToolTip(tr("Every head of this layer for the current query; click one to show it"));
    connect(m_headsGrid, &MapGridView::tileClicked, this, [this](int head) {
        m_doc->setRollout(false);
        m_doc->setHead(head);
    });
    headsBox->addWidget(m_headsTitle);
    headsBox->addWidget(m_headsGrid, 1);
    auto* layersBox = new QVBoxLayout;
    m_layersTitle = caption(tr("Layers"), bottomWidget);
    m_layersStrip = new MapGridView(bottomWidget);
    m_layersStrip->setObjectName(QStringLiteral("layersStrip"));
    m_layersStrip->setToolTip(tr("The same head through every layer; click one to show it"));
    connect(m_layersStrip, &MapGridView::tileClicked, m_doc, &VisionDocument::setLayer);
    layersBox->addWidget(m_layersTitle);
    layersBox->addWidget(m_layersStrip, 1);
    bottom->addLayout(headsBox, 1);
    bottom->addSpacing(12);
    bottom->addLayout(layersBox, 1);
    return bottomWidget;
}

QString VisionPage::modelDescription() const {
    const auto& model = m_doc->model();
    if (!model) return tr("no model");
    const VitConfig& c = model->config();
    const ImageProcessorConfig& proc = model->processor();
    const QString input = proc.doCenterCrop ? tr("%1×%2, centre crop %3×%4 input")
                                                  .arg(proc.width)
                                                  .arg(proc.height)
                                                  .arg(proc.cropWidth)
                                                  .arg(proc.cropHeight)
                                            : tr("%1×%2 input").arg(proc.width).arg(proc.height);
    return tr("%1 · %2 layers × %3 heads · patch %4 · %5")
        .arg(QFileInfo(QString::fromStdString(model->dir().string())).fileName())
        .arg(c.numLayers)
        .arg(c.numHeads)
        .arg(c.patchSize)
        .arg(input);
}

void VisionPage::openModel(const QString& dir) {
    const std::filesystem::path path = dir.toStdString();
    // bf16 (Compute → Precision): measured against float32 once, at load, on the picture being shown
    // (or a mid-grey one).
    const ImageU8 probe = m_lastImage;
    loadModel<std::pair<std::shared_ptr<const VitModel>, PrecisionNote>>(
        dir,
        [path, probe](const Callbacks& cb) {
            auto model = VitModel::load(path, cb);
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
            return std::make_pair(std::move(model), note);
        },
        [this](std::pair<std::shared_ptr<const VitModel>, PrecisionNote> loaded) {
            m_ablated.clear(); // the heads of another model
            m_precisionNote = loaded.second;
            m_doc->setModel(std::move(loaded.first));
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
    worker()->run<std::shared_ptr<const VisionImage>>(
        tr("Analysing %1").arg(source),
        [model, load = std::move(load), source, ablated = m_ablated](const Callbacks& cb) {
            return VisionDocument::analyse(*model, load(), source, cb, ablated);
        },
        [this, path, timer, model](std::shared_ptr<const VisionImage> result) {
            if (result == nullptr) return;
            if (model != m_doc->model()) { // another model was opened meanwhile: analyse again with it
                runImage(result->image, result->source, path);
                return;
            }
            m_lastImagePath = path;
            m_lastImage = result->image;
            m_imageLabel->setProperty("source", result->source);
            dismissMessage();
            if (!m_precisionNote.empty()) showNotice(m_precisionNote.sentence);
            m_doc->setImage(std::move(result));
            m_timing->setProperty("firstOverlayMs", static_cast<double>(timer->nsecsElapsed()) / 1e6);
            if (restoreState()) applyRestoredView();
            emit resultReady();
            if (!path.isEmpty()) emit inputFileShown(path);
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
    const QSignalBlocker b3(m_rollout), b4(m_keySide), b5(m_reduce), b6(m_flow);
    QStringList layers;
    for (int l = 0; l < m_doc->numLayers(); ++l)
        layers << tr("Layer %1").arg(l);
    m_mapBox->setLayers(layers);
    m_mapBox->setSelection(m_doc->layer(), m_doc->numHeads(), {m_doc->head(), m_doc->fusion()});
    m_mapBox->headCombo()->setEnabled((!m_doc->rollout() && !m_doc->flow()) || m_doc->head() < 0);
    m_rollout->setChecked(m_doc->rollout());
    m_flow->setChecked(m_doc->flow());
    m_keySide->setChecked(m_doc->keySide());
    m_keySide->setEnabled(!m_doc->flow()); // flow is query → patches only
    m_reduce->setCurrentIndex(m_doc->reduce() == TokenReduce::Sum ? 0 : 1);
    m_reduce->setEnabled(m_doc->patches().size() > 1);
    m_clsButton->setChecked(m_doc->query() == VisionDocument::Query::Cls);
    m_selectionLabel->setText(m_doc->hasImage() ? tr("Query: %1").arg(m_doc->queryDescription()) : QString());
    m_export->setEnabled(m_doc->hasImage());
}

void VisionPage::refreshPredictions() {
    const auto& img = m_doc->image();
    if (!img) {
        m_predictions->setMessage(tr("No image yet."));
        m_imageLabel->setText(tr("No image"));
        return;
    }
    if (img->top.empty())
        m_predictions->setMessage(tr("This checkpoint has no classifier head."));
    else
        m_predictions->setPredictions(img->top, m_gallery->expectedClass(m_lastImagePath));
    // The built-in classifier knows ten kinds of clothing on black: say when a picture is not one.
    const bool builtin =
        QFileInfo(loadedModelDir()).fileName() == QLatin1String(builtinModelName(ModelKind::Vit).data());
    const DomainCheck check = builtin && !img->top.empty()
                                  ? checkFashionMnistLikeness(img->image, img->top.front().probability)
                                  : DomainCheck{};
    if (check.mismatch()) {
        QStringList reasons;
        for (const std::string& r : check.reasons)
            reasons << QString::fromStdString(r).toHtmlEscaped();
        m_domainNote->setText(tr("<span style='color:%1'><b>Not like the training pictures:</b></span> %2. "
                                 "Read the prediction with care.")
                                  .arg(errorColor(palette()).name(), reasons.join(QStringLiteral(" · "))));
        m_domainNote->setToolTip(tr(
            "The built-in model was trained on Fashion-MNIST: ten kinds of clothing, grey on black, 28×28. "
            "Any picture gets a prediction, often a confident-looking one; here it means little. The "
            "attention maps are still exactly what the model did."));
        m_domainNote->show();
    } else {
        m_domainNote->hide();
    }
    refreshAblationNote();
    const auto& grid = img->result.grid;
    m_imageLabel->setText(tr("<b>%1</b> · %2×%3 px → %4×%5 input · %6×%7 patches · forward %8")
                              .arg(img->source.toHtmlEscaped())
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
    if (m_doc->flowPending()) requestFlow();
    if (!m_doc->hasImage()) {
        m_imageView->clear();
        m_rawMap->setMatrix(RowMatrix());
        m_headsGrid->clear();
        m_layersStrip->clear();
        m_mapTitle->setText(QString());
        return;
    }
    QElapsedTimer timer;
    timer.start();
    const auto& img = m_doc->image();
    const RowMatrix map = m_doc->currentMap(); // [rows, cols]
    const OverlayOptions look = m_doc->overlayOptions();
    m_imageView->setPicture(toQImage(renderOverlay(img->display, map, look)), img->result.grid);
    m_imageView->setSelection(m_doc->patches(), m_doc->query() == VisionDocument::Query::Cls);
    m_mapTitle->setText(m_doc->mapDescription());

    m_rawMap->setColorMap(look.colorMap);
    m_rawMap->setAnnotationsEnabled(map.size() <= 14 * 14);
    m_rawMap->setMatrix(map);
    const int single = m_doc->patches().size() == 1 ? m_doc->patches().front() : -1;
    m_rawMap->setMarkedCell(single >= 0 ? HeatmapCell{single / m_doc->gridCols(), single % m_doc->gridCols()}
                                        : HeatmapCell{});

    std::vector<QImage> heads;
    QStringList headTitles;
    for (const RowMatrix& m : m_doc->headMaps()) {
        heads.push_back(toQImage(m_doc->renderThumbnail(m)));
        headTitles << tr("Head %1").arg(headTitles.size());
    }
    m_headsGrid->setTiles(std::move(heads), headTitles);
    m_headsGrid->setSelected(m_doc->rollout() ? -1 : m_doc->head());
    m_headsTitle->setText(m_doc->rollout() ? tr("Heads — rollout fuses the heads; untick Rollout to see them")
                          : m_doc->flow()
                              ? tr("Heads — attention flow fuses the heads; untick it to see them")
                              : tr("Heads of layer %1 — click one to show it").arg(m_doc->layer()));

    std::vector<QImage> layers;
    QStringList layerTitles;
    for (const RowMatrix& m : m_doc->layerMaps()) {
        layers.push_back(toQImage(m_doc->renderThumbnail(m)));
        layerTitles << tr("Layer %1").arg(layerTitles.size());
    }
    m_layersStrip->setTiles(std::move(layers), layerTitles);
    m_layersStrip->setSelected(m_doc->layer());
    const QString which =
        m_doc->rollout() ? tr("rollout up to each layer")
        : m_doc->head() >= 0
            ? tr("head %1 in every layer").arg(m_doc->head())
            : tr("%1 of heads in every layer").arg(QString::fromUtf8(headFusionName(m_doc->fusion()).data()));
    m_layersTitle->setText(m_doc->flow() ? tr("Layers — attention (%1), not flow").arg(which)
                                         : tr("Layers — %1").arg(which));

    const double updateMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    m_timing->setProperty("updateMs", updateMs);
    m_timing->setText(tr("Forward pass %1 · map update %2").arg(ms(img->seconds)).arg(ms(updateMs / 1000.0)));
}

bool VisionPage::exportOverlay(const QString& path) const {
    try {
        writePng(path.toStdString(), m_doc->renderOriginalOverlay());
        return true;
    } catch (const std::exception& e) {
        const_cast<VisionPage*>(this)->showError(QString::fromUtf8(e.what()));
        return false;
    }
}

bool VisionPage::exportCaptionedOverlay(const QString& path) const {
    try {
        const RowMatrix map = m_doc->currentMap();
        if (map.size() == 0) throw Error("no map to export: open an image first");
        const QString caption = tr("%1 — %2, %3")
                                    .arg(m_doc->mapDescription(), m_modelLabel->text(),
                                         QFileInfo(m_imageLabel->property("source").toString()).fileName());
        const QImage out =
            captionedOverlay(toQImage(m_doc->renderOriginalOverlay()), m_doc->colorMap(), map.minCoeff(),
                             map.maxCoeff(), caption, heatmapStyle(palette(), font()));
        if (!out.save(path, "PNG")) throw Error(path.toStdString() + ": cannot write the file");
        return true;
    } catch (const std::exception& e) {
        const_cast<VisionPage*>(this)->showError(QString::fromUtf8(e.what()));
        return false;
    }
}

bool VisionPage::exportHeadsGrid(const QString& path) const {
    if (m_headsGrid->count() == 0) return false;
    const QImage img = m_headsGrid->renderImage(std::max(m_headsGrid->tile(0).width(), 160));
    if (img.save(path, "PNG")) return true;
    const_cast<VisionPage*>(this)->showError(tr("'%1': cannot write the file").arg(path));
    return false;
}

bool VisionPage::exportMap(const QString& path) const {
    const RowMatrix map = m_doc->currentMap(); // [rows, cols]
    if (map.size() == 0) return false;
    try {
        writeMatrix(path.toStdString(), map);
        return true;
    } catch (const std::exception& e) {
        const_cast<VisionPage*>(this)->showError(QString::fromUtf8(e.what()));
        return false;
    }
}

void VisionPage::chooseExport(Export what) {
    const char* filter = what == Export::MapNpy   ? "NumPy array (*.npy)"
                         : what == Export::MapCsv ? "CSV (*.csv)"
                                                  : "PNG image (*.png)";
    const char* suffix = what == Export::Overlay            ? "-overlay.png"
                         : what == Export::CaptionedOverlay ? "-overlay-captioned.png"
                         : what == Export::HeadsGrid        ? "-heads.png"
                         : what == Export::MapNpy           ? "-map.npy"
                                                            : "-map.csv";
    const QString base = QFileInfo(m_imageLabel->property("source").toString()).completeBaseName();
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export"), base + QString::fromLatin1(suffix), tr(filter));
    if (path.isEmpty()) return;
    bool ok = false;
    switch (what) {
    case Export::Overlay:
        ok = exportOverlay(path);
        break;
    case Export::CaptionedOverlay:
        ok = exportCaptionedOverlay(path);
        break;
    case Export::HeadsGrid:
        ok = exportHeadsGrid(path);
        break;
    case Export::MapNpy:
    case Export::MapCsv:
        ok = exportMap(path);
        break;
    }
    if (ok) showNotice(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
}

} // namespace attnlens::ui
