#pragma once
// InferenceWorker: runs model loading and inference off the GUI thread, one job at a time, with
// progress and cancel. Core code receives plain attnlens::Callbacks; results come back to the GUI thread
// through the `done` continuation (queued), so pages never touch half-built state.
//
// Basic usage (in a page):
//   m_worker->run<std::shared_ptr<const Result>>(tr("Translating"),
//       [input](const attnlens::Callbacks& cb) { return std::make_shared<const Result>(compute(input, cb));
//       }, [this](std::shared_ptr<const Result> r) { show(r); });          // GUI thread
//   connect(m_worker, &InferenceWorker::failed, this, [](QString msg){ statusBar()->showMessage(msg); });
//
// A job that shows results while it runs (each denoising step, each decoded slice) streams them:
//   m_worker->stream<Frame, Tensor>(tr("Generating"),
//       [session](const Callbacks& cb, const std::function<void(Frame)>& post) {   // worker thread
//           while (!session->done()) post(session->step(cb));                  // post() only queues the
//           value return session->finalSample(); },
//       [this](Frame f) { m_doc->addFrame(f); },                                 // GUI thread, in order
//       [this](Tensor final) { m_doc->finish(final); });                         // GUI thread, after every
//       partial
//
// Threading: submit/cancel/stop from the GUI thread only. A job observes cancellation through cb.cancelled()
// (core throws attnlens::Cancelled). Nothing a job runs on the worker thread may touch a QObject, page or
// document (not even through a QPointer: QPointer is not thread-safe, issue 36): jobs capture values and
// shared immutable state, and everything that reaches the GUI goes through this object, which belongs to the
// GUI thread and joins the worker thread before it dies — so a partial or result can never reach a page that
// is being destroyed. Pages call stop() first thing in their destructor.

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
#include <set>
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
            label, [work = std::move(work), result](const Callbacks& cb, int) { result->emplace(work(cb)); },
            [done = std::move(done), result] {
                if (done && result->has_value()) done(std::move(**result));
            });
    }

    // Like run(), and `work` may call post(value) any number of times: each value reaches `partial` on the
    // GUI thread, in order, before `done`. Values posted by a job that was cancelled meanwhile are dropped.
    template <typename P, typename R>
    int stream(const QString& label,
               std::function<R(const Callbacks&, const std::function<void(P)>& post)> work,
               std::function<void(P)> partial, std::function<void(R)> done) {
        auto result = std::make_shared<std::optional<R>>();
        return enqueue(
            label,
            [this, work = std::move(work), partial = std::move(partial), result](const Callbacks& cb,
                                                                                 int id) {
                const std::function<void(P)> post = [this, id, &partial](P value) {
                    postPartial(id,
                                [partial, value = std::move(value)]() mutable { partial(std::move(value)); });
                };
                result->emplace(work(cb, post));
            },
            [done = std::move(done), result] {
                if (done && result->has_value()) done(std::move(**result));
            });
    }

    // Cancels the running job and drops every queued one.
    void cancel();
    // Cancels everything and joins the worker thread; no job runs and nothing is delivered afterwards. Pages
    // call it first in their destructor, before any of their members is destroyed. Idempotent.
    void stop();
    bool isBusy() const { return m_busy.load(); } // a job is running on the worker thread right now
    // Jobs submitted whose outcome (finished, failed or cancelled) has not yet been signalled on the GUI
    // thread: queued, running, or done with the result on its way. GUI thread only.
    int pendingJobs() const { return m_pending; }
    // The id of the newest job submitted (0 before the first). GUI thread only.
    int lastJobId() const { return m_nextId - 1; }

signals:
    // started, progress and busyChanged are emitted on the worker thread: connect them with a receiver that
    // lives on the GUI thread (queued; a QSignalSpy or a context-free lambda would run on the worker thread).
    void started(int id, const QString& label);
    void progress(int id, double fraction, const QString& stage);
    // The three outcomes, each emitted on the GUI thread once per job, after pendingJobs() counts it out.
    void finished(int id);                       // after `done` ran
    void failed(int id, const QString& message); // one clear message; the page keeps its previous state
    void cancelled(int id);
    void busyChanged(bool busy);

private:
    struct Job {
        int id;
        QString label;
        std::function<void(const Callbacks&, int id)> work;
        std::function<void()> deliver;
    };
    int enqueue(const QString& label, std::function<void(const Callbacks&, int id)> work,
                std::function<void()> deliver);
    void loop();
    void postPartial(int jobId,
                     std::function<void()> deliver); // worker thread: queue `deliver` for the GUI thread

    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Job> m_queue;
    bool m_stopping = false;
    std::atomic<bool> m_cancelRunning{false};
    std::atomic<bool> m_busy{false};
    int m_nextId = 1;
    int m_runningId = 0;     // guarded by m_mutex
    bool m_joined = false;   // GUI thread only
    int m_pending = 0;       // GUI thread only
    std::set<int> m_dropped; // GUI thread only: cancelled jobs whose queued partials are still to be dropped
};

} // namespace attnlens::ui
