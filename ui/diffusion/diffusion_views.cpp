#include "ui/diffusion/diffusion_views.h"

#include "ui/diffusion/diffusion_document.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/render/heatmap_image.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/widgets/color_bar.h"
#include "ui/widgets/page_parts.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>

namespace attnlens::ui {

namespace {

constexpr int kTileMinSide = 112; // U view and strip tiles: the image enlarged to at least this

} // namespace

DiffusionViews::DiffusionViews(DiffusionDocument* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
    QWidget* centre = this;
    auto* layout = new QVBoxLayout(centre);
    layout->setContentsMargins(0, 0, 0, 0);
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
}

// x_t, ε̂, x̂0 (and the final image) of the step shown, one above the other.
QWidget* DiffusionViews::buildStepImages(QWidget* top) {
    m_stepImages = new MapGridView(top);
    m_stepImages->setObjectName(QStringLiteral("stepImages"));
    m_stepImages->setMaxColumns(1);
    m_stepImages->setFixedWidth(124); // with the large view and the U, the page fits a 1024-px window
    m_stepImages->setToolTip(
        tr("The step's input x_t, the noise the U-Net predicts in it (shown over ±3) and the "
           "clean image x̂0 that prediction implies; click x_t or x̂0 to draw the map over it"));
    connect(m_stepImages, &MapGridView::tileClicked, this, [this](int i) {
        if (i == 0 || i == 2) m_doc->setOnNoisy(i == 0);
    });
    return m_stepImages;
}

// The chosen layer's map over the image, large, with its colour bar; click or drag sets the query.
QLayout* DiffusionViews::buildLargeView(QWidget* top) {
    auto* viewBox = new QVBoxLayout;
    m_viewTitle = caption(QString(), top);
    m_viewTitle->setObjectName(QStringLiteral("viewTitle"));
    m_viewTitle->setWordWrap(true);
    viewBox->addWidget(m_viewTitle);
    auto* viewRow = new QHBoxLayout;
    m_overlay = new PatchImageView(top);
    m_overlay->setObjectName(QStringLiteral("overlayView"));
    m_overlay->setGridVisible(false);
    m_overlay->setMinimumSize(180, 180);
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
QLayout* DiffusionViews::buildUView(QWidget* top) {
    auto* uBox = new QVBoxLayout;
    m_uTitle = caption(tr("Every attention layer, laid out as the U"), top);
    m_uTitle->setWordWrap(true); // wraps in a narrow window instead of widening the page
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
QWidget* DiffusionViews::buildStrip(QWidget* parent) {
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

void DiffusionViews::refreshStepImages() {
    const int step = m_doc->currentStep();
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

void DiffusionViews::refreshMaps() {
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
        (m_doc->head() >= 0
             ? tr("head %1").arg(m_doc->head())
             : tr("%1 of heads").arg(m_doc->fusion() == HeadFusion::Max ? tr("max") : tr("mean"))) +
        (m_doc->valueWeighted() ? tr(" · value-weighted") : QString());
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
}

bool DiffusionViews::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_overlay && (event->type() == QEvent::Resize || event->type() == QEvent::Move))
        syncColorBarSpan();
    return QWidget::eventFilter(watched, event);
}

void DiffusionViews::syncColorBarSpan() {
    // The bar spans the picture (mapped into the bar's coordinates); nothing is resized.
    const QRectF picture = m_overlay->imageRect();
    const QPoint top =
        m_colorBar->mapFrom(m_overlay->parentWidget(), m_overlay->mapToParent(picture.topLeft().toPoint()));
    m_colorBar->setSpan(top.y(), static_cast<int>(picture.height()));
}

QImage DiffusionViews::uViewImage() const {
    if (m_uView->count() == 0 || m_doc->currentStep() < 0) return {};
    return m_uView->renderImage(kTileMinSide);
}

QImage DiffusionViews::stripImage() const {
    if (m_strip->count() == 0) return {};
    return m_strip->renderImage(kTileMinSide);
}

} // namespace attnlens::ui
