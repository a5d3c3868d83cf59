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
#include "ui/vision/vision_lenses.h"
#include "ui/widgets/precision_note.h"

#include <QWidget>

#include <functional>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QToolButton;

namespace attnlens::ui {

class NeuronDialog;
class MapDifferenceWindow;

class ClipTextBox;
class MapLensBox;
class HeadsLensView;
class HeatmapView;
class MapGridView;
class PatchImageView;
class PredictionsView;
class SampleGallery;
class VisionViews;

// Help → What am I looking at? (vision_help.cpp)
QString visionHelpTitle(const VisionDocument& doc);
QString visionHelpText(const VisionDocument& doc);

class VisionPage : public WorkspacePage {
    Q_OBJECT
public:
    // Starts loading `modelDir` (empty: the built-in vit-fashion-mnist) and then the first sample.
    explicit VisionPage(QWidget* parent = nullptr, const QString& modelDir = {});

    // Help → What am I looking at? (ui/…/*_help.cpp)
    QString viewTitle() const override { return visionHelpTitle(*m_doc); }
    QString viewExplanation() const override { return visionHelpText(*m_doc); }
    ~VisionPage() override;

    // ModelPage
    void openModel(const QString& dir) override;
    QString modelDescription() const override;

    // Queues loading + inference of an image file / an in-memory image; the result replaces the current
    // one when it arrives. Errors are shown on the page; the previous image stays.
    Q_INVOKABLE void openImage(const QString& path);
    // The lenses (ui/vision/vision_lenses.h): Map → Head statistics…, Inside one score…, Pin map as A…; heads
    // switched off apply to the picture on screen (run again now) and every later one, and are forgotten when
    // another model loads.
    VisionLenses* lenses() const { return m_lenses; }
    void showHeadStats() { m_lenses->showHeadStats(); }
    HeadsLensView* headsLens() const { return m_lenses->headsLens(); }
    void setAblatedHeads(HeadList heads) { m_lenses->setAblated(std::move(heads)); }
    const HeadList& ablatedHeads() const { return m_lenses->ablated(); }
    void showNeuronView() { m_lenses->showNeuronView(); }
    NeuronDialog* neuronDialog() const { return m_lenses->neuronDialog(); }
    void pinMap() { m_lenses->pin(); }
    MapDifferenceWindow* differenceWindow() const { return m_lenses->differenceWindow(); }
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
    VisionViews* views() const { return m_views; }
    PatchImageView* imageView() const;
    HeatmapView* rawMapView() const;
    MapGridView* headsGrid() const;
    MapGridView* layersStrip() const;
    PredictionsView* predictionsView() const;
    SampleGallery* sampleGallery() const { return m_gallery; }

    // Exports (also in the Export menu). Return false and show a message on failure.
    bool exportOverlay(const QString& path); // PNG at the original image resolution
    // The same with a colour bar of the map's range and a caption (layer, head, query) under it.
    bool exportCaptionedOverlay(const QString& path);
    bool exportHeadsGrid(const QString& path); // PNG of the heads grid
    bool exportMap(const QString& path);       // the current [rows, cols] map as .npy or .csv

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void modelReady() override;
    bool restoreInputs(const QJsonObject& state) override;
    bool hasModel() const override { return m_doc->model() != nullptr; }
    bool hasResult() const override { return m_doc->hasImage(); }
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
    void connectDocument();
    void runImage(ImageU8 image, const QString& source, const QString& path);
    void applyRestoredView(); // the picture is here: the selection (vision_session.cpp)
    // Analyses the picture `load` returns (on the worker) with the current model and shows it.
    void analyse(std::function<ImageU8()> load, const QString& source, const QString& path);
    void syncControls();
    void runTexts(const QString& line); // the Texts box's Enter
    void refreshMaps();                 // overlay, raw map, heads grid, layers strip
    void refreshPredictions();
    void chooseImage();
    QString exportBaseName() const override; // the picture's file name

    VisionDocument* m_doc;
    PrecisionNote m_precisionNote; // bf16 loads: the measured difference from fp32
    QString m_pendingSample;       // the first sample, opened once the default model is loaded
    QString m_lastImagePath;
    ImageU8 m_lastImage;               // the original of the current result, re-run when a new model arrives
    int m_analyseJob = 0;              // the worker's job of the last picture analysed
    int m_restoreImageJob = 0;         // the one a session being restored waits for
    mutable QByteArray m_lastImagePng; // m_lastImage as the session's PNG (saveSession encodes it once)
    VisionLenses* m_lenses = nullptr;

    SampleGallery* m_gallery = nullptr;
    VisionViews* m_views = nullptr;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_imageLabel = nullptr;
    QLabel* m_selectionLabel = nullptr;
    QLabel* m_timing = nullptr;
    QPushButton* m_clsButton = nullptr;
    QComboBox* m_registerBox = nullptr;
    QComboBox* m_reduce = nullptr;
    QCheckBox* m_keySide = nullptr;
    MapLensBox* m_mapBox = nullptr;
    ClipTextBox* m_textBox = nullptr;
    QCheckBox* m_rollout = nullptr;
    QCheckBox* m_flow = nullptr;
    QCheckBox* m_norms = nullptr;
    QCheckBox* m_smooth = nullptr;
    QToolButton* m_export = nullptr;
};

} // namespace attnlens::ui
