#pragma once
// InferenceWorker: runs model loading and inference off the GUI thread, one job at a time, with
// progress and cancel. Core code receives plain attnlens::Callbacks; results come back to the GUI thread
// through the `done` continuation (queued), so pages never touch half-built state.
//
// Basic usage (in a page):
//   m_worker->run<std::shared_ptr<const Result>>(tr("Translating"),
//       [input](const attnlens::Callbacks& cb) { return std::make_shared<const Result>(compute(input, cb)); },
//       [this](std::shared_ptr<const Result> r) { show(r); });          // GUI thread
//   connect(m_worker, &InferenceWorker::failed, this, [](QString msg){ statusBar()->showMessage(msg); });
//
// Threading: submit/cancel from the GUI thread only. A job observes cancellation through cb.cancelled()
// (core throws attnlens::Cancelled); a job superseded by replace() is cancelled and its result dropped.

#include "core/util/callbacks.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace attnlens::ui {

class InferenceWorker : public QObject {
    Q_OBJECT
public:
    explicit InferenceWorker(QObject* parent = nullptr);
    ~InferenceWorker() override; // cancels the running job and joins the thread

    // Queues `work` (runs on the worker thread); `done` runs on the GUI thread with its result unless the
    // job was cancelled. Errors (std::exception) are reported through failed(). Returns the job id.
    template <typename R>
    int run(const QString& label, std::function<R(const Callbacks&)> work, std::function<void(R)> done) {
        auto result = std::make_shared<std::optional<R>>();
        return enqueue(
            label, [work = std::move(work), result](const Callbacks& cb) { result->emplace(work(cb)); },
            [done = std::move(done), result] {
                if (done && result->has_value()) done(std::move(**result));
            });
    }

    // Cancels the running job and drops every queued one.
    void cancel();
    bool isBusy() const { return m_busy.load(); } // a job is running on the worker thread right now
    // Jobs submitted whose outcome (finished, failed or cancelled) has not yet been signalled on the GUI
    // thread: queued, running, or done with the result on its way. GUI thread only.
    int pendingJobs() const { return m_pending; }

signals:
    void started(int id, const QString& label);
    void progress(int id, double fraction, const QString& stage);
    // The three outcomes, each emitted on the GUI thread once per job, after pendingJobs() counts it out.
    void finished(int id);                        // after `done` ran
    void failed(int id, const QString& message);  // one clear message; the page keeps its previous state
    void cancelled(int id);
    void busyChanged(bool busy);

private:
    struct Job {
        int id;
        QString label;
        std::function<void(const Callbacks&)> work;
        std::function<void()> deliver;
    };
    int enqueue(const QString& label, std::function<void(const Callbacks&)> work, std::function<void()> deliver);
    void loop();

    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Job> m_queue;
    bool m_stopping = false;
    std::atomic<bool> m_cancelRunning{false};
    std::atomic<bool> m_busy{false};
    int m_nextId = 1;
    int m_pending = 0; // GUI thread only
};

} // namespace attnlens::ui
