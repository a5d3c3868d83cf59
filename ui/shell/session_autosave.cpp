#include "ui/shell/session_autosave.h"

#include "core/util/error.h"
#include "ui/shell/session.h"
#include "ui/shell/session_files.h"
#include "ui/widgets/page_message.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLocale>
#include <QLockFile>
#include <QStandardPaths>

#include <algorithm>

namespace attnlens::ui {

namespace {

QString appData() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

// `wanted`, or wanted-2, -3 … before its suffix when that exists.
QString freeName(const QString& wanted) {
    const QFileInfo info(wanted);
    QString name = wanted;
    for (int n = 2; QFileInfo::exists(name); ++n)
        name = info.absolutePath() + "/" + info.completeBaseName() + "-" + QString::number(n) + "." +
               info.suffix();
    return name;
}

} // namespace

SessionAutosave::SessionAutosave(SessionFiles* files, PageMessage* message, QObject* parent)
    : QObject(parent), m_files(files), m_message(message) {
    connect(&m_timer, &QTimer::timeout, this, [this] { saveNow(); });
}

// Destroyed without a close (the window deleted by its owner): what was last written is kept as a clean close
// keeps it. Nothing of the window is touched: its pages may be gone already.
SessionAutosave::~SessionAutosave() {
    if (!m_lock) return;
    if (QFileInfo::exists(m_path)) {
        QFile::remove(lastSessionPath());
        QFile::rename(m_path, lastSessionPath());
    }
    m_lock.reset();
}

QString SessionAutosave::folder() {
    return appData() + "/autosave";
}

QString SessionAutosave::path() const {
    return m_path;
}

QString SessionAutosave::lastSessionPath() const {
    return appData() + "/last-session.attnlens";
}

bool SessionAutosave::start(int intervalMs) {
    if (m_lock) return true;
    if (!QDir().mkpath(folder()) || !takeSlot()) {
        m_message->showError(tr("Autosave is off: cannot write to %1").arg(folder()));
        return false;
    }
    recoverEnded();
    m_timer.start(intervalMs);
    return true;
}

// This window's autosave: session-<pid>-<n>, the first n with no autosave (an ended window's, kept for
// recoverEnded: one of this process, or of a long-gone one of the same pid) whose lock it can take (windows
// of one process).
bool SessionAutosave::takeSlot() {
    const QString stem = folder() + "/session-" + QString::number(QCoreApplication::applicationPid()) + "-";
    for (int n = 0; n < 64; ++n) {
        if (QFileInfo::exists(stem + QString::number(n) + ".attnlens")) continue;
        auto lock = std::make_unique<QLockFile>(stem + QString::number(n) + ".lock");
        lock->setStaleLockTime(0); // a lock is stale only when its process is gone, however old it is
        if (!lock->tryLock(0)) continue;
        m_lock = std::move(lock);
        m_path = stem + QString::number(n) + ".attnlens";
        return true;
    }
    return false;
}

// Every autosave whose window is gone without closing becomes recovered-<when>.attnlens; the newest is
// offered.
void SessionAutosave::recoverEnded() {
    const QDir dir(folder());
    QStringList stems;
    for (const QString& name : dir.entryList({"session-*.attnlens", "session-*.lock"}, QDir::Files))
        stems << QFileInfo(name).completeBaseName();
    stems.removeDuplicates();
    const QString own = QFileInfo(m_path).completeBaseName();
    QDateTime newest;
    for (const QString& stem : stems) {
        if (stem == own) continue;
        QLockFile probe(dir.filePath(stem + ".lock"));
        probe.setStaleLockTime(0);
        if (!probe.tryLock(0)) continue; // its window is still open
        const QString session = dir.filePath(stem + ".attnlens");
        if (QFileInfo::exists(session)) {
            const QDateTime when = QFileInfo(session).lastModified();
            const QString kept =
                freeName(appData() + "/recovered-" + when.toString("yyyy-MM-dd-HHmmss") + ".attnlens");
            if (QFile::rename(session, kept)) {
                m_files->rememberSession(kept);
                if (!newest.isValid() || when > newest) newest = when, m_recovered = kept;
            }
        }
        probe.unlock(); // removes the stale lock
    }
    if (m_recovered.isEmpty()) return;
    m_message->showNotice(
        tr("Attention Lens did not close properly last time (%1). What it showed was kept: "
           "restore it now, or later from File → Open recent session → %2.")
            .arg(QLocale().toString(newest, QLocale::ShortFormat), QFileInfo(m_recovered).fileName()));
    m_message->setAction(tr("Restore"), [this] { restoreRecovered(); });
}

bool SessionAutosave::restoreRecovered() {
    return !m_recovered.isEmpty() && m_files->openSession(m_recovered);
}

bool SessionAutosave::saveNow() {
    if (!m_lock) return false;
    if (m_files->restoringSession()) return true; // half way to a session: the next tick writes it
    const QJsonObject state = m_files->sessionState();
    QJsonObject bare = state;
    bare.remove("saved_at");
    const QByteArray bytes = QJsonDocument(bare).toJson(QJsonDocument::Compact);
    if (bytes == m_written && QFileInfo::exists(m_path)) return true;
    try {
        writeSessionFile(m_path, state);
    } catch (const Error& e) {
        if (!m_failing)
            m_message->showError(
                tr("Autosave failed (it keeps trying): %1").arg(QString::fromStdString(e.what())));
        m_failing = true;
        return false;
    }
    m_written = bytes;
    m_failing = false;
    return true;
}

void SessionAutosave::finish() {
    if (!m_lock) return;
    saveNow();
    m_timer.stop();
    if (QFileInfo::exists(m_path)) {
        QFile::remove(lastSessionPath());
        if (QFile::rename(m_path, lastSessionPath())) m_files->rememberSession(lastSessionPath());
    }
    m_lock.reset();
    m_path.clear();
}

void SessionAutosave::abandon() {
    m_timer.stop();
    m_lock.reset();
    m_path.clear();
}

} // namespace attnlens::ui
