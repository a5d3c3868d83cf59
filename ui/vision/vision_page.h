#pragma once
// VisionPage: the "Vision" workspace. Load any image (dialog, drag-and-drop, Ctrl+V, or a sample) and
// see where each head of a ViT looks: click a patch to make it the query (shift-click or drag for
// several), or use CLS; the map is blended over the picture and shown beside it as the raw patch-grid
// heatmap; the heads grid shows every head of the layer at once and the layers strip one head through
// the depth. The page is thin: state lives in VisionDocument; loading and inference run on an
// InferenceWorker (progress, cancel); a failed image or model leaves the previous state in place.
//
// Child widgets carry object names for tests and style sheets: "openImage", "pasteImage", "samples",
// "imageView", "rawMap", "predictions", "headsGrid", "layersStrip", "clsButton", "reduce", "keySide",
// "layer", "head", "rollout", "opacity", "colorMap", "smooth", "export", "progress", "cancel", "message",
// "mapTitle".

#include "ui/shell/workspace_page.h"
#include "ui/vision/vision_document.h"
#include "ui/widgets/precision_note.h"

#include <QWidget>

#include <functional>
#include <optional>

class QCheckBox;
class QDialog;
class QComboBox;
class QLabel;
class QPushButton;
class QToolButton;

namespace attnlens::ui {

class NeuronDialog;
class MapDifferenceWindow;

class MapLensBox;
class HeadsLensView;
class HeatmapView;
class MapGridView;
class PatchImageView;
class PredictionsView;
class SampleGallery;

class VisionPage : public WorkspacePage {
    Q_OBJECT
public:
    // Starts loading `modelDir` (empty: the built-in vit-fashion-mnist) and then the first sample.
    explicit VisionPage(QWidget* parent = nullptr, const QString& modelDir = {});

    // Help → What am I looking at? (ui/…/*_help.cpp)
    QString viewTitle() const override;
    QString viewExplanation() const override;
    ~VisionPage() override;

    // ModelPage
    void openModel(const QString& dir) override;
    QString modelDescription() const override;

    // Queues loading + inference of an image file / an in-memory image; the result replaces the current
    // one when it arrives. Errors are shown on the page; the previous image stays.
    Q_INVOKABLE void openImage(const QString& path);
    // Map → Head statistics…: the Heads lens for the picture on screen in a window beside the page; a click
    // on a head shows it in the map (vision_heads.cpp). Null until first shown.
    void showHeadStats();
    HeadsLensView* headsLens() const { return m_headsLens; }
    // Head ablation: these (layer, head) pairs off for the picture on screen and every later one (run again
    // now); an empty list switches all heads on. Forgotten when another model loads.
    void setAblatedHeads(std::vector<std::pair<int, int>> heads);
    const std::vector<std::pair<int, int>>& ablatedHeads() const { return m_ablated; }
    // Every head switched off alone on the worker: the drop of the plain run's top class log-probability,
    // shown in the Heads lens as "importance" (vision_heads.cpp).
    void rankHeadsByImportance();
    // Map → Inside one score…: the neuron view for the picture on screen — the chosen layer and head, the
    // first query patch and its strongest key (vision_heads.cpp). Null until first shown.
    void showNeuronView();
    NeuronDialog* neuronDialog() const { return m_neuron; }
    // Difference maps (vision_difference.cpp): Map → Pin map as A keeps the map on screen; a window then
    // shows A, the map now (B: another picture, layer, head, query or model with the same patch grid) and A −
    // B.
    void pinMap();
    MapDifferenceWindow* differenceWindow() const { return m_difference; }
    void openImage(const QImage& image, const QString& source);
    void pasteImage(); // Ctrl+V: an image or an image file on the clipboard
    // The image opened once the model has loaded (default: the first sample); call before the load ends.
    void setStartImage(const QString& path) { m_pendingSample = path; }

    // SessionPage (vision_session.cpp): model, picture (its path, or the picture itself when pasted), query
    // patches or CLS, reduce, key side, layer, head, fusion, rollout / flow, look, heads off.
    QString sessionKey() const override { return QStringLiteral("vision"); }
    QJsonObject saveSession() const override;
    QString checkSession(const QJsonObject& state) const override;
    // The file of the picture on screen (empty for a pasted one).
    QString imagePath() const { return m_lastImagePath; }

    VisionDocument* document() const { return m_doc; }
    PatchImageView* imageView() const { return m_imageView; }
    HeatmapView* rawMapView() const { return m_rawMap; }
    MapGridView* headsGrid() const { return m_headsGrid; }
    MapGridView* layersStrip() const { return m_layersStrip; }
    PredictionsView* predictionsView() const { return m_predictions; }
    SampleGallery* sampleGallery() const { return m_gallery; }

    // Exports (also in the Export menu). Return false and show a message on failure.
    bool exportOverlay(const QString& path) const; // PNG at the original image resolution
    // The same with a colour bar of the map's range and a caption (layer, head, query) under it.
    bool exportCaptionedOverlay(const QString& path) const;
    bool exportHeadsGrid(const QString& path) const; // PNG of the heads grid
    bool exportMap(const QString& path) const;       // the current [rows, cols] map as .npy or .csv

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void modelReady() override;
    bool restoreInputs(const QJsonObject& state) override;
    bool hasModel() const override { return m_doc->model() != nullptr; }
    void continueRestore() override; // the model is here: heads off, then the picture
    void jobCancelled(int id) override;

private:
    // Construction: build the widgets, then connect document and worker to them.
    QWidget* buildTopBar();
    QWidget* buildSidebar();
    QWidget* buildSamplesBox(QWidget* panel);
    QWidget* buildQueryBox(QWidget* panel);
    QWidget* buildMapBox(QWidget* panel);
    QWidget* buildDisplayBox(QWidget* panel);
    QWidget* buildCentre();
    QWidget* buildImageSide(QWidget* parent);
    QWidget* buildGrids(QWidget* parent);
    void connectImageView();
    void connectDocument();
    void refreshHeadStats();    // vision_heads.cpp
    void refreshAblationNote(); // vision_heads.cpp
    void requestFlow();         // vision_heads.cpp: the attention flow map of the current key, on the worker
    void runImage(ImageU8 image, const QString& source, const QString& path);
    void applyRestoredView(); // the picture is here: the selection (vision_session.cpp)
    // Analyses the picture `load` returns (on the worker) with the current model and shows it.
    void analyse(std::function<ImageU8()> load, const QString& source, const QString& path);
    void syncControls();
    void refreshMaps(); // overlay, raw map, heads grid, layers strip
    void refreshPredictions();
    void chooseImage();
    enum class Export { Overlay, CaptionedOverlay, HeadsGrid, MapNpy, MapCsv };
    void chooseExport(Export what); // asks for a path, then writes

    VisionDocument* m_doc;
    PrecisionNote m_precisionNote; // bf16 loads: the measured difference from fp32
    QString m_pendingSample;       // the first sample, opened once the default model is loaded
    QString m_lastImagePath;
    ImageU8 m_lastImage; // the original of the current result, re-run when a new model arrives
    std::vector<std::pair<int, int>> m_ablated; // heads switched off (Heads lens)
    QLabel* m_ablationNote = nullptr;           // "3 heads off: Bag 56.6 % → 40.1 %"

    SampleGallery* m_gallery = nullptr;
    PatchImageView* m_imageView = nullptr;
    HeatmapView* m_rawMap = nullptr;
    PredictionsView* m_predictions = nullptr;
    MapGridView* m_headsGrid = nullptr;
    MapGridView* m_layersStrip = nullptr;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_imageLabel = nullptr;
    QLabel* m_domainNote = nullptr; // "this picture does not look like Fashion-MNIST" (built-in model only)
    QLabel* m_mapTitle = nullptr;
    QLabel* m_headsTitle = nullptr;
    QLabel* m_layersTitle = nullptr;
    QLabel* m_selectionLabel = nullptr;
    QLabel* m_timing = nullptr;
    QPushButton* m_clsButton = nullptr;
    QComboBox* m_reduce = nullptr;
    QCheckBox* m_keySide = nullptr;
    MapLensBox* m_mapBox = nullptr;
    QCheckBox* m_rollout = nullptr;
    QCheckBox* m_flow = nullptr;
    VisionDocument::FlowKey m_flowRequested; // the flow map asked of the worker last
    QDialog* m_headsDialog = nullptr;
    HeadsLensView* m_headsLens = nullptr;
    NeuronDialog* m_neuron = nullptr;
    MapDifferenceWindow* m_difference = nullptr;
    void refreshDifference();
    void pinMapAs(const RowMatrix& map, const QString& description); // opens the difference window
    QString describeMap() const;
    QCheckBox* m_smooth = nullptr;
    QToolButton* m_export = nullptr;
};

} // namespace attnlens::ui
