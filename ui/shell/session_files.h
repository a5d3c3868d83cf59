#pragma once
// SessionFiles: the window's sessions and recent files — File → Save session as… / Open session… / Open
// recent session / Open recent image, and session files opened from the command line or dropped on the window
// (the format: ui/shell/session.h). Every page that is a SessionPage saves and restores its own part.
//
// Opening checks the whole file first (a bad one changes nothing and says why in the window's banner), asks
// for every missing model folder or picture (locate it, skip it or cancel), keeps what is on screen as a
// session of its own (File → Open recent session), then restores every page and shows the saved page.

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QStringList>

#include <functional>
#include <optional>

class QMainWindow;
class QMenu;
class QStackedWidget;

namespace attnlens::ui {

class PageMessage;

class SessionFiles : public QObject {
    Q_OBJECT
public:
    // `showPage` switches the window to a page (by index in `pages`).
    SessionFiles(QMainWindow* window, QStackedWidget* pages, PageMessage* message,
                 std::function<void(int)> showPage);
    void addMenus(QMenu* fileMenu); // the session entries and the two recent menus

    // Every page's state and the page shown, to `path` (.attnlens). False, with the reason in the banner.
    bool saveSession(const QString& path);
    QJsonObject sessionState() const;
    bool openSession(const QString& path); // false when nothing was opened
    bool restoringSession() const;         // a page still getting back to a session's view

    // What openSession asks when a session names a folder or file that is not there: the path to use instead;
    // an empty string to skip it (the page keeps its own model, or shows no picture); nullopt to cancel. The
    // default asks with a message box and a file dialog; tests set their own.
    struct MissingPath {
        QString page; // "translate", …
        QString what; // "model folder", "picture"
        QString path; // as the session has it
        bool folder = true;
    };
    using Locator = std::function<std::optional<QString>(const MissingPath&)>;
    void setLocator(Locator locator) { m_locator = std::move(locator); }

    QStringList recentSessions() const;
    QStringList recentImages() const;
    void rememberImage(const QString& path);   // a page showed a picture file
    void rememberSession(const QString& path); // first under File → Open recent session
    // File → Open recent image: the picture on the page that opens pictures (Vision).
    bool openImage(const QString& path);

private:
    void rebuildMenus();
    void remember(const char* key, const QString& path);
    QString currentSessionKey() const;
    QHash<QString, int> pageIndex() const; // session key → page index
    // The session's pages, checked; missing paths located. False (the banner says why) when it cannot open.
    bool preparePages(const QString& path, const QJsonObject& session, QJsonObject& pages);

    QMainWindow* m_window;
    QStackedWidget* m_pages;
    PageMessage* m_message;
    std::function<void(int)> m_showPage;
    Locator m_locator;
    QMenu* m_recentSessions = nullptr;
    QMenu* m_recentImages = nullptr;
};

} // namespace attnlens::ui
