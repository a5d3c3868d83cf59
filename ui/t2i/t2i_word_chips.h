#pragma once
// T2iWordChips: the prompt as one chip per word (CLIP pieces merged at "</w>"), wrapping. Click a chip to
// show its map (again: none), shift-click to compare it beside the chosen word; the chosen word is bold,
// compared words are checked too. <start>, <end> and padding appear when the document shows special tokens.
// Buttons are named "word<i>" (i: index into the document's words). GUI thread only.

#include <QWidget>

#include <vector>

class QToolButton;

namespace attnlens::ui {

class FlowLayout;
class T2iDocument;

class T2iWordChips : public QWidget {
    Q_OBJECT
public:
    T2iWordChips(T2iDocument* document, QWidget* parent = nullptr);
    QToolButton* chip(int word) const; // nullptr when that word is not shown
    // In a scroll area of at most `lines` lines of chips (a long prompt scrolls; the image keeps its room,
    // and the chips' height-for-width does not reach the page, which a window then had to scroll).
    QWidget* inScrollArea(int lines);

signals:
    void heightChanged(int height); // the chips wrapped onto more or fewer lines

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild(); // the words changed
    void sync();    // the selection changed
    T2iDocument* m_doc;
    FlowLayout* m_layout;
    std::vector<QToolButton*> m_chips; // [word] or nullptr
    std::vector<std::string> m_shown;  // the words the chips were made for
    bool m_special = false;
    int m_lastHeight = -1;
    void reportHeight();
};

} // namespace attnlens::ui
