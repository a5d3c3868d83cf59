#pragma once
// TextLogitLens: the Text page's "Logit lens" tab (issue 42) — past the attention weights, on the shown run
// (core/analysis/logit_lens.h):
//   Logit lens     layers (rows: the embeddings, then the stream after each layer; the last row is the
//                  model's output) × positions (up to the last 24 ending at the chosen one): each cell the
//                  token the stream would say there, coloured by its probability. Below: the target's rank
//                  and probability layer by layer at the chosen position.
//   Contributions  the target's logit at the chosen position split over every head (layers × heads, then
//                  each layer's MLP; red promotes, blue suppresses: direct logit attribution with the final
//                  norm's scale frozen). Click a head: its attention in the Matrix tab. Below: the parts'
//                  sum beside the logit, the heads that move it most.
// The target is the model's own top token at the position unless one is typed (one token of the tokenizer).
// Runs on the page's worker when the tab is shown and when the run, the step or the settings change; a large
// readout (a big vocabulary) shows the chosen position first, then the rest.
//
// Object names: "logitLensMode", "logitLensPosition", "logitLensTarget", "logitLensMap", "logitLensSummary".

#include "core/analysis/logit_lens.h"
#include "ui/shell/job_slot.h"
#include "ui/text/text_document.h"

#include <QString>
#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace attnlens::ui {

class HeatmapView;
class InferenceWorker;
class TextDocument;
struct TextRun;

class TextLogitLens : public QWidget {
    Q_OBJECT
public:
    enum class Mode { Lens, Contributions };

    TextLogitLens(TextDocument* doc, InferenceWorker* worker, QWidget* parent = nullptr);

    // Recomputes when what it shows is stale (the page calls it when the tab is shown or the run changes).
    void refresh();
    // Where its jobs find the page's cache (the lens then runs only the rows it reads; the KV baseline does
    // not run the prompt again); unset: each job runs its own pass.
    void setCacheSource(CacheSource source) { m_cacheSource = std::move(source); }
    void setMode(Mode mode);
    Mode mode() const;
    void setPosition(int position); // a token from 0; -1: the last visible one
    void setTarget(const QString& text);
    bool pending() const { return m_jobs->pending(); }
    HeatmapView* map() const { return m_map; }
    QString summary() const;

signals:
    void headActivated(int layer, int head);
    void notice(const QString& message, bool error);

private:
    struct Request {
        std::shared_ptr<const TextRun> run;
        int visible = 0, position = 0, target = -1;
        Mode mode = Mode::Lens;
        bool operator==(const Request&) const = default;
    };
    struct LensResult {
        std::vector<LogitLens> lenses; // one per column, the chosen position last
    };
    std::optional<Request> request();
    void start(const Request& r);
    bool current(const Request& r) const;
    void showLens(const Request& r, const LensResult& result);
    void showContributions(const Request& r, const LogitContributions& c);
    QString tokenText(int id) const;
    QString where(const Request& r, int target, int position) const; // "“token” at position N (“text”)"

    TextDocument* m_doc;
    CacheSource m_cacheSource;
    InferenceWorker* m_worker;
    QComboBox* m_mode = nullptr;
    QSpinBox* m_position = nullptr;
    QLineEdit* m_target = nullptr;
    HeatmapView* m_map = nullptr;
    QLabel* m_summary = nullptr;
    std::optional<Request> m_shown;
    JobSlot* m_jobs = nullptr; // one worker job at a time
    bool m_refused = false;    // request() turned the settings down (said through notice)
    int m_heads = 0;           // contributions: the map's head columns (the MLP's after them)
};

} // namespace attnlens::ui
