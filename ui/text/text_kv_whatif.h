#pragma once
// TextKvWhatIf: the Text page's "KV cache" tab (issue 42) — what a KV-cache eviction policy would do to the
// shown run's decoder (core/analysis/kv_rerun.h): the prompt's greedy continuation made with the whole cache
// (the baseline, once per run and length), then again with the cache the policy keeps.
//   map      steps (rows: the token each step feeds) × cache entries (columns: every token so far): kept,
//            evicted, not yet written; a row whose next token differs from the baseline's is marked
//   table    per step: the baseline's next token and the policy's, the log-probability of the baseline's
//            next token under both, KL(baseline ‖ policy), the entries kept and their memory
//   summary  how many steps choose another token, the continuation's log-probability, mean KL, the cache
//            at the last step beside the whole cache
// Policies: StreamingLLM (sinks + window), H2O (budget, recent), SnapKV (budget, observation window), a
// hand-picked set of prompt positions, or the whole cache. "Let it write" feeds the policy's own choices.
// Runs on the page's worker (progress, cancel) when the tab is shown and when the run or the settings change.
//
// Object names: "kvPolicy", "kvFirst", "kvSecond", "kvKeep", "kvSteps", "kvFree", "kvMap", "kvTable",
// "kvSummary".

#include "core/analysis/kv_rerun.h"
#include "ui/shell/job_slot.h"
#include "ui/text/text_document.h"

#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableWidget;

namespace attnlens::ui {

class HeatmapView;
class InferenceWorker;
class TextDocument;
struct TextRun;

class TextKvWhatIf : public QWidget {
    Q_OBJECT
public:
    TextKvWhatIf(TextDocument* doc, InferenceWorker* worker, QWidget* parent = nullptr);

    // Recomputes when what it shows is stale (the page calls it when the tab is shown or the run changes).
    void refresh();
    // Where its jobs find the page's cache (the lens then runs only the rows it reads; the KV baseline does
    // not run the prompt again); unset: each job runs its own pass.
    void setCacheSource(CacheSource source) { m_cacheSource = std::move(source); }
    // "streaming:4,64" and the like (core/analysis/kv_policy.h); a bad text: notice, nothing changes.
    void setPolicy(const QString& text);
    void setSteps(int steps);
    void setFree(bool free);
    bool pending() const { return m_jobs->pending(); }
    HeatmapView* map() const { return m_map; }
    QString summary() const;
    const KvRerun* shown() const { return m_result ? &*m_result : nullptr; }

signals:
    void notice(const QString& message, bool error);

private:
    struct Request {
        std::shared_ptr<const TextRun> run;
        std::string policy;
        int steps = 16;
        bool free = false;
        bool operator==(const Request&) const = default;
    };
    struct Result {
        std::shared_ptr<const KvBaseline> baseline;
        KvRerun rerun;
    };
    std::optional<Request> request();
    void start(const Request& r);
    void show(const Request& r, Result result);
    void showMap(const KvRerun& r);
    void showTable(const KvRerun& r);
    void showSummary(const KvRerun& r);
    void syncFields(); // the two numbers' names and ranges for the chosen policy
    QString tokenText(int id) const;

    TextDocument* m_doc;
    CacheSource m_cacheSource;
    InferenceWorker* m_worker;
    QComboBox* m_policy = nullptr;
    QLabel* m_firstLabel = nullptr;
    QLabel* m_secondLabel = nullptr;
    QSpinBox* m_first = nullptr;
    QSpinBox* m_second = nullptr;
    QLineEdit* m_keep = nullptr;
    QSpinBox* m_steps = nullptr;
    QCheckBox* m_free = nullptr;
    HeatmapView* m_map = nullptr;
    QTableWidget* m_table = nullptr;
    QLabel* m_summary = nullptr;
    std::optional<Request> m_shown;
    std::optional<KvRerun> m_result;
    std::shared_ptr<const KvBaseline> m_baseline; // the last baseline, reused while the run and length hold
    std::shared_ptr<const TextRun> m_baselineRun;
    int m_baselineSteps = 0;
    JobSlot* m_jobs = nullptr; // one worker job at a time
    bool m_refused = false;
};

} // namespace attnlens::ui
