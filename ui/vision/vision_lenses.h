#pragma once
// VisionLenses: the lenses of the Vision page on the picture on screen, the same widgets the other pages use.
//   Heads       every head's statistics in a window that follows the picture, layer and head (a click shows
//               the head); "Rank by importance" (the drop of the top class's log-probability with the head
//               alone off) and heads switched off — the page runs the picture again without them.
//   Difference  the map on screen pinned as A, compared with the map shown now (another picture, layer,
//               head, query or model with the same patch grid): A, B and A − B in a window.
//   Neuron view one score taken apart (the layer's inputs computed on the page's worker).
//   Flow        the attention flow map of the current query, on the worker (above kFlowBudget: rollout).
// The page owns it; it reads the page's VisionDocument and runs on the page's worker.
//
// Object names: "headsDialog" (the window holding the HeadsLensView).

#include "core/contract/run_controls.h"
#include "core/tensor/tensor.h"
#include "ui/vision/vision_document.h"

#include <QObject>
#include <QString>

class QDialog;
class QWidget;

namespace attnlens::ui {

class HeadsLensView;
class InferenceWorker;
class MapDifferenceWindow;
class NeuronDialog;
struct VisionImage;

class VisionLenses : public QObject {
    Q_OBJECT
public:
    VisionLenses(VisionDocument* doc, InferenceWorker* worker, QWidget* page);

    void showHeadStats();
    HeadsLensView* headsLens() const { return m_headsLens; } // null until first shown
    // The heads switched off for the next run (sorted, no duplicates); setAblated emits ablationChanged.
    const HeadList& ablated() const { return m_ablated; }
    void setAblated(HeadList heads);
    void rankHeads();
    void showNeuronView();
    NeuronDialog* neuronDialog() const { return m_neuron; } // null until first shown
    // Pins the map on screen (or `map`) as A and opens the difference window.
    void pin();
    void pinAs(const RowMatrix& map, const QString& description);
    MapDifferenceWindow* differenceWindow() const { return m_difference; } // null until first pinned
    void requestFlow();
    void forgetFlowRequest() { m_flowRequested = {}; } // a cancelled flow is asked for again when needed

    // Under the predictions: which heads were off for `image` and what that did to the top class (empty when
    // none were).
    static QString ablationSummary(const VisionImage& image);
    static QString ablationDetails(const VisionImage& image); // the top 5 with all heads (the note's tooltip)

signals:
    void ablationChanged(); // the page runs the picture again
    void notice(const QString& message, bool error);

private:
    void refreshHeadStats();
    void refreshDifference();
    QString describeMap() const;

    VisionDocument* m_doc;
    InferenceWorker* m_worker;
    QWidget* m_page;
    HeadList m_ablated;
    VisionDocument::FlowKey m_flowRequested; // the flow map asked of the worker last
    QDialog* m_headsDialog = nullptr;
    HeadsLensView* m_headsLens = nullptr;
    NeuronDialog* m_neuron = nullptr;
    MapDifferenceWindow* m_difference = nullptr;
};

} // namespace attnlens::ui
