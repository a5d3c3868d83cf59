#pragma once
// Help → Keyboard shortcuts and Help → What am I looking at?
//
// The shortcut list is read off the live window, so it cannot drift from the code: every menu action with a
// shortcut, every page's QShortcut (described by its whatsThis) and every button with one (its tooltip or
// text), plus the keys and gestures the views handle themselves (heatmaps, beam tree), which no object
// carries.
//
//   const QList<ShortcutRow> rows = collectShortcuts(window, {{"Vision", visionPage}});   // tests, the
//   dialog showShortcutsDialog(window, pages);                                                   //
//   non-modal, one per window
//
// A page explains its current view by implementing ExplainedPage (students' texts, rich text).

#include <QList>
#include <QPair>
#include <QString>

#include <functional>

class QMainWindow;
class QWidget;

namespace attnlens::ui {

class ExplainedPage {
public:
    virtual ~ExplainedPage() = default;
    // What the view on screen shows and how to read it: a title and a few paragraphs (HTML).
    virtual QString viewTitle() const = 0;
    virtual QString viewExplanation() const = 0;
};

struct ShortcutRow {
    QString keys;   // "Ctrl+O", "Ctrl+wheel"
    QString action; // "Open model…"
    QString where;  // "File menu", "Translate page", "Any heatmap"
};

QList<ShortcutRow> collectShortcuts(QMainWindow* window, const QList<QPair<QString, QWidget*>>& pages);
QString shortcutsHtml(const QList<ShortcutRow>& rows);
void showShortcutsDialog(QMainWindow* window, const QList<QPair<QString, QWidget*>>& pages);
// The current page's explanation (or a note that the page has none) in a non-modal dialog that follows the
// page and view the user switches to while it is open.
void showExplanationDialog(QMainWindow* window, std::function<QWidget*()> currentPage);

} // namespace attnlens::ui
