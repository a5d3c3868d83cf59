#include "ui/shell/inference_worker.h"

#include "core/util/error.h"

#include <QMetaObject>

#include <optional>
#include <vector>

namespace attnlens::ui {

InferenceWorker::InferenceWorker(QObject* parent) : QObject(parent) {
    m_thread = std::thread([this] { loop(); });
}

InferenceWorker::~InferenceWorker() {
    stop();
}

void InferenceWorker::stop() {
    if (m_joined) return;
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_queue.clear();
        m_cancelRunning = true;
    }
    m_wake.notify_all();
    m_thread.join();
    m_joined = true;
}

int InferenceWorker::enqueue(const QString& label, std::function<void(const Callbacks&, int)> work,
                             std::function<void()> deliver) {
    if (m_joined) return 0; // stopped: the page is going away
    ++m_pending;
    std::lock_guard lock(m_mutex);
    const int id = m_nextId++;
    m_queue.push_back(Job{id, label, std::move(work), std::move(deliver)});
    m_wake.notify_one();
    return id;
}

void InferenceWorker::cancel() {
    std::vector<int> dropped;
    {
        std::lock_guard lock(m_mutex);
        for (const auto& job : m_queue)
            dropped.push_back(job.id);
        m_queue.clear();
        m_cancelRunning = true;
        if (m_runningId != 0) m_dropped.insert(m_runningId); // its partials already queued are dropped too
    }
    for (int id : dropped) { // outside the lock: slots may queue new jobs
        --m_pending;
        emit cancelled(id);
    }
}

void InferenceWorker::loop() {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_stopping) return;
            job = std::move(m_queue.front());
            m_queue.pop_front();
            m_cancelRunning = false;
            m_runningId = job.id;
        }
        m_busy = true;
        emit busyChanged(true);
        emit started(job.id, job.label);
        Callbacks cb;
        const int id = job.id;
        cb.progress = [this, id](double fraction, const std::string& stage) {
            emit progress(id, fraction, QString::fromStdString(stage));
        };
        cb.cancelled = [this] { return m_cancelRunning.load(); };
        std::optional<QString> error;
        bool wasCancelled = false;
        try {
            job.work(cb, id);
            wasCancelled = m_cancelRunning.load();
        } catch (const Cancelled&) {
            wasCancelled = true;
        } catch (const std::bad_alloc&) {
            error = tr("Out of memory while %1").arg(job.label.toLower());
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        {
            std::lock_guard lock(m_mutex);
            m_runningId = 0;
        }
        m_busy = false;
        emit busyChanged(false);
        // Every outcome is signalled on the GUI thread (this object's thread), where pendingJobs() is kept,
        // after the job's partials (events posted to one object arrive in order). A worker destroyed before
        // then takes its queued events with it (QObject's destructor removes them; stop() joined this thread
        // first).
        std::function<void()> outcome;
        if (wasCancelled) {
            outcome = [this, id] {
                m_dropped.erase(id);
                --m_pending;
                emit cancelled(id);
            };
        } else if (error) {
            outcome = [this, id, message = *error] {
                m_dropped.erase(id);
                --m_pending;
                emit failed(id, message);
            };
        } else {
            outcome = [this, id, deliver = std::move(job.deliver)] {
                m_dropped.erase(id);
                deliver();
                --m_pending;
                emit finished(id);
            };
        }
        QMetaObject::invokeMethod(this, std::move(outcome), Qt::QueuedConnection);
    }
}

void InferenceWorker::postPartial(int jobId, std::function<void()> deliver) {
    QMetaObject::invokeMethod(
        this,
        [this, jobId, deliver = std::move(deliver)] {
            if (!m_dropped.count(jobId)) deliver();
        },
        Qt::QueuedConnection);
}

} // namespace attnlens::ui
