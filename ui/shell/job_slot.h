#pragma once
// JobSlot: one worker job at a time for a view that recomputes when its settings change (the lenses' tabs).
// While a job runs, a newer request is not queued behind it: the view is asked again (retry) once the job
// ends — done, failed or cancelled — and then starts a job for the settings of that moment.
//
//   m_jobs = new JobSlot(worker, [this] { refresh(); }, this);
//   void View::refresh() {  …  if (!m_jobs->claim()) return;  m_jobs->hold(m_worker->run<R>(…));  }
//
// Threading: GUI thread only.

#include <QObject>

#include <functional>

namespace attnlens::ui {

class InferenceWorker;

class JobSlot : public QObject {
    Q_OBJECT
public:
    JobSlot(InferenceWorker* worker, std::function<void()> retry, QObject* parent);
    // True when no job runs (start one, then hold() its id); false: one runs, retry() follows its end.
    bool claim();
    void hold(int job) { m_job = job; }
    int job() const { return m_job; }
    bool pending() const { return m_job >= 0 || m_again; }

private:
    void ended(int job);

    std::function<void()> m_retry;
    int m_job = -1;
    bool m_again = false;
};

} // namespace attnlens::ui
