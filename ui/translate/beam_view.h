#pragma once
// BeamView: the Beam tab — the search tree of the current step (greedy: a chain) with cumulative and
// per-token log-probabilities. The best hypothesis is drawn in blue, finished hypotheses with a green
// border, pruned branches grey. Clicking a node makes the document show that hypothesis' attention in
// every view; clicking the start node returns to the best hypothesis.
//
// The tree opens zoomed to fit the pane (never larger than 100 %); Ctrl+wheel, the − / + buttons zoom,
// Fit returns to the fitted zoom. The view follows the shown node: the selected one, else the best
// hypothesis of the current step, is scrolled into view after every step.

#include "ui/render/beam_tree.h"
#include "ui/translate/translation_document.h"

#include <QWidget>

class QLabel;
class QScrollArea;

namespace attnlens::ui {

class BeamTreeCanvas : public QWidget {
    Q_OBJECT
public:
    explicit BeamTreeCanvas(TranslationDocument* document, QWidget* parent = nullptr);
    const std::vector<BeamTreeItem>& items() const { return m_items; }
    const BeamTreeLayout& treeLayout() const { return m_layout; }
    void rebuild(); // while hidden only marks the tree stale
    QSize sizeHint() const override { return m_layout.size * m_zoom; }
    // Drawing scale (1 = the layout's pixels); the widget's size follows it.
    void setZoom(double zoom);
    double zoom() const { return m_zoom; }
    // The box of item `index` in widget coordinates (zoom applied).
    QRect nodeRect(int index) const;
    // The item the view follows: the selected beam node, else the best node of the current step.
    int focusIndex() const;

signals:
    void zoomRequested(int steps); // Ctrl+wheel: + in, − out
    void rebuilt();

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void applySize();
    double m_zoom = 1.0;
    bool m_dirty = false; // rebuilt when shown
    TranslationDocument* m_doc;
    std::vector<BeamTreeItem> m_items;
    BeamTreeLayout m_layout;
};

class BeamView : public QWidget {
    Q_OBJECT
public:
    explicit BeamView(TranslationDocument* document, QWidget* parent = nullptr);
    BeamTreeCanvas* canvas() const { return m_canvas; }
    bool fitMode() const { return m_fit; }
    void zoomIn();
    void zoomOut();
    void fitToView();

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();
    void applyFit();
    void zoomBy(double factor);
    void follow();
    TranslationDocument* m_doc;
    QLabel* m_info;
    QScrollArea* m_scroll;
    BeamTreeCanvas* m_canvas;
    bool m_fit = true;
};

} // namespace attnlens::ui
