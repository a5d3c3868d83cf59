#include "ui/shell/session_files.h"

#include "core/util/error.h"
#include "ui/shell/model_page.h"
#include "ui/shell/session.h"
#include "ui/widgets/page_message.h"

#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>

namespace attnlens::ui {

namespace {

constexpr int kRecentCount = 8;

SessionPage* sessionPage(QWidget* w) {
    return dynamic_cast<SessionPage*>(w);
}

// The default Locator: a message box (Locate… / Skip / Cancel), then a file dialog.
std::optional<QString> askForMissing(QWidget* parent, const SessionFiles::MissingPath& missing) {
    QMessageBox box(
        QMessageBox::Warning, QObject::tr("Session: %1 missing").arg(missing.what),
        QObject::tr("The session's %1 for the %2 page is not there:\n%3\n\nLocate it, or skip it (the page "
                    "keeps what it has)?")
            .arg(missing.what, missing.page, missing.path),
        QMessageBox::NoButton, parent);
    QPushButton* locate = box.addButton(QObject::tr("Locate…"), QMessageBox::AcceptRole);
    QPushButton* skip = box.addButton(QObject::tr("Skip"), QMessageBox::DestructiveRole);
    box.addButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() == skip) return QString();
    if (box.clickedButton() != locate) return std::nullopt;
    const QString start = QFileInfo(missing.path).absolutePath();
    const QString chosen =
        missing.folder
            ? QFileDialog::getExistingDirectory(parent, QObject::tr("Locate the model folder"), start)
            : QFileDialog::getOpenFileName(parent, QObject::tr("Locate the picture"), start);
    if (chosen.isEmpty()) return std::nullopt;
    return chosen;
}

} // namespace

SessionFiles::SessionFiles(QMainWindow* window, QStackedWidget* pages, PageMessage* message,
                           std::function<void(int)> showPage)
    : QObject(window), m_window(window), m_pages(pages), m_message(message), m_showPage(std::move(showPage)) {
}

void SessionFiles::addMenus(QMenu* fileMenu) {
    fileMenu->addSeparator();
    auto* open = fileMenu->addAction(tr("Open &session…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            m_window, tr("Open a session"), QFileInfo(recentSessions().value(0)).absolutePath(),
            tr("Attention Lens sessions (*.attnlens);;All files (*)"));
        if (!path.isEmpty()) openSession(path);
    });
    open->setObjectName(QStringLiteral("openSession"));
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    auto* save = fileMenu->addAction(tr("Save session &as…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(m_window, tr("Save the session"),
                                                    QFileInfo(recentSessions().value(0)).absolutePath(),
                                                    tr("Attention Lens sessions (*.attnlens)"));
        if (path.isEmpty()) return;
        if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".attnlens");
        saveSession(path);
    });
    save->setObjectName(QStringLiteral("saveSession"));
    save->setShortcut(QKeySequence::Save);
    m_recentSessions = fileMenu->addMenu(tr("Open recent s&ession"));
    m_recentImages = fileMenu->addMenu(tr("Open recent &image"));
    rebuildMenus();
}

void SessionFiles::rebuildMenus() {
    m_recentSessions->clear();
    for (const QString& path : recentSessions())
        m_recentSessions->addAction(path, this, [this, path] { openSession(path); });
    m_recentSessions->setEnabled(!recentSessions().isEmpty());
    m_recentImages->clear();
    for (const QString& path : recentImages())
        m_recentImages->addAction(path, this, [this, path] { openImage(path); });
    m_recentImages->setEnabled(!recentImages().isEmpty());
}

QStringList SessionFiles::recentSessions() const {
    return QSettings().value("recentSessions").toStringList();
}
QStringList SessionFiles::recentImages() const {
    return QSettings().value("recentImages").toStringList();
}

void SessionFiles::remember(const char* key, const QString& path) {
    QStringList recent = QSettings().value(key).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kRecentCount)
        recent.removeLast();
    QSettings().setValue(key, recent);
    rebuildMenus();
}

void SessionFiles::rememberImage(const QString& path) {
    remember("recentImages", path);
}

void SessionFiles::rememberSession(const QString& path) {
    remember("recentSessions", path);
}

bool SessionFiles::openImage(const QString& path) {
    for (int i = 0; i < m_pages->count(); ++i) {
        QWidget* page = m_pages->widget(i);
        if (page->metaObject()->indexOfMethod("openImage(QString)") < 0) continue;
        m_showPage(i);
        return QMetaObject::invokeMethod(page, "openImage", Q_ARG(QString, path));
    }
    return false;
}

QHash<QString, int> SessionFiles::pageIndex() const {
    QHash<QString, int> index;
    for (int i = 0; i < m_pages->count(); ++i)
        if (const SessionPage* page = sessionPage(m_pages->widget(i))) index.insert(page->sessionKey(), i);
    return index;
}

QString SessionFiles::currentSessionKey() const {
    const SessionPage* page = sessionPage(m_pages->currentWidget());
    return page ? page->sessionKey() : QString();
}

QJsonObject SessionFiles::sessionState() const {
    QJsonObject pages;
    for (int i = 0; i < m_pages->count(); ++i)
        if (const SessionPage* page = sessionPage(m_pages->widget(i)))
            pages.insert(page->sessionKey(), page->saveSession());
    return QJsonObject{{"format", kSessionFormat},
                       {"version", kSessionVersion},
                       {"saved_by", QApplication::applicationVersion()},
                       {"saved_at", QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
                       {"page", currentSessionKey()},
                       {"pages", pages}};
}

bool SessionFiles::saveSession(const QString& path) {
    try {
        writeSessionFile(path, sessionState());
    } catch (const Error& e) {
        m_message->showError(tr("Cannot save the session: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
    remember("recentSessions", path);
    m_window->statusBar()->showMessage(tr("Session saved to %1").arg(path), 5000);
    return true;
}

bool SessionFiles::restoringSession() const {
    for (int i = 0; i < m_pages->count(); ++i)
        if (const SessionPage* page = sessionPage(m_pages->widget(i)); page && page->restoringSession())
            return true;
    return false;
}

// Every page's part is checked before any page changes; then the missing model folders and pictures are
// located, skipped or the opening cancelled — still before anything changes.
bool SessionFiles::preparePages(const QString& path, const QJsonObject& session, QJsonObject& pages) {
    const QHash<QString, int> indexOf = pageIndex();
    pages = session.value("pages").toObject();
    for (auto it = pages.begin(); it != pages.end(); ++it) {
        SessionPage* page =
            indexOf.contains(it.key()) ? sessionPage(m_pages->widget(indexOf.value(it.key()))) : nullptr;
        QString problem = page ? page->checkSession(it.value().toObject())
                               : QStringLiteral("pages.%1: no such page in this version").arg(it.key());
        if (!problem.isEmpty()) {
            m_message->showError(
                tr("Cannot open the session '%1': %2. Nothing was changed.").arg(path, problem));
            return false;
        }
    }
    const QString shownPage = session.value("page").toString();
    if (!shownPage.isEmpty() && !indexOf.contains(shownPage)) {
        m_message->showError(
            tr("Cannot open the session '%1': page \"%2\" does not exist. Nothing was changed.")
                .arg(path, shownPage));
        return false;
    }
    // Missing model folders and pictures: locate, skip or cancel — still before anything changes.
    const Locator locate =
        m_locator ? m_locator : Locator([this](const MissingPath& m) { return askForMissing(m_window, m); });
    for (auto it = pages.begin(); it != pages.end(); ++it) {
        QJsonObject state = it.value().toObject();
        struct Ref {
            const char* key;
            QString what;
            bool folder;
        };
        for (const Ref& ref :
             {Ref{"model_dir", tr("model folder"), true}, Ref{"image_path", tr("picture"), false}}) {
            if (!state.contains(ref.key)) continue;
            const QString wanted = state.value(ref.key).toString();
            const QFileInfo info(wanted);
            if (ref.folder ? info.isDir() : info.isFile()) continue;
            const std::optional<QString> answer = locate(MissingPath{it.key(), ref.what, wanted, ref.folder});
            if (!answer) {
                m_message->showError(
                    tr("Opening the session '%1' was cancelled: its %2 %3 is missing. Nothing was changed.")
                        .arg(path, ref.what, wanted));
                return false;
            }
            if (!answer->isEmpty()) {
                state.insert(ref.key, *answer);
            } else if (ref.folder) { // skipped: the page keeps the model it has (or its built-in one)
                const auto* modelPage = dynamic_cast<ModelPage*>(m_pages->widget(indexOf.value(it.key())));
                if (modelPage && !modelPage->loadedModelDir().isEmpty())
                    state.insert(ref.key, modelPage->loadedModelDir());
                else
                    state.remove(ref.key);
            } else {
                state.remove(ref.key);
            }
        }
        pages.insert(it.key(), state);
    }
    return true;
}

bool SessionFiles::openSession(const QString& path) {
    QJsonObject session;
    try {
        session = readSessionFile(path);
    } catch (const Error& e) {
        m_message->showError(tr("Cannot open the session: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
    QJsonObject pages;
    if (!preparePages(path, session, pages)) return false;
    const QHash<QString, int> indexOf = pageIndex();
    const QString shownPage = session.value("page").toString();
    m_message->dismiss();
    // What is on screen now is kept, so that opening a session never loses anything: as a session in the
    // app's data folder, listed first under File → Open recent session.
    const QString keep =
        QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/before-last-open.attnlens";
    if (QDir().mkpath(QFileInfo(keep).absolutePath()) && QFileInfo(keep) != QFileInfo(path)) {
        try {
            writeSessionFile(keep, sessionState());
        } catch (const Error&) { // not fatal: the session still opens
        }
    }
    for (auto it = pages.begin(); it != pages.end(); ++it)
        sessionPage(m_pages->widget(indexOf.value(it.key())))->restoreSession(it.value().toObject());
    if (!shownPage.isEmpty()) m_showPage(indexOf.value(shownPage));
    if (QFileInfo::exists(keep) && QFileInfo(keep) != QFileInfo(path)) remember("recentSessions", keep);
    remember("recentSessions", path);
    m_window->statusBar()->showMessage(
        tr("Opened the session %1 (what was on screen before: File → Open recent session → %2)")
            .arg(QFileInfo(path).fileName(), QFileInfo(keep).fileName()),
        8000);
    return true;
}

} // namespace attnlens::ui
