#pragma once
// TextLenses: the lenses of the Text page (issue 37), the same widgets the other pages use, on BERT and
// GPT-2.
//   Heads       every head's statistics over the visible tokens (core/analysis/head_stats via text_lenses),
//               "Rank by importance" (the drop of the output's log-probability with the head alone off) and
//               heads switched off — the page runs the text again without them (generation included).
//   Difference  pin the matrix on screen as A, then compare what the Matrix tab shows later (another text,
//               step, layer, head, model or heads off): A, B and A − B matched by position or token.
//   Neuron view one score taken apart (the layer's inputs computed on the page's worker).
// The page owns it and adds its tabs; it reads the page's TextDocument and runs on the page's worker.
//
// Object names: "textHeads" (the HeadsLensView), "textDifference" (the DifferenceView), "pinDifference",
// "unpinDifference".

#include "core/analysis/attention_diff.h"
#include "core/analysis/head_stats.h"
#include "core/contract/run_controls.h"

#include <QObject>
#include <QString>

#include <optional>

class QWidget;

namespace attnlens::ui {

class DifferenceView;
class HeadsLensView;
class InferenceWorker;
class NeuronDialog;
class TextDocument;

class TextLenses : public QObject {
    Q_OBJECT
public:
    TextLenses(TextDocument* doc, InferenceWorker* worker, QWidget* page);

    QWidget* buildHeadsTab(QWidget* parent);
    QWidget* buildDifferenceTab(QWidget* parent);
    HeadsLensView* headsLens() const { return m_heads; }
    DifferenceView* differenceView() const { return m_difference; }
    NeuronDialog* neuronDialog() const { return m_neuron; }

    // The heads switched off for the next run (sorted, no duplicates); setAblated emits ablationChanged.
    const HeadList& ablated() const { return m_ablated; }
    void setAblated(HeadList heads);

    void refreshHeads();
    void rankHeads();
    void pin();
    void unpin();
    bool pinned() const { return m_pinned.has_value(); }
    void refreshDifference();
    // Opens the neuron view on the shown layer / head, the selected query token (else the last) and its
    // strongest key.
    void showNeuronView();

signals:
    void ablationChanged(); // the page runs the text again
    void headActivated(int layer, int head);
    void notice(const QString& message, bool error);

private:
    QString describeMatrix() const;

    TextDocument* m_doc;
    InferenceWorker* m_worker;
    QWidget* m_page;
    HeadsLensView* m_heads = nullptr;
    DifferenceView* m_difference = nullptr;
    NeuronDialog* m_neuron = nullptr;
    HeadList m_ablated;
    // A long text's head statistics (made on the worker, one head map at a time): for which run and step.
    std::weak_ptr<const void> m_statsRun;
    int m_statsVisible = -1;
    int m_statsJob = 0;
    std::shared_ptr<const HeadStats> m_stats;
    void showStats(const HeadStats& stats);
    struct Pinned {
        LabelledMatrix matrix;
        QString description;
    };
    std::optional<Pinned> m_pinned;
};

} // namespace attnlens::ui
