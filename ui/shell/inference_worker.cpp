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
    for (int id : dropped) emit cancelled(id); // outside the lock: slots may queue new jobs
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
        if (wasCancelled) {
            emit cancelled(id);
        } else if (error) {
            emit failed(id, *error);
        } else {
            // Deliver on the GUI thread (this object's thread); skipped if the worker is gone by then.
            QPointer<InferenceWorker> self(this);
            QMetaObject::invokeMethod(
                this,
                [self, id, deliver = std::move(job.deliver)] {
                    if (!self) return;
                    deliver();
                    emit self->finished(id);
                },
                Qt::QueuedConnection);
        }
    }
}

} // namespace attnlens::ui
