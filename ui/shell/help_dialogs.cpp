#include "ui/shell/help_dialogs.h"

#include <QAbstractButton>
#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QPointer>
#include <QRegularExpression>
#include <QShortcut>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

namespace attnlens::ui {

namespace {

QString keyText(const QKeySequence& key) {
    return key.toString(QKeySequence::NativeText);
}

QString plainMenuText(QString text) {
    text.remove(QLatin1Char('&'));
    return text;
}

void addMenuActions(QMenu* menu, const QString& where, QList<ShortcutRow>& rows) {
    for (QAction* a : menu->actions()) {
        if (a->menu()) {
            addMenuActions(a->menu(), where + QStringLiteral(" → ") + plainMenuText(a->menu()->title()),
                           rows);
            continue;
        }
        for (const QKeySequence& key : a->shortcuts())
            if (!key.isEmpty()) rows.push_back({keyText(key), plainMenuText(a->text()), where});
    }
}

// Keys and gestures handled inside the views' event handlers (no QAction or QShortcut carries them).
QList<ShortcutRow> viewGestures() {
    const QString heatmap = QObject::tr("Any heatmap");
    const QString beam = QObject::tr("Beam tree (Translate)");
    return {
        {QObject::tr("Ctrl+wheel"), QObject::tr("Zoom in / out around the pointer"), heatmap},
        {QStringLiteral("+  /  −"), QObject::tr("Zoom in / out (when the heatmap has focus)"), heatmap},
        {QStringLiteral("0"), QObject::tr("Fit the whole matrix to the pane"), heatmap},
        {QObject::tr("Drag"), QObject::tr("Pan while zoomed; a click without moving selects a cell"),
         heatmap},
        {QObject::tr("Click in the overview"),
         QObject::tr("Jump to that region (overview shown while zoomed)"), heatmap},
        {QStringLiteral("Esc"), QObject::tr("Clear the selected row, column or cell"), heatmap},
        {QObject::tr("Right-click"), QObject::tr("Zoom, fit and export (PNG, SVG) menu"), heatmap},
        {QObject::tr("Ctrl+wheel"), QObject::tr("Zoom the tree"), beam},
        {QObject::tr("Click a node"), QObject::tr("Show the decoder's attention at that step"), beam},
    };
}

} // namespace

QList<ShortcutRow> collectShortcuts(QMainWindow* window, const QList<QPair<QString, QWidget*>>& pages) {
    QList<ShortcutRow> rows;
    for (QAction* a : window->menuBar()->actions())
        if (a->menu())
            addMenuActions(a->menu(), plainMenuText(a->menu()->title()) + QObject::tr(" menu"), rows);
    for (const auto& [title, page] : pages) {
        const QString where = QObject::tr("%1 page").arg(title);
        for (QShortcut* s : page->findChildren<QShortcut*>())
            if (!s->key().isEmpty())
                rows.push_back({keyText(s->key()),
                                s->whatsThis().isEmpty() ? QObject::tr("(undocumented)") : s->whatsThis(),
                                where});
        for (QAbstractButton* b : page->findChildren<QAbstractButton*>()) {
            if (b->shortcut().isEmpty()) continue;
            QString what = b->toolTip();
            what.remove(QRegularExpression(QStringLiteral("\\s*\\([^)]*\\)$"))); // "Next step (Alt+Right)"
            rows.push_back({keyText(b->shortcut()), what.isEmpty() ? b->text() : what, where});
        }
    }
    rows.append(viewGestures());
    return rows;
}

QString shortcutsHtml(const QList<ShortcutRow>& rows) {
    QString html = QStringLiteral("<table cellspacing='0' cellpadding='4'>");
    QString group;
    for (const ShortcutRow& r : rows) {
        if (r.where != group) {
            group = r.where;
            html += QStringLiteral("<tr><td colspan='2'><br><b>%1</b></td></tr>").arg(group.toHtmlEscaped());
        }
        html += QStringLiteral("<tr><td style='padding-right:16px'><code>%1</code></td><td>%2</td></tr>")
                    .arg(r.keys.toHtmlEscaped(), r.action.toHtmlEscaped());
    }
    return html + QStringLiteral("</table>");
}

namespace {

QDialog* helpDialog(QMainWindow* window, const QString& objectName, const QString& title) {
    if (auto* existing = window->findChild<QDialog*>(objectName)) {
        existing->show();
        existing->raise();
        existing->activateWindow();
        return existing;
    }
    auto* dialog = new QDialog(window);
    dialog->setObjectName(objectName);
    dialog->setWindowTitle(title);
    auto* layout = new QVBoxLayout(dialog);
    auto* text = new QTextBrowser(dialog);
    text->setObjectName(QStringLiteral("helpText"));
    text->setOpenExternalLinks(true);
    layout->addWidget(text);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    dialog->resize(560, 620);
    dialog->show();
    return dialog;
}

} // namespace

void showShortcutsDialog(QMainWindow* window, const QList<QPair<QString, QWidget*>>& pages) {
    QDialog* dialog =
        helpDialog(window, QStringLiteral("shortcutsDialog"), QObject::tr("Keyboard shortcuts"));
    dialog->findChild<QTextBrowser*>(QStringLiteral("helpText"))
        ->setHtml(shortcutsHtml(collectShortcuts(window, pages)));
}

void showExplanationDialog(QMainWindow* window, std::function<QWidget*()> currentPage) {
    const bool existed = window->findChild<QDialog*>(QStringLiteral("explanationDialog")) != nullptr;
    QDialog* dialog =
        helpDialog(window, QStringLiteral("explanationDialog"), QObject::tr("What am I looking at?"));
    QPointer<QTextBrowser> text = dialog->findChild<QTextBrowser*>(QStringLiteral("helpText"));
    auto refresh = [text, currentPage] {
        if (!text) return;
        auto* page = dynamic_cast<ExplainedPage*>(currentPage());
        const QString html =
            page ? QStringLiteral("<h3>%1</h3>%2").arg(page->viewTitle(), page->viewExplanation())
                 : QObject::tr("<p>This page has no explanation yet.</p>");
        if (text->property("attnlensHtml").toString() != html) {
            text->setHtml(html);
            text->setProperty("attnlensHtml", html);
        }
    };
    refresh();
    if (existed) return;
    // Follows the page and view the user switches to while the dialog is open.
    auto* timer = new QTimer(dialog);
    timer->setInterval(400);
    QObject::connect(timer, &QTimer::timeout, dialog, [dialog, refresh] {
        if (dialog->isVisible()) refresh();
    });
    timer->start();
}

} // namespace attnlens::ui
