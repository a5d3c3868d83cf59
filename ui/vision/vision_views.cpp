#include "ui/vision/vision_views.h"

#include "core/vision/domain_check.h"
#include "ui/render/heatmap_image.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/vision/predictions_view.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_lenses.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

namespace attnlens::ui {

VisionViews::VisionViews(VisionDocument* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
    QWidget* centre = this;
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
}

// Clicks, drags and hover on the picture → the query and the tooltip.
void VisionViews::connectImageView() {
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
QWidget* VisionViews::buildImageSide(QWidget* parent) {
    auto* side = new QWidget(parent);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(6, 0, 0, 0);
    // the prediction, and beside it in a tab how it forms layer by layer (the logit lens)
    auto* tabs = new QTabWidget(side);
    tabs->setObjectName(QStringLiteral("predictionTabs"));
    tabs->setDocumentMode(true);
    m_predictions = new PredictionsView(tabs);
    m_predictions->setObjectName(QStringLiteral("predictions"));
    tabs->addTab(m_predictions, tr("Prediction"));
    m_classLens = new HeatmapView(tabs);
    m_classLens->setObjectName(QStringLiteral("classByLayer"));
    m_classLens->setToolTip(tr("The logit lens: the CLS token read out through the final layernorm and the "
                               "classifier as it enters each layer and leaves the last — when the prediction "
                               "takes shape"));
    m_classLens->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_classLens->setFixedRange(0.0f, 1.0f);
    m_classLens->setValueDecimals(2);
    m_classLens->setMaximumCellSize(30);
    m_classLens->setPreferredCellSize(22);
    m_classLens->setColorBarVisible(false);
    m_classTab = tabs->addTab(m_classLens, tr("By layer"));
    m_predictionTabs = tabs;
    sideLayout->addWidget(tabs);
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
    sideLayout->addSpacing(2);
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
QWidget* VisionViews::buildGrids(QWidget* parent) {
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
        m_doc->setTokenNorms(false);
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

// The top classes (rows) × the layers (columns: the embeddings, after each layer; the last is the
// prediction).
void VisionViews::refreshClassLens(const VisionImage& img) {
    const auto& layers = img.classLens.layers;
    m_predictionTabs->setTabEnabled(m_classTab, !layers.empty());
    if (layers.empty()) return;
    const int cols = int(layers.size()), rows = int(img.top.size());
    RowMatrix probs = RowMatrix::Zero(rows, cols);
    QStringList rowLabels, columnLabels;
    for (int r = 0; r < rows; ++r) {
        rowLabels << QString::fromStdString(img.top[size_t(r)].label);
        for (int l = 0; l < cols; ++l)
            for (const LensToken& t : layers[size_t(l)].top)
                if (t.id == img.top[size_t(r)].index) probs(r, l) = t.prob;
    }
    for (int l = 0; l < cols; ++l)
        columnLabels << (l == 0 ? tr("emb") : l == cols - 1 ? tr("out") : QString::number(l - 1));
    m_classLens->setAxisTitles(QString(), tr("after layer"));
    m_classLens->setMatrix(std::move(probs), rowLabels, columnLabels);
}

void VisionViews::refreshPredictions(const QString& expectedClass, bool builtinModel) {
    const auto& img = m_doc->image();
    if (!img) {
        m_predictions->setMessage(tr("No image yet."));
        m_predictionTabs->setTabEnabled(m_classTab, false);
        m_domainNote->hide();
        m_ablationNote->hide();
        return;
    }
    if (img->top.empty())
        m_predictions->setMessage(m_doc->textSide()
                                      ? tr("CLIP and SigLIP have no classes of their own: type texts in the "
                                           "Texts box to score them against the picture.")
                                      : tr("This checkpoint has no classifier head."));
    else
        m_predictions->setPredictions(img->top, expectedClass);
    refreshClassLens(*img);
    // The built-in classifier knows ten kinds of clothing on black: say when a picture is not one.
    const DomainCheck check = builtinModel && !img->top.empty()
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
    const QString ablation = VisionLenses::ablationSummary(*img);
    m_ablationNote->setText(ablation);
    m_ablationNote->setToolTip(VisionLenses::ablationDetails(*img) + QStringLiteral("\n") +
                               tr("Head statistics… shows and changes which heads are off"));
    m_ablationNote->setVisible(!ablation.isEmpty());
}

double VisionViews::refreshMaps() {
    if (!m_doc->hasImage()) {
        m_imageView->clear();
        m_rawMap->setMatrix(RowMatrix());
        m_headsGrid->clear();
        m_layersStrip->clear();
        m_mapTitle->setText(QString());
        return 0;
    }
    QElapsedTimer timer;
    timer.start();
    const auto& img = m_doc->image();
    const RowMatrix map = m_doc->currentMap(); // [rows, cols]
    const OverlayOptions look = m_doc->overlayOptions();
    m_imageView->setPicture(toQImage(renderOverlay(img->display, map, look)), img->result.grid);
    m_imageView->setSelection(m_doc->patches(), m_doc->query() != VisionDocument::Query::Patches);
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
    m_headsTitle->setText(
        m_doc->textMapShown()
            ? tr("Heads — a text's map is the last layer's; choose \"Attention maps\" in Texts "
                 "to see the heads")
        : m_doc->rollout()    ? tr("Heads — rollout fuses the heads; untick Rollout to see them")
        : m_doc->tokenNorms() ? tr("Heads — a token's norm has no heads; untick Token norms to see them")
        : m_doc->flow()       ? tr("Heads — attention flow fuses the heads; untick it to see them")
        : m_doc->probeQuery() ? tr("Heads of the pooling probe — click one to show it")
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
    m_layersTitle->setText(m_doc->textMapShown() ? tr("Layers — none for a text's map")
                           : m_doc->tokenNorms() ? tr("Layers — token norms after each layer")
                           : m_doc->flow()       ? tr("Layers — attention (%1), not flow").arg(which)
                           : m_doc->probeQuery() && !m_doc->rollout()
                               ? tr("Layers — none: the pooling probe reads only the last layer's output")
                               : tr("Layers — %1").arg(which));

    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

} // namespace attnlens::ui
