#pragma once
// PageMessage: the one place a page shows an error or a notice — a banner under its top bar, coloured
// from the palette (a red or blue tint of the base colour, the window's text colour), so it reads
// under light and dark palettes alike. Hidden until something is shown; text() is empty then.
//
// Object name "message" for tests. Threading: GUI thread only.

#include <QLabel>

namespace attnlens::ui {

class PageMessage : public QLabel {
    Q_OBJECT
public:
    enum class Kind { Error, Notice };

    explicit PageMessage(QWidget* parent);

    void showMessage(Kind kind, const QString& text);
    void showError(const QString& text) { showMessage(Kind::Error, text); }
    void showNotice(const QString& text) { showMessage(Kind::Notice, text); }
    void dismiss();
    Kind kind() const { return m_kind; }
    // The shown text, or empty when hidden (also while the page itself is not visible).
    QString message() const { return isHidden() ? QString() : text(); }

protected:
    void changeEvent(QEvent* event) override; // restyle when the palette changes
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void restyle();
    Kind m_kind = Kind::Notice;
    bool m_restyling = false;
};

} // namespace attnlens::ui
