#pragma once
// TextLinesView: the Text page's Lines tab — BertViz's head view of the shown layer: the visible tokens on
// both sides, one colour per head (the selected head alone, or all of them); hover or click a token to focus
// it. Drawn by ui/render/attention_lines (the same scene as Translate's Lines view and the CLI). Object name
// "lines".

#include "ui/render/attention_lines.h"

#include <QWidget>

namespace attnlens::ui {

class HeadToggleBar;
class TextDocument;

class TextLinesView : public QWidget {
public:
    // `toggles` (may be null): the head switches above the view; they follow the page's head selector.
    TextLinesView(TextDocument* doc, HeadToggleBar* toggles, QWidget* parent);
    void refresh(); // after the run, the step or the selection changed
    const AttentionLineGeometry& lineGeometry() const { return m_geometry; } // where the labels are

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void leaveEvent(QEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;

private:
    TextDocument* m_doc;
    HeadToggleBar* m_toggles;
    int m_lastHead = -2; // the selector's head the toggles last followed
    AttentionLineScene m_scene;
    AttentionLineGeometry m_geometry;
};

} // namespace attnlens::ui
