#pragma once
// JobStatus: the progress bar and Cancel button of a page's InferenceWorker, shown only while a job
// runs (the bar's tooltip and optional text name the stage). Every page uses this one widget.
//
//   auto* status = new JobStatus(m_worker, bar);          // Cancel → worker->cancel()
//   auto* status = new JobStatus(m_worker, bar, [this] { cancel(); });   // or the page's own cancel
//
// Children are named "progress" and "cancel" for tests. Threading: GUI thread only.

#include <QWidget>

#include <functional>

class QProgressBar;
class QAbstractButton;

namespace attnlens::ui {

class InferenceWorker;

class JobStatus : public QWidget {
    Q_OBJECT
public:
    JobStatus(InferenceWorker* worker, QWidget* parent, std::function<void()> onCancel = {});

    // Show "<job label> 42%" on the bar (default: a plain bar; the stage is in the tooltip).
    void setTextVisible(bool visible);
    QProgressBar* progressBar() const { return m_progress; }
    QAbstractButton* cancelButton() const { return m_cancel; }

private:
    QProgressBar* m_progress;
    QAbstractButton* m_cancel;
};

} // namespace attnlens::ui
