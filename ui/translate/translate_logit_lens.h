#pragma once
// TranslateLogitLens: the Translate page's "Logit lens" tab (issue 42) — the decoder of the shown translation
// read out layer by layer (core/analysis/model_lenses.h): decoder layers (rows: the embeddings, then the
// stream after each layer; the last row is the model's own output) × target positions (columns: the piece
// generated there), each cell the piece the stream would say, coloured by its probability. Click a column:
// below, that position's target (the piece the search chose) with its rank and probability layer by layer.
// Post-norm layers (Marian): no final norm, the stream goes straight through the LM head and
// final_logits_bias. The heads switched off on the page stay off. Runs on the page's worker when the tab is
// shown and when the translation changes.
//
// Object names: "translateLensMap", "translateLensSummary".

#include "core/analysis/logit_lens.h"
#include "core/models/marian_model.h"
#include "ui/shell/job_slot.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QLabel;

namespace attnlens {
struct TranslationTrace;
}

namespace attnlens::ui {

class HeatmapView;
class InferenceWorker;
class TranslationDocument;

class TranslateLogitLens : public QWidget {
    Q_OBJECT
public:
    // ablation: the page's heads switched off (read when a job starts).
    TranslateLogitLens(TranslationDocument* doc, InferenceWorker* worker,
                       std::function<MarianAblation()> ablation, QWidget* parent = nullptr);

    void
    refresh(); // recomputes when stale (the page calls it when the tab is shown or the translation changes)
    void setPosition(int position); // a target position from 0 (the summary's)
    bool pending() const { return m_jobs->pending(); }
    HeatmapView* map() const { return m_map; }
    QString summary() const;
    const std::vector<LogitLens>& lenses() const { return m_lenses; }

private:
    void start(std::shared_ptr<const TranslationTrace> trace);
    void show(const std::vector<LogitLens>& lenses);
    void showSummary();

    TranslationDocument* m_doc;
    InferenceWorker* m_worker;
    std::function<MarianAblation()> m_ablation;
    HeatmapView* m_map = nullptr;
    QLabel* m_summary = nullptr;
    std::shared_ptr<const TranslationTrace> m_shown; // the translation the map is of
    std::vector<LogitLens> m_lenses;
    int m_position = -1;       // the summary's target position, -1: the last
    JobSlot* m_jobs = nullptr; // one worker job at a time
};

} // namespace attnlens::ui
