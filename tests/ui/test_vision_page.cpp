// The Vision page on the built-in ViT and a sample image, offscreen: clicking a patch (its position
// computed from the grid geometry) selects it as the query; the overlay's pixels are the core renderer's
// colours for the attention read straight from the tensor; the heads grid has one tile per head; several
// patches sum; key side reads the attention column; a bad image leaves the state intact; exports.

#include "core/analysis/attention_captures.h"
#include "core/analysis/attention_flow.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/head_stats.h"
#include "core/analysis/model_lenses.h"
#include "core/analysis/value_weighting.h"
#include "core/export/overlay.h"
#include "core/io/model_folder.h"
#include "support/waits.h"
#include "ui/render/heatmap_image.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/vision/predictions_view.h"
#include "ui/vision/sample_gallery.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/difference_view.h"
#include "ui/widgets/heads_lens.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/neuron_dialog.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QFile>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <memory>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

QString samplePath(const char* name) {
    return QString::fromStdString((resourcesDir() / "samples" / "fashion-mnist" / name).string());
}

// Blend exactly as the overlay contract states: round((1 − a)·image + a·colour).
uint8_t blend(uint8_t image, uint8_t colour, float a) {
    return static_cast<uint8_t>(std::lround((1.0f - a) * image + a * colour));
}

} // namespace

class TestVisionPage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase() { m_page.reset(); }
    void init();

    void showsSampleWithPredictionsAndGrids();
    void clickingAPatchSelectsItAsTheQuery();
    void overlayPixelsAreTheCoreRenderersColours();
    void headsGridHasOneTilePerHeadAndSelects();
    void severalPatchesSumOrAverage();
    void dragSelectsARectangleOfPatches();
    void keySideReadsTheAttentionColumn();
    void rolloutMatchesCore();
    void tokenNormsMap();
    void badImageKeepsThePreviousState();
    void pastedImageOfAnotherSizeIsAnalysed();
    void droppedFileIsAnalysed();
    void exportsOverlayHeadsAndMaps();
    void smallImagesAreEnlargedCrisply();
    void wideAndTallPicturesKeepTheWindowSize();
    void headStatisticsLens();
    void headAblationFromTheLens();
    void attentionFlowMap();
    void neuronViewOfTheQueryPatch();
    void differenceOfTwoPictures();
    void modelOpenedDuringAnalysisReanalyses(); // last: it switches the page to another model

private:
    void openAndWait(const QString& path);
    VisionDocument* doc() const { return m_page->document(); }
    // The model's attention [layer][head][query][key] of the current image.
    float attention(int layer, int head, int query, int key) const {
        return doc()->image()->result.output.attentions.at({layer, head, query, key});
    }

    std::unique_ptr<VisionPage> m_page;
};

void TestVisionPage::initTestCase() {
    m_page = std::make_unique<VisionPage>();
    m_page->resize(1280, 860);
    m_page->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_page.get()));
    // The built-in model loads, then the first sample is analysed, without blocking this thread.
    WAIT_UNTIL(doc()->hasImage() && !m_page->isBusy());
    QVERIFY2(m_page->message().isEmpty(), qPrintable(m_page->message()));
}

void TestVisionPage::init() {
    doc()->selectCls();
    doc()->setKeySide(false);
    doc()->setRollout(false);
    doc()->setFlow(false);
    doc()->setTokenNorms(false);
    doc()->setHead(-1);
    doc()->setFusion(HeadFusion::Mean);
    doc()->setReduce(TokenReduce::Sum);
    doc()->setLayer(doc()->numLayers() - 1);
    doc()->setSmooth(true);
    doc()->setOpacity(0.6f);
}

void TestVisionPage::openAndWait(const QString& path) {
    QSignalSpy shown(m_page.get(), &VisionPage::resultReady);
    m_page->openImage(path);
    WAIT_UNTIL(shown.count() > 0);
    WAIT_UNTIL(!m_page->isBusy());
}

void TestVisionPage::showsSampleWithPredictionsAndGrids() {
    openAndWait(samplePath("sneaker_1.png"));
    const auto& img = doc()->image();
    QCOMPARE(img->image.width, 28);
    QCOMPARE(img->image.height, 28);
    QCOMPARE(doc()->gridRows(), 7);
    QCOMPARE(doc()->gridCols(), 7);
    const int layers = doc()->numLayers(), heads = doc()->numHeads();
    QCOMPARE(img->result.output.attentions.shape(), (Shape{layers, heads, 50, 50}));
    QCOMPARE(static_cast<int>(m_page->predictionsView()->predictions().size()), 5);
    // Probabilities descend and are what the model says.
    const auto& top = m_page->predictionsView()->predictions();
    for (size_t i = 1; i < top.size(); ++i)
        QVERIFY(top[i - 1].probability >= top[i].probability);
    QCOMPARE(m_page->layersStrip()->count(), layers);
    QCOMPARE(m_page->rawMapView()->rows(), 7);
    QCOMPARE(m_page->rawMapView()->columns(), 7);
    // Class by layer (issue 42, the logit lens of the CLS token): the top classes × the embeddings and every
    // layer, its last column the prediction itself, the same as a separate lens of the picture
    auto* tabs = m_page->findChild<QTabWidget*>("predictionTabs");
    auto* byLayer = m_page->findChild<HeatmapView*>("classByLayer");
    QVERIFY(tabs->isTabEnabled(1));
    tabs->setCurrentIndex(1);
    QCOMPARE(byLayer->rows(), int(top.size()));
    QCOMPARE(byLayer->columns(), layers + 1);
    const LogitLens lens = vitLogitLens(*doc()->model(), img->result.input.pixels, -1, 10);
    for (int r = 0; r < byLayer->rows(); ++r) {
        QVERIFY(std::abs(byLayer->value(r, layers) - top[size_t(r)].probability) < 1e-5);
        for (int l = 0; l <= layers; ++l)
            for (const LensToken& t : lens.layers[size_t(l)].top)
                if (t.id == top[size_t(r)].index) QVERIFY(std::abs(byLayer->value(r, l) - t.prob) < 1e-5);
    }
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        m_page->window()->grab().save(QString::fromLocal8Bit(dir) + "/vision-class-by-layer.png");
    tabs->setCurrentIndex(0);
    // Value-weighted (issue 42): the CLS row of a head times the norms of a traced pass, renormalised; the
    // mean of heads is the mean of the weighted heads
    VitRunOptions traced;
    ResidualTrace trace;
    trace.rows = {0};
    trace.values = true;
    traced.trace = &trace;
    doc()->model()->forward(img->result.input.pixels, traced);
    const RowMatrix raw = doc()->currentMap();
    m_page->findChild<QCheckBox*>("valueWeighted")->setChecked(true);
    QVERIFY(doc()->valueWeighted());
    const int layer = doc()->layer();
    RowMatrix mean = RowMatrix::Zero(1, 50);
    for (int h = 0; h < heads; ++h) {
        RowMatrix row = img->result.output.attentions.slice2d({layer, h}).topRows(1);
        valueWeightRows(row, trace.layers[size_t(layer)].valueNorms.row(h));
        mean += row / float(heads);
    }
    const RowMatrix map = doc()->currentMap(); // CLS → the 7 × 7 patches
    QVERIFY(!(map == raw));
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        m_page->window()->grab().save(QString::fromLocal8Bit(dir) + "/vision-value-weighted.png");
    for (int p = 0; p < 49; ++p)
        QVERIFY(std::abs(map(p / 7, p % 7) - mean(0, p + 1)) < 1e-5);
    m_page->findChild<QCheckBox*>("valueWeighted")->setChecked(false);
    QVERIFY(doc()->currentMap() == raw);
}

void TestVisionPage::clickingAPatchSelectsItAsTheQuery() {
    openAndWait(samplePath("sneaker_1.png"));
    PatchImageView* view = m_page->imageView();
    const PatchGrid& grid = view->grid();
    const int patch = grid.index(3, 5);
    // The patch's widget rectangle from the grid geometry: image rect scaled by the display factor.
    const QRectF area = view->imageRect();
    QVERIFY(!area.isEmpty());
    QCOMPARE(area.width() / area.height(), 1.0); // the 28×28 picture keeps its aspect ratio
    const RectF r = grid.imageRect(patch);       // original-image pixels
    const double s = area.width() / grid.imageWidth();
    const QPointF exact(area.x() + (r.x + r.width / 2) * s, area.y() + (r.y + r.height / 2) * s);
    QVERIFY((view->patchRect(patch).center() - exact).manhattanLength() < 1e-9);
    const QPoint centre = exact.toPoint();
    QCOMPARE(view->patchAt(centre), patch);

    QTest::mouseClick(view, Qt::LeftButton, {}, centre);
    QCOMPARE(doc()->query(), VisionDocument::Query::Patches);
    QCOMPARE(doc()->patches(), (std::vector<int>{patch}));
    QCOMPARE(doc()->queryTokens(), (std::vector<int>{patch + 1}));
    QCOMPARE(view->selection(), (std::vector<int>{patch}));
    QCOMPARE(m_page->rawMapView()->markedCell(), (HeatmapCell{3, 5}));
    // The CLS button brings the class token back.
    auto* cls = m_page->findChild<QAbstractButton*>("clsButton");
    QVERIFY(cls);
    QVERIFY(!cls->isChecked());
    QTest::mouseClick(cls, Qt::LeftButton);
    QCOMPARE(doc()->query(), VisionDocument::Query::Cls);
    QVERIFY(cls->isChecked());
}

void TestVisionPage::overlayPixelsAreTheCoreRenderersColours() {
    openAndWait(samplePath("sneaker_1.png"));
    const int layer = 1, head = 2, row = 2, col = 3;
    doc()->setLayer(layer);
    doc()->setHead(head);
    doc()->setColorMap(ColorMap::Viridis);
    doc()->setSmooth(false); // one flat colour per patch: the attention of that patch, exactly
    doc()->setOpacity(0.5f);
    const PatchGrid& grid = doc()->image()->result.grid;
    const int query = grid.index(row, col);
    QTest::mouseClick(m_page->imageView(), Qt::LeftButton, {},
                      m_page->imageView()->patchRect(query).center().toPoint());
    QCOMPARE(doc()->patches(), (std::vector<int>{query}));

    // The map from the tensor itself: attention of query token → every patch token.
    const int qt = doc()->image()->result.grid.tokenOfPatch(query);
    float lo = 1e9f, hi = -1e9f;
    int best = 0;
    for (int p = 0; p < grid.count(); ++p) {
        const float v = attention(layer, head, qt, p + 1);
        lo = std::min(lo, v);
        if (v > hi) {
            hi = v;
            best = p;
        }
    }
    QVERIFY(hi > lo);
    const RowMatrix map = doc()->currentMap();
    for (int p = 0; p < grid.count(); ++p)
        QCOMPARE(map(grid.row(p), grid.col(p)), attention(layer, head, qt, p + 1));

    // Check the strongest patch and the query patch itself, at their centres on the display picture.
    const QImage shown = m_page->imageView()->picture();
    const ImageU8& base = doc()->image()->display;
    QCOMPARE(shown.width(), base.width);
    const double k = static_cast<double>(base.width) / grid.imageWidth();
    for (int p : {best, query}) {
        const RectF r = grid.imageRect(p);
        const int x = static_cast<int>((r.x + r.width / 2) * k),
                  y = static_cast<int>((r.y + r.height / 2) * k);
        const Rgb c = colorAt(ColorMap::Viridis, (attention(layer, head, qt, p + 1) - lo) / (hi - lo));
        const uint8_t g = base.at(x, y); // grey picture
        const QColor got = shown.pixelColor(x, y);
        QCOMPARE(got.red(), static_cast<int>(blend(g, c.r, 0.5f)));
        QCOMPARE(got.green(), static_cast<int>(blend(g, c.g, 0.5f)));
        QCOMPARE(got.blue(), static_cast<int>(blend(g, c.b, 0.5f)));
    }
    // And on screen: at opacity 1 the widget shows the map colour itself in the middle of the patch the
    // CLS token attends to most (CLS: no patch outline drawn over it).
    doc()->selectCls();
    doc()->setOpacity(1.0f);
    int clsBest = 0;
    for (int p = 1; p < grid.count(); ++p)
        if (attention(layer, head, 0, p + 1) > attention(layer, head, 0, clsBest + 1)) clsBest = p;
    const QImage screen = m_page->imageView()->grab().toImage();
    const QPointF centre = m_page->imageView()->patchRect(clsBest).center() * screen.devicePixelRatio();
    const Rgb top = colorAt(ColorMap::Viridis, 1.0f);
    QCOMPARE(screen.pixelColor(centre.toPoint()), QColor(top.r, top.g, top.b));
}

void TestVisionPage::headsGridHasOneTilePerHeadAndSelects() {
    openAndWait(samplePath("sneaker_1.png"));
    MapGridView* grid = m_page->headsGrid();
    QCOMPARE(grid->count(), doc()->numHeads());
    QCOMPARE(doc()->headMaps().size(), static_cast<size_t>(doc()->numHeads()));
    // Tile h is head h's map blended over the thumbnail by the core renderer.
    const auto maps = doc()->headMaps();
    for (int h = 0; h < grid->count(); ++h) {
        const RgbImage expected =
            renderOverlay(doc()->image()->thumbnail, maps[static_cast<size_t>(h)], doc()->overlayOptions());
        const QImage tile = grid->tile(h);
        QCOMPARE(tile.width(), expected.width);
        const Rgb e = expected.pixel(expected.width / 3, expected.height / 2);
        QCOMPARE(tile.pixelColor(expected.width / 3, expected.height / 2), QColor(e.r, e.g, e.b));
    }
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->tileRect(2).center());
    QCOMPARE(doc()->head(), 2);
    QCOMPARE(grid->selected(), 2);
    auto* headCombo = m_page->findChild<QComboBox*>("head");
    QCOMPARE(headCombo->currentText(), QStringLiteral("Head 2")); // numbered from 0, as the CLI
    // The layers strip follows the head: tile l = head 2 at layer l.
    MapGridView* layers = m_page->layersStrip();
    QCOMPARE(layers->count(), doc()->numLayers());
    const auto layerMaps = doc()->layerMaps();
    const RowMatrix direct = doc()->mapFor(0, {2, HeadFusion::Mean}, false);
    QVERIFY(layerMaps[0].isApprox(direct, 0.0f));
    QTest::mouseClick(layers, Qt::LeftButton, {}, layers->tileRect(0).center());
    QCOMPARE(doc()->layer(), 0);
}

void TestVisionPage::severalPatchesSumOrAverage() {
    openAndWait(samplePath("bag_1.png"));
    doc()->setLayer(2);
    doc()->setHead(1);
    const int a = 10, b = 24;
    doc()->selectPatches({a});
    const RowMatrix ma = doc()->currentMap();
    doc()->selectPatches({b});
    const RowMatrix mb = doc()->currentMap();

    // Click a, shift-click b: both are the query.
    PatchImageView* view = m_page->imageView();
    QTest::mouseClick(view, Qt::LeftButton, {}, view->patchRect(a).center().toPoint());
    QTest::mouseClick(view, Qt::LeftButton, Qt::ShiftModifier, view->patchRect(b).center().toPoint());
    QCOMPARE(doc()->patches(), (std::vector<int>{a, b}));
    const RowMatrix sum = doc()->currentMap();
    QCOMPARE(sum.rows(), 7);
    for (int i = 0; i < sum.size(); ++i)
        QVERIFY(std::abs(sum.data()[i] - (ma.data()[i] + mb.data()[i])) < 1e-6f);
    // Sum of two probability rows over the patches: ≤ 2 and > 0.
    QVERIFY(sum.sum() > 0.0f && sum.sum() <= 2.0f + 1e-5f);
    doc()->setReduce(TokenReduce::Mean);
    const RowMatrix mean = doc()->currentMap();
    for (int i = 0; i < mean.size(); ++i)
        QVERIFY(std::abs(mean.data()[i] - 0.5f * (ma.data()[i] + mb.data()[i])) < 1e-6f);
    // Shift-click again removes it.
    QTest::mouseClick(view, Qt::LeftButton, Qt::ShiftModifier, view->patchRect(b).center().toPoint());
    QCOMPARE(doc()->patches(), (std::vector<int>{a}));
}

void TestVisionPage::dragSelectsARectangleOfPatches() {
    openAndWait(samplePath("bag_1.png"));
    PatchImageView* view = m_page->imageView();
    const PatchGrid& grid = view->grid();
    const QPoint from = view->patchRect(grid.index(1, 1)).center().toPoint();
    const QPoint to = view->patchRect(grid.index(2, 3)).center().toPoint();
    QTest::mousePress(view, Qt::LeftButton, {}, from);
    QMouseEvent move(QEvent::MouseMove, QPointF(to), view->mapToGlobal(QPointF(to)), Qt::NoButton,
                     Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &move);
    QTest::mouseRelease(view, Qt::LeftButton, {}, to);
    const std::vector<int> expected{grid.index(1, 1), grid.index(1, 2), grid.index(1, 3),
                                    grid.index(2, 1), grid.index(2, 2), grid.index(2, 3)};
    QCOMPARE(doc()->patches(), expected);
}

void TestVisionPage::keySideReadsTheAttentionColumn() {
    openAndWait(samplePath("bag_1.png"));
    doc()->setLayer(0);
    doc()->setHead(3);
    const int patch = 17;
    doc()->selectPatches({patch});
    auto* keySide = m_page->findChild<QAbstractButton*>("keySide");
    keySide->click();
    QVERIFY(doc()->keySide());
    const RowMatrix map = doc()->currentMap();
    for (int p = 0; p < 49; ++p)
        QCOMPARE(map(p / 7, p % 7), attention(0, 3, p + 1, patch + 1)); // who attends to the patch
}

void TestVisionPage::rolloutMatchesCore() {
    openAndWait(samplePath("coat_1.png"));
    doc()->setLayer(2);
    doc()->setRollout(true);
    RolloutOptions options;
    options.lastLayer = 2;
    const RowMatrix r = attentionRollout(doc()->image()->result.output.attentions, options); // [T, T]
    const RowMatrix expected = tokensToGrid(r.row(0).transpose(), 7, 7);
    QVERIFY(doc()->currentMap().isApprox(expected, 1e-6f));
    QCOMPARE(m_page->headsGrid()->count(), 0); // rollout fuses the heads
    QCOMPARE(m_page->layersStrip()->count(), doc()->numLayers());
}

// The token-norm map: ‖x‖ of each patch token after the layer, laid out on the grid; rollout turns it off.
void TestVisionPage::tokenNormsMap() {
    openAndWait(samplePath("coat_1.png"));
    doc()->setLayer(1);
    auto* box = m_page->findChild<QCheckBox*>(QStringLiteral("tokenNorms"));
    box->setChecked(true);
    QVERIFY(doc()->tokenNorms() && !doc()->rollout());
    const Tensor& norms = doc()->image()->result.output.tokenNorms; // [L, T]
    const RowMatrix expected = tokensToGrid(ConstVectorMap(norms.data() + norms.dim(1), norms.dim(1)), 7, 7);
    QVERIFY(doc()->currentMap().isApprox(expected, 1e-6f));
    QCOMPARE(m_page->headsGrid()->count(), 0); // a norm has no heads
    QVERIFY(doc()->mapDescription().startsWith(QStringLiteral("token norms after layer 1 · CLS")));
    doc()->setRollout(true);
    QVERIFY(!doc()->tokenNorms() && !box->isChecked());
}

void TestVisionPage::badImageKeepsThePreviousState() {
    openAndWait(samplePath("coat_1.png"));
    doc()->selectPatches({5});
    const auto before = doc()->image();
    QTemporaryDir dir;
    const QString bad = dir.filePath("broken.png");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("\x89PNG\r\n\x1a\n this is not a png");
    f.close();
    QSignalSpy error(m_page.get(), &VisionPage::failed);
    m_page->openImage(bad);
    WAIT_UNTIL(error.count() > 0);
    QVERIFY2(error.at(0).at(0).toString().contains("broken.png"), qPrintable(error.at(0).at(0).toString()));
    QVERIFY(!m_page->message().isEmpty());
    WAIT_UNTIL(!m_page->isBusy());
    QCOMPARE(doc()->image(), before);
    QCOMPARE(doc()->patches(), (std::vector<int>{5}));
    m_page->openImage(dir.filePath("missing.png"));
    WAIT_UNTIL(!m_page->isBusy());
    QCOMPARE(doc()->image(), before);
}

void TestVisionPage::pastedImageOfAnotherSizeIsAnalysed() {
    // A 90×60 RGB picture: resized to the 28×28 input, shown at its own aspect ratio.
    QImage img(90, 60, QImage::Format_RGB32);
    for (int y = 0; y < 60; ++y)
        for (int x = 0; x < 90; ++x)
            img.setPixelColor(x, y, QColor((x * 3) % 256, (y * 4) % 256, 128));
    QSignalSpy shown(m_page.get(), &VisionPage::resultReady);
    m_page->openImage(img, "test picture");
    WAIT_UNTIL(shown.count() > 0);
    WAIT_UNTIL(!m_page->isBusy());
    QCOMPARE(doc()->image()->image.width, 90);
    QCOMPARE(doc()->image()->image.channels, 3);
    const QRectF area = m_page->imageView()->imageRect();
    QVERIFY(std::abs(area.width() / area.height() - 1.5) < 0.02);
    // A patch is 90/7 × 60/7 original pixels.
    QVERIFY(std::abs(m_page->imageView()->patchRect(0).width() / area.width() - 1.0 / 7) < 1e-6);
}

void TestVisionPage::droppedFileIsAnalysed() {
    openAndWait(samplePath("coat_1.png"));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(samplePath("trouser_2.png"))});
    QSignalSpy shown(m_page.get(), &VisionPage::resultReady);
    const QPoint at = m_page->imageView()->geometry().center();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_page.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_page.get(), &drop);
    WAIT_UNTIL(shown.count() > 0);
    QCOMPARE(doc()->image()->source, QStringLiteral("trouser_2.png"));
}

void TestVisionPage::exportsOverlayHeadsAndMaps() {
    openAndWait(samplePath("dress_1.png"));
    doc()->selectPatches({20});
    QTemporaryDir dir;
    const QString png = dir.filePath("overlay.png");
    QVERIFY(m_page->exportOverlay(png));
    const QImage saved(png);
    QCOMPARE(saved.size(), QSize(28, 28)); // the original resolution
    const RgbImage expected =
        renderOverlay(doc()->image()->image, doc()->currentMap(), doc()->overlayOptions());
    for (int y = 0; y < 28; y += 5)
        for (int x = 0; x < 28; x += 5) {
            const Rgb e = expected.pixel(x, y);
            QCOMPARE(saved.pixelColor(x, y), QColor(e.r, e.g, e.b));
        }
    // With the colour bar and a caption: the overlay on top (same pixels), the strip under it.
    const QString captioned = dir.filePath("captioned.png");
    QVERIFY(m_page->exportCaptionedOverlay(captioned));
    const QImage withBar(captioned);
    QCOMPARE(withBar.width(), 320); // a 28 px picture centred over a 320 px strip
    QVERIFY(withBar.height() > 28 + 40);
    const Rgb corner = expected.pixel(0, 0);
    QCOMPARE(withBar.pixelColor((320 - 28) / 2, 0), QColor(corner.r, corner.g, corner.b));
    // The bar runs from the colour map's low end (left) to its high end (right).
    const int barY = 28 + 10 + 7;
    auto near = [](QColor a, QColor b) {
        return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) +
                   std::abs(a.blue() - b.blue()) <=
               12;
    };
    QVERIFY(near(withBar.pixelColor(12, barY), attnlens::ui::colorFor(doc()->colorMap(), 0.0f)));
    QVERIFY(near(withBar.pixelColor(307, barY), attnlens::ui::colorFor(doc()->colorMap(), 1.0f)));

    const QString heads = dir.filePath("heads.png");
    QVERIFY(m_page->exportHeadsGrid(heads));
    const QImage headsImage(heads);
    QVERIFY(headsImage.width() >= doc()->numHeads() * 140);

    const QString npy = dir.filePath("map.npy");
    QVERIFY(m_page->exportMap(npy));
    QFile npyFile(npy);
    QVERIFY(npyFile.open(QIODevice::ReadOnly));
    const QByteArray bytes = npyFile.readAll();
    QVERIFY(bytes.startsWith("\x93NUMPY"));
    QVERIFY(bytes.contains("'shape': (7, 7)"));
    float first = 0;
    std::memcpy(&first, bytes.constData() + bytes.size() - 49 * 4, 4);
    QCOMPARE(first, doc()->currentMap()(0, 0));

    const QString csv = dir.filePath("map.csv");
    QVERIFY(m_page->exportMap(csv));
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csvFile.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 8); // a header naming the columns, then a row per patch row led by its index
    QCOMPARE(lines[0], QByteArray("row\\col,0,1,2,3,4,5,6"));
    QCOMPARE(lines[1].split(',').size(), 8);
    QCOMPARE(lines[3].split(',')[0], QByteArray("2"));
    QCOMPARE(lines[1].split(',')[1].toFloat(), doc()->currentMap()(0, 0));
}

// A 3000×500 banner and a 400×2500 strip: the window keeps its size, and the built-in Fashion-MNIST model's
// predictions get a note that the picture is not like its training data; a sample gets none.
void TestVisionPage::wideAndTallPicturesKeepTheWindowSize() {
    QTemporaryDir dir;
    const QSize before = m_page->window()->size();
    auto* note = m_page->findChild<QLabel*>(QStringLiteral("domainNote"));
    QVERIFY(note);
    for (const QSize size : {QSize(3000, 500), QSize(400, 2500)}) {
        QImage picture(size, QImage::Format_RGB32);
        for (int y = 0; y < size.height(); ++y)
            for (int x = 0; x < size.width(); ++x)
                picture.setPixelColor(x, y, QColor(255 * x / size.width(), 180, 255 * y / size.height()));
        const QString path = dir.filePath(QStringLiteral("p%1x%2.png").arg(size.width()).arg(size.height()));
        QVERIFY(picture.save(path));
        openAndWait(path);
        QCoreApplication::processEvents();
        QCOMPARE(m_page->window()->size(), before);
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains(QStringLiteral("in colour")), qPrintable(note->text()));
        QVERIFY(note->text().contains(QStringLiteral(":1")));
        QVERIFY(!m_page->imageView()->grab().isNull());
    }
    openAndWait(samplePath("sneaker_1.png"));
    QCOMPARE(m_page->window()->size(), before);
    QVERIFY(!note->isVisible());
}

void TestVisionPage::smallImagesAreEnlargedCrisply() {
    ImageU8 tiny(28, 28, 1);
    for (int y = 0; y < 28; ++y)
        for (int x = 0; x < 28; ++x)
            tiny.at(x, y) = static_cast<uint8_t>((x + y) % 2 ? 255 : 0);
    const ImageU8 big =
        VisionDocument::displayCopy(tiny, VisionDocument::kDisplayMin, VisionDocument::kDisplayMax);
    QVERIFY(big.width >= VisionDocument::kDisplayMin);
    QCOMPARE(big.width % 28, 0);
    const int k = big.width / 28;
    // Every source pixel becomes a k×k square of the same value (nearest, no blur).
    for (int y = 0; y < big.height; y += 7)
        for (int x = 0; x < big.width; x += 5)
            QCOMPARE(big.at(x, y), tiny.at(x / k, y / k));
    // Large pictures are reduced to the display bound.
    const ImageU8 huge(3000, 1000, 3);
    const ImageU8 reduced =
        VisionDocument::displayCopy(huge, VisionDocument::kDisplayMin, VisionDocument::kDisplayMax);
    QCOMPARE(reduced.width, VisionDocument::kDisplayMax);
    QCOMPARE(reduced.height, 341);
}

void TestVisionPage::modelOpenedDuringAnalysisReanalyses() {
    // A DeiT checkpoint (centre crop) is still loading when the user opens a picture, which is
    // therefore queued for the old model: what ends up on screen must be that picture analysed by
    // the new model (not the old model's result, nor the previous picture re-run).
    const QString deit = QStringLiteral(ATTNLENS_TEST_DATA "/vit/rgb-deit");
    m_page->openModel(deit);
    m_page->openImage(samplePath("bag_1.png"));
    WAIT_UNTIL(!m_page->isBusy() && doc()->hasImage() && doc()->image()->result.grid.inputWidth() == 16);
    QTest::qWait(200);
    QVERIFY(!m_page->isBusy());
    const auto& r = doc()->image()->result;
    QCOMPARE(QString::fromStdString(doc()->model()->dir().filename().string()), QStringLiteral("rgb-deit"));
    QCOMPARE(r.output.attentions.shape()[2], int64_t(17)); // CLS + 4×4 patches of the 16×16 crop
    QCOMPARE(doc()->image()->source, QStringLiteral("bag_1.png"));
    QVERIFY(r.grid.cropped());
    QVERIFY(m_page->modelDescription().contains(QStringLiteral("centre crop 16×16")));
    // The overlay covers the crop window only: the first column lies left of it (28·1/19 px) and is
    // the picture dimmed to 40 %.
    const RgbImage over = doc()->renderOriginalOverlay();
    const ImageU8& picture = doc()->image()->image;
    for (int y = 0; y < picture.height; y += 3)
        QCOMPARE(int(over.pixel(0, y).r), int(std::lround(0.4f * picture.at(0, y, 0))));
}

// Map → Head statistics…: the lens shows core's statistics of this picture (distances in input pixels, CLS as
// the sink), follows a new picture, and a click on a head shows that head in the map.
void TestVisionPage::headStatisticsLens() {
    m_page->findChild<QPushButton*>("headStatsButton")->click();
    HeadsLensView* lens = m_page->headsLens();
    QVERIFY(lens && lens->isVisible() && lens->hasStats());
    const auto& image = doc()->image();
    const int patch = doc()->model()->config().patchSize;
    const HeadStats expected = captureHeadStats(vitCapture(image->result, patch), AttentionKind::EncoderSelf);
    QCOMPARE(lens->stats().distance, expected.distance);
    QCOMPARE(lens->stats().sink, expected.sink);
    QCOMPARE(lens->grid()->rows(), doc()->numLayers());
    QCOMPARE(lens->grid()->columns(), doc()->numHeads());
    // Distances in pixels of the 28 × 28 input: between 0 and the diagonal.
    QVERIFY(expected.distance.minCoeff() >= 0 && expected.distance.maxCoeff() < 28 * std::sqrt(2.0f));
    // A new picture: new statistics.
    const RowMatrix before = lens->stats().entropy;
    openAndWait(QStringLiteral(ATTNLENS_TEST_DATA "/vit/images/photo_97x61.png"));
    QVERIFY(lens->stats().entropy != before);
    emit lens->grid()->cellClicked(1, 2);
    QCOMPARE(doc()->layer(), 1);
    QCOMPARE(doc()->head(), 2);
    QVERIFY(!doc()->rollout());
    auto* dialog = m_page->findChild<QDialog*>("headsDialog");
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        dialog->grab().save(QString::fromLocal8Bit(dir) + "/vision-heads-lens.png");
    dialog->close();
}

// Pin the CLS map of one picture as A, open another: the window shows A, B and A − B (the maps as they are,
// the difference cell by cell, the JS divergence of the two maps as distributions); another layer updates B;
// Unpin.
void TestVisionPage::differenceOfTwoPictures() {
    doc()->setRollout(false);
    doc()->setLayer(3);
    doc()->setHead(-1);
    doc()->selectCls();
    const RowMatrix a = doc()->currentMap();
    m_page->findChild<QPushButton*>("pinMap")->click();
    MapDifferenceWindow* window = m_page->differenceWindow();
    QVERIFY(window && window->hasPin());
    DifferenceView* view = window->view();
    QVERIFY(view && view->isVisible() && view->hasDifference());
    QCOMPARE(view->viewDelta()->scene().values.cwiseAbs().maxCoeff(), 0.0f); // A = B right after pinning
    openAndWait(samplePath("sneaker_1.png"));
    WAIT_UNTIL(view->hasDifference());
    const RowMatrix b = doc()->currentMap();
    QCOMPARE(view->viewA()->scene().values, a);
    QCOMPARE(view->viewB()->scene().values, b);
    QCOMPARE(view->viewDelta()->scene().values, RowMatrix(a - b));
    QVERIFY2(view->summary().contains("Jensen–Shannon"), qPrintable(view->summary()));
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        m_page->findChild<QDialog*>("differenceDialog")
            ->grab()
            .save(QString::fromLocal8Bit(dir) + "/vision-difference.png");
    doc()->setLayer(0);
    QCOMPARE(view->viewB()->scene().values, doc()->currentMap());
    window->findChild<QPushButton*>("unpinMap")->click();
    QVERIFY(!window->hasPin() && !window->isVisible());
}

// Map → Inside one score…: the neuron view of the query patch in the chosen layer and head, its strongest
// key; the weight equals the captured attention; another layer is computed on the worker; a new picture
// follows.
void TestVisionPage::neuronViewOfTheQueryPatch() {
    doc()->setRollout(false);
    doc()->setLayer(1);
    doc()->setHead(1);
    m_page->findChild<QPushButton*>("neuronButton")->click();
    NeuronDialog* dialog = m_page->neuronDialog();
    QVERIFY(dialog && dialog->isVisible());
    WAIT_UNTIL(dialog->terms().has_value());
    const auto image = doc()->image();
    const Tensor& a = image->result.output.attentions;
    QCOMPARE(dialog->layer(), 1);
    QCOMPARE(dialog->head(), 1);
    QCOMPARE(dialog->query(), doc()->queryTokens().front());
    Eigen::Index best = 0;
    a.slice2d({1, 1}).row(dialog->query()).maxCoeff(&best);
    QCOMPARE(dialog->key(), int(best));
    QVERIFY(std::abs(dialog->terms()->weight - a.at({1, 1, dialog->query(), dialog->key()})) < 1e-5);
    QCOMPARE(dialog->terms()->headDim,
             int(doc()->model()->config().hiddenSize / doc()->model()->config().numHeads));
    dialog->findChild<QComboBox*>("neuronLayer")->setCurrentIndex(0);
    dialog->findChild<QComboBox*>("neuronKey")->setCurrentIndex(0); // CLS
    WAIT_UNTIL(dialog->terms().has_value() && dialog->layer() == 0);
    QVERIFY(std::abs(dialog->terms()->weight - a.at({0, 1, dialog->query(), 0})) < 1e-5);
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        dialog->grab().save(QString::fromLocal8Bit(dir) + "/vision-neuron.png");
    // A new picture: the window follows (same layer, head and query), weights of the new run.
    openAndWait(QStringLiteral(ATTNLENS_TEST_DATA "/vit/images/photo_97x61.png"));
    WAIT_UNTIL(dialog->terms().has_value() && doc()->image() != image);
    QVERIFY(std::abs(dialog->terms()->weight -
                     doc()->image()->result.output.attentions.at(
                         {dialog->layer(), dialog->head(), dialog->query(), dialog->key()})) < 1e-5);
    dialog->close();
}

// Ticking "off" in the Heads lens re-runs the picture without that head (its attention all zero, the
// predictions those of VitModel with the head ablated) and says what changed; "Rank by importance" measures
// every head alone on the worker; "Switch all on" goes back to the plain run.
void TestVisionPage::headAblationFromTheLens() {
    m_page->findChild<QPushButton*>("headStatsButton")->click();
    HeadsLensView* lens = m_page->headsLens();
    WAIT_UNTIL(lens->hasStats());
    QTableWidget* table = lens->table();
    QCOMPARE(table->horizontalHeaderItem(0)->text(), QStringLiteral("off"));
    const int row = lens->tableRow(1, 2);
    QVERIFY(row >= 0);
    table->item(row, 0)->setCheckState(Qt::Checked);
    WAIT_UNTIL(!m_page->isBusy() && !doc()->image()->ablated.empty());
    QCOMPARE(m_page->ablatedHeads(), (std::vector<std::pair<int, int>>{{1, 2}}));
    const auto& image = doc()->image();
    QCOMPARE(image->result.output.attentions.sub({1, 2}).matrix().cwiseAbs().maxCoeff(), 0.0f);
    VitRunOptions off;
    off.offHeads = {{1, 2}};
    const VitOutput direct = doc()->model()->forward(image->result.input.pixels, off);
    QCOMPARE(image->result.output.logits.toVector(), direct.logits.toVector());
    auto* note = m_page->findChild<QLabel*>("ablationNote");
    QVERIFY(note->isVisible());
    QVERIFY2(note->text().contains("1 head off:") && note->text().contains(" % → "),
             qPrintable(note->text()));
    QVERIFY2(note->toolTip().contains("Top 5 with all heads"), qPrintable(note->toolTip()));
    // The note is short and the patch-grid map beside it keeps readable cells (the four-line note left the
    // map 114 px at this window size, ~12 px rows; issue 38).
    QVERIFY2(!note->text().contains("Top 5"), qPrintable(note->text()));
    QVERIFY2(m_page->findChild<QWidget*>("rawMap")->height() >= 135,
             qPrintable(QString::number(m_page->findChild<QWidget*>("rawMap")->height())));
    QCOMPARE(lens->ablated(), m_page->ablatedHeads());
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        m_page->grab().save(QString::fromLocal8Bit(dir) + "/vision-ablated.png");

    // Rank by importance: every head alone; head (0, 0)'s value checked against a direct computation.
    m_page->findChild<QPushButton*>("headsRank")->click();
    WAIT_UNTIL(!m_page->isBusy() && lens->hasImportance());
    QVERIFY(lens->showingImportance());
    VitRunOptions plain;
    plain.captureAttention = false;
    const VitOutput base = doc()->model()->forward(image->result.input.pixels, plain);
    const int cls = doc()->model()->topK(base, 1).front().index;
    VitRunOptions one = plain;
    one.offHeads = {{0, 0}};
    const VitOutput o = doc()->model()->forward(image->result.input.pixels, one);
    const double expected = std::log(base.probabilities.at({cls})) - std::log(o.probabilities.at({cls}));
    QVERIFY(std::abs(lens->grid()->scene().values(0, 0) - expected) < 1e-4);

    m_page->findChild<QPushButton*>("headsAllOn")->click();
    WAIT_UNTIL(!m_page->isBusy() && doc()->image()->ablated.empty());
    QVERIFY(!note->isVisible());
    QVERIFY(m_page->ablatedHeads().empty());
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        m_page->findChild<QDialog*>("headsDialog")
            ->grab()
            .save(QString::fromLocal8Bit(dir) + "/vision-importance.png");
    m_page->findChild<QDialog*>("headsDialog")->close();
}

// Map → Attention flow: computed on the worker and equal to core's attentionFlow of the query (CLS, then two
// patches summed) through layers 0..L; rollout and flow exclude each other; key side is off in flow mode.
void TestVisionPage::attentionFlowMap() {
    auto* flow = m_page->findChild<QCheckBox*>("flow");
    QVERIFY(flow);
    flow->setChecked(true);
    QVERIFY(doc()->flow() && !doc()->rollout());
    WAIT_UNTIL(!m_page->isBusy() && !doc()->flowPending());
    FlowOptions options;
    options.lastLayer = doc()->layer();
    const Tensor& att = doc()->image()->result.output.attentions;
    std::vector<float> f = attentionFlow(att, 0, options);
    RowMatrix expected = tokensToGrid(Eigen::Map<const Eigen::VectorXf>(f.data(), Eigen::Index(f.size())),
                                      doc()->gridRows(), doc()->gridCols());
    QVERIFY((doc()->currentMap() - expected).cwiseAbs().maxCoeff() < 1e-6f);
    QVERIFY(doc()->mapDescription().startsWith("attention flow"));
    QVERIFY(!m_page->findChild<QCheckBox*>("keySide")->isEnabled());
    // Two patches, summed; a lower layer.
    doc()->setLayer(1);
    doc()->selectPatches({3, 10});
    WAIT_UNTIL(!m_page->isBusy() && !doc()->flowPending());
    options.lastLayer = 1;
    const std::vector<float> a = attentionFlow(att, 4, options), b = attentionFlow(att, 11, options);
    Eigen::VectorXf sum(Eigen::Index(a.size()));
    for (size_t i = 0; i < a.size(); ++i)
        sum(Eigen::Index(i)) = a[i] + b[i];
    expected = tokensToGrid(sum, doc()->gridRows(), doc()->gridCols());
    QVERIFY((doc()->currentMap() - expected).cwiseAbs().maxCoeff() < 1e-5f);
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        m_page->grab().save(QString::fromLocal8Bit(dir) + "/vision-flow.png");
    // Rollout switches flow off.
    m_page->findChild<QCheckBox*>("rollout")->setChecked(true);
    QVERIFY(doc()->rollout() && !doc()->flow());
    QVERIFY(!flow->isChecked());
}

QTEST_MAIN(TestVisionPage)
#include "test_vision_page.moc"
