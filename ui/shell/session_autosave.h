#pragma once
// SessionAutosave: nothing the user made is lost when the app ends without closing (a crash, a kill, a power
// cut). While the window lives, its session (SessionFiles::sessionState: every page's model, input, step,
// selection and view) is written every few seconds, when it changed, to autosave/session-<pid>-<n>.attnlens
// in the app's data folder — atomically, beside a lock file (QLockFile) that says the window is still
// running.
//
// - A clean close keeps the last state as last-session.attnlens (File → Open recent session), and removes the
//   autosave and its lock.
// - At start, an autosave whose lock is stale (its process is gone) is what a crash left: it is moved to
//   recovered-<when>.attnlens (listed under File → Open recent session, so dismissing loses nothing) and the
//   newest is offered in the window's banner, with a Restore button that opens it as any session.
// - An autosave that cannot be written says so once in the banner (and keeps trying).
//
// The window starts it (main(); tests that want it): a window without start() writes nothing.

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>

class QLockFile;

namespace attnlens::ui {

class PageMessage;
class SessionFiles;

class SessionAutosave : public QObject {
    Q_OBJECT
public:
    SessionAutosave(SessionFiles* files, PageMessage* message, QObject* parent);
    ~SessionAutosave() override;

    // Takes this window's autosave (and lock), recovers what ended windows left (offering the newest in the
    // banner) and writes every `intervalMs`. False (the banner says why) when the folder cannot be written.
    bool start(int intervalMs = 3000);
    bool running() const { return m_lock != nullptr; }
    // Writes the window's state now if it changed since the last write (or nothing was written yet); false
    // on an error. Not while a page is still restoring a session (its state is half way).
    bool saveNow();
    // A clean close: the last state saved, kept as last-session.attnlens, the autosave and lock removed.
    void finish();

    static QString folder();                          // <app data>/autosave
    QString path() const;                             // this window's autosave (empty before start())
    QString recovered() const { return m_recovered; } // what start() offered (empty when nothing)
    bool restoreRecovered();                          // the banner's Restore: opens it as a session

    // Tests: leave the autosave as a crash would (the lock released without the close's clean-up).
    void abandon();

private:
    bool takeSlot();
    void recoverEnded();
    QString lastSessionPath() const;

    SessionFiles* m_files;
    PageMessage* m_message;
    QTimer m_timer;
    std::unique_ptr<QLockFile> m_lock;
    QString m_path;
    QByteArray m_written; // the last state written, without its time
    QString m_recovered;
    bool m_failing = false;
};

} // namespace attnlens::ui
