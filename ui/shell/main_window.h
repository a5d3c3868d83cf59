#pragma once
// MainWindow only composes: a page switcher (sidebar + stacked pages), menus and the status bar.
// It holds no inference and no drawing; pages are self-contained widgets added with addPage().

#include "core/ops/gemm.h"
#include "ui/shell/session_files.h"

#include <QHash>
#include <QJsonObject>
#include <QMainWindow>
#include <QPair>

#include <functional>
#include <optional>

class QListWidget;
class QStackedWidget;
class QMenu;
class QAction;
class QMimeData;

namespace attnlens::ui {

class PageMessage;
class SessionAutosave;
class WorkspacePage;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    // Adds a page; `shortcut` index is Ctrl+<n> in the View menu. Returns the page index.
    int addPage(const QString& title, QWidget* page);
    void setCurrentPage(int index);
    int currentPage() const;
    QWidget* page(int index) const;
    int pageCount() const;

    // File → Open model…: detects the folder's model_type and routes it to the page (a ModelPage) that
    // accepts it, switching to that page; the page loads it on its worker and shows a failure in its banner.
    // A GGUF file (File → Open GGUF file…) goes to the Text page.
    // Returns false, with the reason in the window's banner, when the folder is no model or no page opens it.
    bool openModel(const QString& dir);
    // Folders that loaded, newest first (at most 8).
    QStringList recentModels() const;
    // The window banner's text (empty when hidden).
    QString windowMessage() const;

    // Compute → FP32 / BF16 without remembering it: sets the precision, checks the menu entry and reloads
    // the pages' models. False (nothing changed) when bf16 is not available.
    bool setPrecision(LinearPrecision precision);

    // A drop of one local folder or GGUF file opens it as a model (openModel), of a session file restores it;
    // pages take the drops they know themselves (pictures on the Vision page). Returns whether it was one.
    bool dropModelFolder(const QMimeData* mime);
    // The window's size, position and state, and the sizes of the pages' named splitters, are saved on close
    // (QSettings "windowGeometry", "windowState", "splitters/NAME") and restored by restoreWindowGeometry()
    // (main() calls it unless a size or a screenshot is asked for on the command line).
    void restoreWindowGeometry();

    // Sessions and recent files (ui/shell/session_files.h): File → Save session as… / Open session… / Open
    // recent session / Open recent image, `attnlens SESSION.attnlens`, a session file dropped on the window.
    SessionFiles* sessions() const { return m_sessions; }
    bool saveSession(const QString& path) { return m_sessions->saveSession(path); }
    QJsonObject sessionState() const { return m_sessions->sessionState(); }
    bool openSession(const QString& path) { return m_sessions->openSession(path); }
    bool restoringSession() const { return m_sessions->restoringSession(); }
    using MissingPath = SessionFiles::MissingPath;
    void setLocator(SessionFiles::Locator locator) { m_sessions->setLocator(std::move(locator)); }
    QStringList recentSessions() const { return m_sessions->recentSessions(); }
    QStringList recentImages() const { return m_sessions->recentImages(); }
    bool openImage(const QString& path) { return m_sessions->openImage(path); }
    // The window's state written every few seconds, offered back after a crash (ui/shell/session_autosave.h);
    // main() starts it, a close finishes it.
    SessionAutosave* autosave() const { return m_autosave; }

    QMenu* fileMenu() const { return m_fileMenu; }
    QMenu* viewMenu() const { return m_viewMenu; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void pageLoadedModel(WorkspacePage* page); // its modelLoaded(): remember the folder it was handed
    void sizeByCurrentPage(); // the page shown sets the minimum size; a window smaller than it scrolls

private:
    void buildThemeMenu();
    QList<QPair<QString, QWidget*>> pageList() const;
    void chooseModel();
    void chooseModelFile(); // a GGUF file
    void rememberModel(const QString& dir);
    void rebuildRecentMenu();
    void buildComputeMenu();
    void buildThreadsMenu();                        // Compute → Threads
    void applyPrecision(LinearPrecision precision); // set, then reload every page's model

    QMenu* m_recentMenu = nullptr;
    QListWidget* m_sidebar = nullptr;
    QStackedWidget* m_pages = nullptr;
    QMenu* m_fileMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QMenu* m_computeMenu = nullptr;
    QAction* m_fp32 = nullptr;
    QAction* m_bf16 = nullptr;
    QMenu* m_helpMenu = nullptr;
    PageMessage* m_message = nullptr;
    SessionFiles* m_sessions = nullptr;
    SessionAutosave* m_autosave = nullptr;
    QHash<QWidget*, QString> m_pendingModel; // page → folder handed to it and not yet loaded
};

} // namespace attnlens::ui
