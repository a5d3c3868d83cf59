#pragma once
// DiffusionLenses: the lenses of the Diffusion page on the step shown, the same widgets the other pages use.
//   Heads       every head of every attention layer at the step shown, in a window that follows the step (a
//               click shows the head). Its "off" column switches heads off for the step shown: the step's
//               noise prediction is made again without them (worker) and the window shows x̂0 with all heads,
//               without them and |Δ|, with how far ε̂ moved. "Rank by importance": each head alone off, ε̂'s
//               relative change.
//   Difference  the layer's map pinned as A — two steps, seeds, classes, queries or layers of one size — in a
//               window: A, the map now and A − B.
//   Neuron view the chosen layer and head, the query pixel's token in that layer and its strongest key.
// The page owns it; it reads the page's DiffusionDocument and runs on the page's worker.
//
// Object names: "headsDialog", "ablationText", "ablationImages".

#include "core/contract/run_controls.h"
#include "core/tensor/tensor.h"
#include "core/vision/image_io.h"

#include <QObject>
#include <QString>

class QDialog;
class QLabel;
class QWidget;

namespace attnlens::ui {

class DiffusionDocument;
class HeadsLensView;
class InferenceWorker;
class MapDifferenceWindow;
class NeuronDialog;

class DiffusionLenses : public QObject {
    Q_OBJECT
public:
    DiffusionLenses(DiffusionDocument* doc, InferenceWorker* worker, QWidget* page);

    void showHeadStats();
    HeadsLensView* headsLens() const { return m_headsLens; } // null until first shown
    void setAblated(HeadList heads);                         // for the step shown (and the next ones shown)
    const HeadList& ablated() const { return m_ablated; }
    void rankHeads();
    // What switching the heads off did to the step shown (valid once computed; heads empty otherwise).
    struct AblationResult {
        int runId = 0, step = -1;
        HeadList heads;
        double relativeChange = 0, maxAbsChange = 0; // of ε̂
        ImageU8 plain, ablated;                      // x̂0 with all heads / without these
        RowMatrix x0Difference;                      // |Δx̂0| (first channel), [H, W]
    };
    const AblationResult& ablationResult() const { return m_ablation; }
    void showNeuronView();
    NeuronDialog* neuronDialog() const { return m_neuron; } // null until first shown
    void pin();
    void pinAs(const RowMatrix& map, const QString& description);
    MapDifferenceWindow* differenceWindow() const { return m_difference; } // null until first pinned

signals:
    void attentionWanted(); // the step shown has no attention yet: the page computes it
    void notice(const QString& message, bool error);

private:
    void refreshHeadStats();
    void refreshAblation(); // re-predicts the step shown without the ablated heads (worker)
    void showAblation();
    void refreshDifference();
    QString describeMap() const;

    DiffusionDocument* m_doc;
    InferenceWorker* m_worker;
    QWidget* m_page;
    QDialog* m_headsDialog = nullptr;
    HeadsLensView* m_headsLens = nullptr;
    QLabel* m_ablationText = nullptr;
    QLabel* m_ablationImages = nullptr;
    HeadList m_ablated;
    AblationResult m_ablation;
    std::pair<int, int> m_rankedFor{-1, -1}; // (run, step) the importance was measured on
    NeuronDialog* m_neuron = nullptr;
    MapDifferenceWindow* m_difference = nullptr;
};

} // namespace attnlens::ui
