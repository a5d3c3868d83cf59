#pragma once
// BeamView: the Beam tab — the search tree of the current step (greedy: a chain) with cumulative and
// per-token log-probabilities. The best hypothesis is drawn in blue, finished hypotheses with a green
// border, pruned branches grey. Clicking a node makes the document show that hypothesis' attention in
// every view; clicking the start node returns to the best hypothesis.

#include "ui/render/beam_tree.h"
#include "ui/translate/translation_document.h"

#include <QWidget>

class QLabel;

namespace attnlens::ui {

class BeamTreeCanvas : public QWidget {
    Q_OBJECT
public:
    explicit BeamTreeCanvas(TranslationDocument* document, QWidget* parent = nullptr);
    const std::vector<BeamTreeItem>& items() const { return m_items; }
    const BeamTreeLayout& treeLayout() const { return m_layout; }
    void rebuild(); // while hidden only marks the tree stale
    QSize sizeHint() const override { return m_layout.size; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
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

private:
    void refresh();
    TranslationDocument* m_doc;
    QLabel* m_info;
    BeamTreeCanvas* m_canvas;
};

} // namespace attnlens::ui
