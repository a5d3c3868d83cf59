#pragma once
// TranslateLenses: the lenses of the Translate page on the translation on screen, the same widgets the other
// pages use.
//   Heads       the Heads tab: every head of the shown kind at the shown step (statistics), "Rank by
//               importance" (the drop of the translation's log-probability with the head alone off, teacher-
//               forced) and heads switched off — every translation from now on runs without them, and the
//               translation line says what the plain model wrote and where the two part.
//   Difference  the Difference tab: the matrix on screen pinned as A, compared with what the Matrix tab shows
//               later (another sentence, step, kind, layer, head or model): A, B and A − B.
//   Neuron view one score of the shown kind taken apart (the layer's inputs computed on the page's worker).
//   Flow        encoder attention flow through layers 0…L, one max-flow per source token on the worker
//               (above kFlowBudget: rollout, with a note).
// The page owns it and adds its tabs; it reads the page's TranslationDocument and runs on the page's worker.
//
// Object names: "headsView" (HeadsLensView), "differenceView" (and DifferenceView::buildTab's buttons).

#include "core/analysis/attention_diff.h"
#include "core/models/marian_model.h"
#include "ui/translate/translation_document.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

class QTabWidget;

namespace attnlens::ui {

class DifferenceView;
class HeadsLensView;
class InferenceWorker;
class NeuronDialog;
class WorkspacePage;

class TranslateLenses : public QObject {
    Q_OBJECT
public:
    // `tabs`: the page's view tabs (the lenses add theirs with the two build functions).
    TranslateLenses(TranslationDocument* doc, InferenceWorker* worker, QTabWidget* tabs, WorkspacePage* page);
    QWidget* buildHeadsTab();
    QWidget* buildDifferenceTab();

    // Heads
    HeadsLensView* headsView() const { return m_heads; }
    void refreshHeads(); // when the Heads tab shows
    void rankHeads();
    const MarianAblation& ablation() const { return m_ablation; }
    void setAblation(MarianAblation ablation); // emits ablationChanged (the page translates again)
    void forgetAblation() { m_ablation = {}; } // another model's heads (emits nothing)
    // A translation with heads off arrived: the plain model's, on the worker (then translationLineChanged).
    void compareWithAllHeads();
    void forgetComparison(); // a new translation starts
    QString baselineTranslation() const { return m_baseline; }
    // The translation line: the translation and, with heads off, the plain one and where the two part;
    // `tip` gets the top 5 with and without the heads there.
    QString translationLine(QString& tip) const;

    // Difference
    void pin();
    void unpin();
    bool hasPin() const { return m_pinned.has_value(); }
    void setPinned(const LabelledMatrix& matrix, const QString& description); // a session's A
    std::optional<std::pair<LabelledMatrix, QString>> pinned() const;
    void refreshDifference();
    DifferenceView* differenceView() const { return m_difference; }

    // Neuron view of the matrix's displayed row and column (their first pieces); -1: the focus token and the
    // strongest key. Opens the window.
    void showNeuronView(int row = -1, int col = -1);
    NeuronDialog* neuronDialog() const { return m_neuron; }

    void requestFlow();

signals:
    void ablationChanged();
    void translationLineChanged();
    void notice(const QString& message, bool error);
    void showDifferenceTab();
    void headActivated(); // the page shows the Matrix tab

private:
    void openNeuronView(int layer, int head, int query, int key);
    QString describeMatrix() const;

    TranslationDocument* m_doc;
    InferenceWorker* m_worker;
    QTabWidget* m_tabs;
    WorkspacePage* m_page;
    HeadsLensView* m_heads = nullptr;
    DifferenceView* m_difference = nullptr;
    NeuronDialog* m_neuron = nullptr;
    AttentionKind m_neuronKind = AttentionKind::Cross; // the kind the neuron window shows
    MarianAblation m_ablation;
    QString m_baseline; // the plain model's translation while heads are off
    struct AblationComparison;
    std::shared_ptr<const AblationComparison> m_ablationChange;
    const void* m_rankedFor = nullptr; // the trace the Heads tab's importance was measured on
    AttentionKind m_rankedKind = AttentionKind::Cross;
    TranslationDocument::FlowKey m_flowRequested;
    struct Pinned {
        LabelledMatrix matrix;
        QString description;
    };
    std::optional<Pinned> m_pinned;
};

} // namespace attnlens::ui
