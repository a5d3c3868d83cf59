#include "ui/widgets/job_status.h"

#include "ui/shell/inference_worker.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

namespace attnlens::ui {

JobStatus::JobStatus(InferenceWorker* worker, QWidget* parent, std::function<void()> onCancel)
    : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("progress"));
    m_progress->setRange(0, 1000);
    // The bar says what it waits for ("Loading vit-base: weights, 4 of 12 layers 38%").
    m_progress->setMinimumWidth(160);
    m_progress->setMaximumWidth(340);
    m_progress->setTextVisible(true);
    auto* cancel = new QPushButton(tr("Cancel"), this);
    cancel->setObjectName(QStringLiteral("cancel"));
    m_cancel = cancel;
    layout->addWidget(m_progress);
    layout->addWidget(m_cancel);
    hide();
    if (onCancel)
        connect(m_cancel, &QAbstractButton::clicked, this, [onCancel = std::move(onCancel)] { onCancel(); });
    else
        connect(m_cancel, &QAbstractButton::clicked, worker, &InferenceWorker::cancel);
    connect(worker, &InferenceWorker::started, this, [this](int, const QString& label) {
        m_progress->setValue(0);
        m_progress->setToolTip(label);
        m_progress->setFormat(label + QStringLiteral("… %p%"));
        m_label = label;
        show();
    });
    connect(worker, &InferenceWorker::progress, this, [this](int, double fraction, const QString& stage) {
        m_progress->setValue(static_cast<int>(fraction * 1000));
        const QString text = stage.isEmpty() ? m_label : m_label + QStringLiteral(": ") + stage;
        m_progress->setToolTip(text);
        m_progress->setFormat(text + QStringLiteral(" %p%"));
    });
    connect(worker, &InferenceWorker::busyChanged, this, [this](bool busy) {
        if (!busy) hide();
    });
}

void JobStatus::setTextVisible(bool visible) {
    m_progress->setTextVisible(visible);
}

QWidget* statusRow(InferenceWorker* worker, QWidget* parent, std::function<void()> onCancel, QLabel*& status,
                   bool jobText) {
    auto* w = new QWidget(parent);
    auto* row = new QHBoxLayout(w);
    row->setContentsMargins(2, 0, 2, 0);
    status = new QLabel(w);
    status->setObjectName(QStringLiteral("status"));
    status->setWordWrap(true);
    auto* job = new JobStatus(worker, w, std::move(onCancel));
    job->setTextVisible(jobText);
    row->addWidget(status, 1);
    row->addWidget(job);
    return w;
}

} // namespace attnlens::ui
