#include "ui/shell/workspace_page.h"

#include "ui/widgets/page_message.h"
#include "ui/widgets/page_parts.h"

#include <QFileDialog>
#include <QToolButton>

namespace attnlens::ui {

WorkspacePage::WorkspacePage(ModelKind kind, QWidget* parent)
    : QWidget(parent), m_kind(kind), m_worker(new InferenceWorker(this)), m_message(new PageMessage(this)) {
    m_message->setObjectName(QStringLiteral("message"));
    // One message model for every page: an error stays until the user closes it, or until a job asked for
    // after it succeeds (the error described an earlier input or state).
    connect(m_message, &PageMessage::shown, this, [this] { m_errorAfterJob = m_worker->lastJobId(); });
    connect(m_worker, &InferenceWorker::finished, this, [this](int id) {
        if (m_message->kind() == PageMessage::Kind::Error && !m_message->sticky() && id > m_errorAfterJob)
            m_message->dismiss();
    });
    connect(m_worker, &InferenceWorker::failed, this, [this](int id, const QString& message) {
        m_restore.reset(); // a session being restored stops here; the message says why
        m_loadingDir.clear();
        jobFailed(id, message);
        showError(message);
    });
    connect(m_worker, &InferenceWorker::cancelled, this, [this](int id) {
        if (m_worker->pendingJobs() == 0) { // nothing left to continue a session being restored
            m_restore.reset();
            m_loadingDir.clear();
        }
        jobCancelled(id);
    });
}

WorkspacePage::~WorkspacePage() {
    m_worker->stop(); // before any member a running job's result would reach
}

void WorkspacePage::reloadModel() {
    if (!m_modelDir.isEmpty()) openModel(m_modelDir);
}

QString WorkspacePage::message() const {
    return m_message->message();
}

void WorkspacePage::openFirstModel(const QString& dir) {
    if (!dir.isEmpty()) {
        openModel(dir);
        return;
    }
    QString missing;
    const QString builtin = builtinModelPath(m_kind, missing);
    if (builtin.isEmpty())
        showError(missing);
    else
        openModel(builtin);
}

QJsonObject WorkspacePage::modelSessionState() const {
    QJsonObject state;
    saveModelDir(state, m_modelDir, m_kind);
    return state;
}

SessionReader WorkspacePage::sessionReader(const QJsonObject& state) const {
    return SessionReader(state, QStringLiteral("pages.") + sessionKey());
}

QString WorkspacePage::restoreModelDir(const QJsonObject& state) const {
    return sessionModelDir(state, m_kind);
}

void WorkspacePage::restoreSession(const QJsonObject& state) {
    const QString dir = restoreModelDir(state);
    const bool sameLoad = !m_loadingDir.isEmpty() && QFileInfo(m_loadingDir) == QFileInfo(dir);
    // What the page was doing gives way to the session — cancelled before the restore starts: a cancel that
    // leaves nothing queued ends a restore (the user's Cancel), and a queued job's cancel is immediate.
    if (!sameLoad && isBusy()) {
        m_worker->cancel();
        m_loadingDir.clear();
    }
    m_restore = state;
    if (!restoreInputs(state)) {
        m_restore.reset();
        return;
    }
    if (sameLoad) return; // that load continues it
    if (!dir.isEmpty() && (!hasModel() || QFileInfo(dir) != QFileInfo(m_modelDir))) {
        openModel(dir); // then continueRestore()
        return;
    }
    continueRestore();
}

QToolButton* WorkspacePage::exportButton(QWidget* bar, const QList<ExportTarget>& targets) {
    QList<MenuEntry> entries;
    for (const ExportTarget& t : targets) {
        if (!t.write) {
            entries.append({t.menuText, {}});
            continue;
        }
        entries.append({t.menuText, [this, t] {
                            const QString path =
                                t.filter.isEmpty()
                                    ? QFileDialog::getExistingDirectory(this,
                                                                        tr("Export: %1").arg(t.menuText))
                                    : QFileDialog::getSaveFileName(this, tr("Export"),
                                                                   exportBaseName() + t.suffix, t.filter);
                            if (!path.isEmpty() && t.write(path))
                                showNotice(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
                        }});
    }
    QToolButton* button = exportMenuButton(bar, entries);
    button->setObjectName(QStringLiteral("export"));
    return button;
}

bool WorkspacePage::exportWith(const QString& path, const std::function<void(const QString&)>& write) {
    try {
        write(path);
        return true;
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
}

void WorkspacePage::showError(const QString& text) {
    m_message->showError(text);
    emit failed(text);
}

void WorkspacePage::showNotice(const QString& text) {
    m_message->showNotice(text);
}

void WorkspacePage::dismissMessage() {
    m_message->dismiss();
}

void WorkspacePage::jobFailed(int, const QString&) {}
void WorkspacePage::jobCancelled(int) {}

} // namespace attnlens::ui
