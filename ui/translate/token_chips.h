#pragma once
// TokenChips: one side's pieces (source or target) as chips that wrap. Hovering a chip sets the
// document's hovered token, clicking selects it (again: clears); every chip is shaded by how much
// attention links it to the focus token under the current matrix (document.focusWeights).

#include "ui/translate/translation_document.h"

#include <QRect>
#include <QWidget>

class QLabel;

#include <vector>

namespace attnlens::ui {

class TokenChips;

// The Translate page's token panel: the source and target chips (at most four and three lines; the rest
// scrolls, so the views below keep their room) and the translation line under them (object names
// "chipsPanel", "translation").
QWidget* buildTokenPanel(TranslationDocument* doc, QWidget* parent, TokenChips*& sourceChips,
                         TokenChips*& targetChips, QLabel*& translation);

class TokenChips : public QWidget {
    Q_OBJECT
public:
    TokenChips(TranslationDocument* document, TokenSide side, QWidget* parent = nullptr);
    static constexpr int kLineHeight = 28; // a line of chips and the gap under it
    QRect chipRect(int index) const;
    int chipAt(QPoint pos) const;
    int count() const { return static_cast<int>(m_tokens.size()); }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

signals:
    void heightChanged(int height); // the chips wrapped onto more or fewer lines

private:
    void refresh();
    std::vector<QRect> layoutChips(int width) const;

    TranslationDocument* m_doc;
    TokenSide m_side;
    QStringList m_tokens;
    std::vector<QRect> m_rects;
};

} // namespace attnlens::ui
