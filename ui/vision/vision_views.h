#pragma once
// VisionViews: the centre of the Vision page — the picture with the map over it (click, shift-click or drag
// patches to make them the query), beside it the predictions (with notes when the picture is unlike the
// training data or heads are off) and the map as a labelled patch grid; below, every head of the layer and
// the same head through every layer (click a tile to show it). Reads and sets the page's VisionDocument.
//
// Object names: "mapTitle", "imageView", "predictions", "domainNote", "ablationNote", "rawMap", "headsGrid",
// "layersStrip", "predictionTabs", "classByLayer"; the splitters "visionTopSplitter" and "visionSplitter"
// (sizes remembered by the window).

#include <QWidget>

class QLabel;
class QTabWidget;

namespace attnlens::ui {

class HeatmapView;
class MapGridView;
class PatchImageView;
class PredictionsView;
class VisionDocument;
struct VisionImage;

class VisionViews : public QWidget {
    Q_OBJECT
public:
    VisionViews(VisionDocument* doc, QWidget* parent);

    // The picture, the maps and the grids from the document; returns the milliseconds it took.
    double refreshMaps();
    // The predictions of the result on screen; expectedClass: the sample's true class (else empty);
    // builtinModel: say when a picture does not look like the built-in model's training data.
    void refreshPredictions(const QString& expectedClass, bool builtinModel);

    PatchImageView* imageView() const { return m_imageView; }
    HeatmapView* rawMapView() const { return m_rawMap; }
    MapGridView* headsGrid() const { return m_headsGrid; }
    MapGridView* layersStrip() const { return m_layersStrip; }
    PredictionsView* predictionsView() const { return m_predictions; }
    HeatmapView* classLensView() const { return m_classLens; }

private:
    void connectImageView();
    QWidget* buildImageSide(QWidget* parent);
    QWidget* buildGrids(QWidget* parent);
    void refreshClassLens(const VisionImage& img);

    VisionDocument* m_doc;
    QLabel* m_mapTitle = nullptr;
    PatchImageView* m_imageView = nullptr;
    PredictionsView* m_predictions = nullptr;
    QLabel* m_domainNote = nullptr;   // "this picture does not look like Fashion-MNIST" (built-in model only)
    QLabel* m_ablationNote = nullptr; // "3 heads off: Bag 56.6 % → 40.1 %"
    QTabWidget* m_predictionTabs = nullptr; // Prediction | By layer
    int m_classTab = -1;
    HeatmapView* m_classLens = nullptr; // the top classes' probabilities layer by layer (logit lens)
    HeatmapView* m_rawMap = nullptr;
    QLabel* m_headsTitle = nullptr;
    MapGridView* m_headsGrid = nullptr;
    QLabel* m_layersTitle = nullptr;
    MapGridView* m_layersStrip = nullptr;
};

} // namespace attnlens::ui
