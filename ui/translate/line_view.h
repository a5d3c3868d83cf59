#pragma once
// AttentionLineView: the Lines tab (BertViz's "head view"). Queries on the left, keys on the right,
// one line per pair and head (colour = head, opacity and width = weight); heads are toggled with the
// coloured buttons. Hovering a token shows only its lines; clicking selects it in the document.
//
// Smoothness: lines under the threshold are skipped, the slider above draws only each query's strongest
// few, and the full picture is cached in a pixmap that is rebuilt only when the data, the toggles or the
// size change; hover repaints the cached picture faded plus the focused token's few lines. A picture too
// tall to cache (a long paragraph) is drawn where it is exposed, the lines of the queries near it.

#include "ui/render/attention_lines.h"
#include "ui/translate/translation_document.h"

#include <QPixmap>
#include <QWidget>

#include <vector>

namespace attnlens::ui {

class HeadToggleBar;

class AttentionLineCanvas : public QWidget {
    Q_OBJECT
public:
    explicit AttentionLineCanvas(TranslationDocument* document, QWidget* parent = nullptr);
    void setScene(AttentionLineScene scene, AttentionMatrix layout);
    const AttentionLineScene& scene() const { return m_scene; }
    const AttentionLineGeometry& lineGeometry() const { return m_geometry; }
    int linesDrawn() const { return m_linesDrawn; } // in the full picture (when too tall: the last painted)
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    TokenRef tokenAt(QPoint pos) const;
    AttentionLineFocus focus() const;
    void relayout();

    TranslationDocument* m_doc;
    AttentionLineScene m_scene;
    AttentionMatrix m_matrix; // labels ↔ tokens
    AttentionLineGeometry m_geometry;
    QPixmap m_cache;
    bool m_cacheValid = false;
    int m_linesDrawn = 0;
};

class AttentionLineView : public QWidget {
    Q_OBJECT
public:
    explicit AttentionLineView(TranslationDocument* document, QWidget* parent = nullptr);
    AttentionLineCanvas* canvas() const { return m_canvas; }
    void setHeadEnabled(int head, bool on);
    std::vector<bool> enabledHeads() const;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void refresh(); // while hidden only marks the view stale (rebuilt when shown)
    void rebuildToggles();
    bool m_dirty = false;

    TranslationDocument* m_doc;
    AttentionLineCanvas* m_canvas;
    HeadToggleBar* m_toggles = nullptr;
    int m_lastHead = -2;
    AttentionKind m_lastKind = AttentionKind::Cross;
};

} // namespace attnlens::ui
