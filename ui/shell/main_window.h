#pragma once
// MainWindow only composes: a page switcher (sidebar + stacked pages), menus and the status bar.
// It holds no inference and no drawing; pages are self-contained widgets added with addPage().

#include <QMainWindow>

class QListWidget;
class QStackedWidget;
class QMenu;

namespace attnlens::ui {

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

    QMenu* fileMenu() const { return m_fileMenu; }
    QMenu* viewMenu() const { return m_viewMenu; }

private:
    QListWidget* m_sidebar = nullptr;
    QStackedWidget* m_pages = nullptr;
    QMenu* m_fileMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QMenu* m_helpMenu = nullptr;
};

} // namespace attnlens::ui
