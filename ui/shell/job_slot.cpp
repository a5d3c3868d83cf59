#include "ui/shell/job_slot.h"

#include "ui/shell/inference_worker.h"

#include <utility>

namespace attnlens::ui {

JobSlot::JobSlot(InferenceWorker* worker, std::function<void()> retry, QObject* parent)
    : QObject(parent), m_retry(std::move(retry)) {
    // a job's end, however it ends: the next settings may go
    connect(worker, &InferenceWorker::finished, this, &JobSlot::ended);
    connect(worker, &InferenceWorker::failed, this, [this](int id) { ended(id); });
    connect(worker, &InferenceWorker::cancelled, this, &JobSlot::ended);
}

bool JobSlot::claim() {
    if (m_job < 0) return true;
    m_again = true;
    return false;
}

void JobSlot::ended(int job) {
    if (job != m_job) return;
    m_job = -1;
    if (std::exchange(m_again, false) && m_retry) m_retry();
}

} // namespace attnlens::ui
