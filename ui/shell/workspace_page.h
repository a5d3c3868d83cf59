#pragma once
// WorkspacePage: the frame every page that runs a model shares (Translate, Vision, Diffusion, Text), so that
// a page is its views and inputs only. It owns
//   - the page's InferenceWorker (stopped first when the page dies) and its message line (PageMessage);
//   - the model folder: the one loaded, the one loading, the built-in fallback (firstModelDir);
//   - loading on the worker with progress and Cancel (loadModel): a folder that fails leaves the previous
//   model;
//   - the session-restore state machine: restoreSession() records the state, opens the session's model when
//   it
//     is not the one loaded (or waits for the load already running for it), then continueRestore();
//   - the typed signals MainWindow, tests and the GUI harness connect to: modelLoaded, resultReady, failed.
//
//   class MyPage : public WorkspacePage {
//       MyPage(QWidget* parent) : WorkspacePage(ModelKind::Vit, parent) { …; openFirstModel({}); }
//       void openModel(const QString& dir) override {
//           loadModel<std::shared_ptr<const VitModel>>(dir, [dir](const Callbacks& cb) { … },
//                                                     [this](auto model) { m_doc->setModel(model); });
//       }
//       void modelReady() override { run(); }            // after a load outside a session restore
//       void continueRestore() override { …; endRestore(); }   // the session's model is here
//   };
//
// Threading: GUI thread only (the worker's jobs capture values, never the page).

#include "ui/shell/help_dialogs.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/model_page.h"
#include "ui/shell/session.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonObject>
#include <QWidget>

#include <functional>
#include <optional>

class QToolButton;

namespace attnlens::ui {

class PageMessage;

class WorkspacePage : public QWidget, public ModelPage, public ExplainedPage, public SessionPage {
    Q_OBJECT
public:
    ~WorkspacePage() override;

    // ModelPage: the page's kind; the folder loaded; reload (Compute → Precision) loads it again.
    bool acceptsModel(ModelKind kind) const override { return kind == m_kind; }
    QString loadedModelDir() const override { return m_modelDir; }
    void reloadModel() override;
    // SessionPage: a restore is running until continueRestore() ends it, or a job fails or is cancelled.
    bool restoringSession() const override { return m_restore.has_value(); }
    void restoreSession(const QJsonObject& state) final;

    InferenceWorker* worker() const { return m_worker; }
    // A complete result is on screen (a run, a picture, a translation), whatever is still computing.
    virtual bool hasResult() const = 0;
    virtual bool hasModel() const = 0;
    bool isBusy() const {
        return m_worker->pendingJobs() > 0;
    }                        // a job queued or running, or its result not shown
    QString message() const; // the error or notice on the message line

signals:
    void modelLoaded();                       // a folder loaded (File → Open recent model remembers it)
    void resultReady();                       // a new result is on screen (a run, a step, a picture)
    void failed(const QString& message);      // an error is shown on the page; its previous state stays
    void inputFileShown(const QString& path); // the result of a file opened as input (File → Open recent)

protected:
    WorkspacePage(ModelKind kind, QWidget* parent);

    // The message line (object name "message"): it floats over the page; setAnchor() puts it below the top
    // bar.
    PageMessage* messageLine() const { return m_message; }
    // Opens `dir`, or the built-in model of the page's kind when `dir` is empty; when that is not installed,
    // the message line says what to do instead.
    void openFirstModel(const QString& dir);
    // Loads a model folder on the worker: `load` runs there (progress, Cancel), then on the GUI thread
    // `install` takes its result, the folder becomes loadedModelDir(), the message line clears, modelLoaded()
    // is emitted and a session being restored continues (continueRestore) — else modelReady().
    template <typename M>
    void loadModel(const QString& dir, std::function<M(const Callbacks&)> load,
                   std::function<void(M)> install) {
        m_loadingDir = dir;
        m_worker->run<M>(tr("Loading %1").arg(QFileInfo(QDir::cleanPath(dir)).fileName()), std::move(load),
                         [this, dir, install = std::move(install)](M model) {
                             if (QFileInfo(m_loadingDir) == QFileInfo(dir)) m_loadingDir.clear();
                             m_modelDir = dir;
                             dismissMessage();
                             install(std::move(model));
                             emit modelLoaded();
                             if (!m_restore)
                                 modelReady();
                             else if (m_loadingDir.isEmpty()) // no other load on its way: the session goes on
                                 continueRestore();
                             // else: a load asked for before the session (the built-in model at start)
                             // whose result came anyway; the session's own load is next
                         });
    }
    virtual void modelReady() {}

    // Session restore. The page checks the state and applies what needs no model (restoreInputs), names the
    // session's model folder (restoreModelDir; empty: keep the one loaded), then continueRestore() applies
    // the rest once that model is here and ends with endRestore() — now or after the runs it starts.
    virtual bool restoreInputs(const QJsonObject& state) = 0; // false: not restorable (the page said why)
    virtual QString restoreModelDir(const QJsonObject& state) const;
    virtual void continueRestore() = 0;
    const std::optional<QJsonObject>& restoreState() const { return m_restore; }
    // For saveSession: a state holding the loaded model's folder (nothing for the built-in model).
    QJsonObject modelSessionState() const;
    // A reader of the page's part of a session (its messages say "pages.<sessionKey>.<key>: …").
    SessionReader sessionReader(const QJsonObject& state) const;
    void endRestore() { m_restore.reset(); }

    // The Export button of the page's bar (object name "export"): one menu entry per target; the entry asks
    // for a path (proposed: exportBaseName() + suffix; a folder when the filter is empty), writes, and says
    // "Saved …" or shows the error. A null write adds a separator.
    struct ExportTarget {
        QString menuText; // "Overlay as PNG…"
        QString filter;   // "PNG image (*.png)"; empty: a folder is asked for
        QString suffix;   // "-overlay.png"
        // true: written ("Saved …" follows); false: not (the error is shown) or later (a job's result says
        // so)
        std::function<bool(const QString& path)> write;
    };
    QToolButton* exportButton(QWidget* bar, const QList<ExportTarget>& targets);
    virtual QString exportBaseName() const { return {}; }
    // Runs `write` (which throws std::exception naming the problem): true, or false with the error shown.
    bool exportWith(const QString& path, const std::function<void(const QString& path)>& write);

    // The message line: an error (also emitted as failed()) or a notice; dismissMessage() hides it. An error
    // is cleared by the next job that finishes successfully after it was shown (unless shown sticky).
    void showError(const QString& text);
    void showNotice(const QString& text);
    void dismissMessage();

    // A job failed (then its error is shown and failed() emitted) or was cancelled, after a session being
    // restored and a load stopped: the page stops its playback, forgets requests, says what stayed.
    virtual void jobFailed(int id, const QString& message);
    virtual void jobCancelled(int id);

private:
    ModelKind m_kind;
    InferenceWorker* m_worker;
    PageMessage* m_message;
    QString m_modelDir, m_loadingDir;
    int m_errorAfterJob = 0; // the newest job when the error on the message line was shown
    std::optional<QJsonObject> m_restore;
};

} // namespace attnlens::ui
