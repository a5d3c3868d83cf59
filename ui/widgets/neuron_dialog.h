#pragma once
// NeuronDialog: the neuron view (issue 21, M18) as a window any page opens — one attention score taken apart
// for the chosen layer, head, query token and key token: the head's q and k vectors, their products per
// dimension (drawn by ui/render/neuron_chart and listed in a sortable table), q·k, ÷√d_k and the softmax
// weight, next to the weight the model's own pass captured.
//
// A page describes what it shows with a NeuronSource (its layers, heads, token labels, captured weights, and
// a function that computes one layer's inputs); the dialog runs that function on the page's InferenceWorker,
// once per layer (cached, with the layer's queries and keys projected there too), and recomputes the terms on
// the GUI thread when head, query or key change (one dot product per key: microseconds even for 4096 keys).
//
//   NeuronSource src{...};
//   m_neuron->setSource(std::move(src), layer, head, query, /*key: argmax*/ -1);
//   m_neuron->show();
//
// Object names for tests: "neuronLayer", "neuronHead", "neuronQuery", "neuronKey", "neuronArgmax",
// "neuronSort", "neuronChart", "neuronTable", "neuronCaption".

#include "core/analysis/neuron_view.h"
#include "core/util/callbacks.h"

#include <QDialog>
#include <QStringList>

#include <functional>
#include <map>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace attnlens::ui {

class InferenceWorker;
class NeuronChartWidget;

struct NeuronSource {
    QString title; // "Translate — cross-attention"
    int layers = 0;
    std::function<QString(int layer)> layerName; // "layer 2", "mid_block.attentions.0 (7×7)"
    std::function<int(int layer)> heads;
    std::function<QStringList(int layer)> queryLabels, keyLabels;
    std::function<float(int layer, int head, int query, int key)>
        captured; // the model's own weight (NaN: unknown)
    std::function<AttentionInputs(int layer, const Callbacks&)> inputs; // runs on the worker
    std::function<bool(int layer, int head)>
        headOff; // ablated heads (their captured weights are 0); may be empty
};

class NeuronDialog : public QDialog {
    Q_OBJECT
public:
    NeuronDialog(InferenceWorker* worker, QWidget* parent = nullptr);

    // A new source forgets every computed layer. key < 0: the key the query attends to most.
    void setSource(NeuronSource source, int layer, int head, int query, int key);
    // Moves the selection (e.g. when the page's layer or head changes while the dialog is open).
    void select(int layer, int head, int query, int key);

    int layer() const;
    int head() const;
    int query() const;
    int key() const;
    // The terms on screen; nullopt while the layer is being computed or when nothing is shown.
    const std::optional<NeuronTerms>& terms() const { return m_terms; }
    std::optional<float> capturedWeight() const;
    QString caption() const;

signals:
    void termsShown(); // the terms of the current selection are on screen

private:
    void rebuildLayerControls();
    void refresh();
    void requestInputs(int layer);
    void showTerms();

    InferenceWorker* m_worker;
    NeuronSource m_source;
    int m_generation = 0; // bumped by setSource: results for an older source are dropped
    std::map<int, std::shared_ptr<const ProjectedAttention>> m_inputs;
    std::optional<int> m_pending; // layer being computed
    std::optional<NeuronTerms> m_terms;
    bool m_updating = false;

    QComboBox* m_layer;
    QSpinBox* m_head;
    QComboBox* m_query;
    QComboBox* m_key;
    QPushButton* m_argmax;
    QCheckBox* m_sort;
    QLabel* m_caption;
    NeuronChartWidget* m_chart;
    QTableWidget* m_table;
};

} // namespace attnlens::ui
