#include "ui/shell/inference_worker.h"

#include "core/util/error.h"

#include <QMetaObject>
#include <QPointer>

#include <optional>
#include <vector>

namespace attnlens::ui {

InferenceWorker::InferenceWorker(QObject* parent) : QObject(parent) {
    m_thread = std::thread([this] { loop(); });
}

InferenceWorker::~InferenceWorker() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_queue.clear();
    }
    m_cancelRunning = true;
    m_wake.notify_all();
    m_thread.join();
}

int InferenceWorker::enqueue(const QString& label, std::function<void(const Callbacks&)> work,
                             std::function<void()> deliver) {
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
        for (const auto& job : m_queue) dropped.push_back(job.id);
        m_queue.clear();
        m_cancelRunning = true;
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
            job.work(cb);
            wasCancelled = m_cancelRunning.load();
        } catch (const Cancelled&) {
            wasCancelled = true;
        } catch (const std::bad_alloc&) {
            error = tr("Out of memory while %1").arg(job.label.toLower());
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        m_busy = false;
        emit busyChanged(false);
        // Every outcome is signalled on the GUI thread (this object's thread), where pendingJobs() is kept;
        // skipped if the worker is gone by then.
        QPointer<InferenceWorker> self(this);
        std::function<void()> outcome;
        if (wasCancelled) {
            outcome = [self, id] {
                --self->m_pending;
                emit self->cancelled(id);
            };
        } else if (error) {
            outcome = [self, id, message = *error] {
                --self->m_pending;
                emit self->failed(id, message);
            };
        } else {
            outcome = [self, id, deliver = std::move(job.deliver)] {
                deliver();
                --self->m_pending;
                emit self->finished(id);
            };
        }
        QMetaObject::invokeMethod(
            this,
            [self, outcome = std::move(outcome)] {
                if (self) outcome();
            },
            Qt::QueuedConnection);
    }
}

} // namespace attnlens::ui
