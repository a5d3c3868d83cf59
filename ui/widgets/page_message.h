#pragma once
// PageMessage: the one place a page shows an error or a notice — a banner coloured from the palette (a red
// or blue tint of the base colour, the window's text colour), so it reads under light and dark palettes
// alike, with a close button. It floats over its parent instead of taking a place in a layout, so showing
// and hiding it never moves a control: below an anchor widget (a page's top bar), or at the parent's
// bottom edge when it has none. Hidden until something is shown; message() is empty then.
//
// A page's banner is scoped to it (the window's is dismissed on a page switch, MainWindow) and an error is
// cleared by the page's next successful job (WorkspacePage) unless it is shown as `sticky` (a state that a
// later run does not change, e.g. a session's setting that did not fit).
//
// A message may carry one action (a button beside the text, e.g. the window's "Restore" of a session that
// ended without closing); the next message or a dismissal takes it away.
//
// Object names: "message" (the page's), "windowMessage"; the close button "dismissMessage", the action
// "messageAction". GUI thread only.

#include <QFrame>

#include <functional>

class QLabel;
class QPushButton;
class QToolButton;

namespace attnlens::ui {

class PageMessage : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Error, Notice };

    explicit PageMessage(QWidget* parent);

    void showMessage(Kind kind, const QString& text, bool sticky = false);
    void showError(const QString& text, bool sticky = false) { showMessage(Kind::Error, text, sticky); }
    void showNotice(const QString& text) { showMessage(Kind::Notice, text); }
    // A button beside the shown message that runs `run` (then dismisses the message). Call after showMessage.
    void setAction(const QString& label, std::function<void()> run);
    QPushButton* actionButton() const { return m_action; } // hidden when the message has no action
    void dismiss();
    Kind kind() const { return m_kind; }
    bool sticky() const { return m_sticky; }
    // The shown text, or empty when hidden (also while the page itself is not visible).
    QString message() const;
    // Floats just below `anchor` (a widget in the same parent, e.g. the top bar); null: at the bottom edge.
    void setAnchor(QWidget* anchor);
    QToolButton* closeButton() const { return m_close; }

signals:
    void shown(Kind kind); // a message was shown (WorkspacePage notes when, to clear it on the next success)

protected:
    void changeEvent(QEvent* event) override; // restyle when the palette changes
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void restyle();
    void place(); // over the parent: full width less the margins, below the anchor or at the bottom
    QLabel* m_text;
    QToolButton* m_close;
    QPushButton* m_action;
    std::function<void()> m_run;
    QWidget* m_anchor = nullptr;
    Kind m_kind = Kind::Notice;
    bool m_sticky = false;
    bool m_restyling = false;
};

} // namespace attnlens::ui
