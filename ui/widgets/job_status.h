#pragma once
// JobStatus: the progress bar and Cancel button of a page's InferenceWorker, shown only while a job
// runs. The bar's text names the job and its stage ("Loading vit-base: weights, 4 of 12 layers 38%").
// Every page uses this one widget.
//
//   auto* status = new JobStatus(m_worker, bar);          // Cancel → worker->cancel()
//   auto* status = new JobStatus(m_worker, bar, [this] { cancel(); });   // or the page's own cancel
//
// Children are named "progress" and "cancel" for tests. Threading: GUI thread only.

#include <QString>
#include <QWidget>

#include <functional>

class QLabel;
class QProgressBar;
class QAbstractButton;

namespace attnlens::ui {

class InferenceWorker;

// A page's bottom row: its status line (`status`, object name "status"; long text wraps instead of widening
// the page) and a JobStatus cancelling with `onCancel`, its text shown when `jobText`.
QWidget* statusRow(InferenceWorker* worker, QWidget* parent, std::function<void()> onCancel, QLabel*& status,
                   bool jobText = false);

class JobStatus : public QWidget {
    Q_OBJECT
public:
    JobStatus(InferenceWorker* worker, QWidget* parent, std::function<void()> onCancel = {});

    // The job and stage on the bar (default on; off: a plain bar, the text in the tooltip).
    void setTextVisible(bool visible);
    QProgressBar* progressBar() const { return m_progress; }
    QAbstractButton* cancelButton() const { return m_cancel; }

private:
    QProgressBar* m_progress;
    QAbstractButton* m_cancel;
    QString m_label;
};

} // namespace attnlens::ui
