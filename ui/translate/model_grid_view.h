#pragma once
// ModelGridView: the Model tab — every layer × head of the current attention kind as a small map
// (plus the mean over heads in the last column). Clicking a map selects that layer and head in the
// document and emits headActivated, which the page answers by showing the Matrix tab.

#include "ui/translate/translation_document.h"

#include <QImage>
#include <QWidget>

#include <vector>

class QScrollArea;

namespace attnlens::ui {

class ModelGridCanvas : public QWidget {
    Q_OBJECT
public:
    explicit ModelGridCanvas(TranslationDocument* document, QWidget* parent = nullptr);
    // Recomputes the thumbnails; while the canvas is hidden it only marks them stale.
    void rebuild();
    // The map at a point: (layer, head), head -1 = the mean column; (-1, -1) outside.
    std::pair<int, int> cellAt(QPoint pos) const;
    QRect cellRect(int layer, int head) const; // head -1: the mean column
    int thumbnailCount() const { return static_cast<int>(m_thumbs.size()); }
    void setAvailableWidth(int width);
    QSize sizeHint() const override;

signals:
    void headActivated(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void relayout();
    bool m_dirty = false; // data changed while hidden: rebuilt when shown

    TranslationDocument* m_doc;
    int m_available = 700;
    std::vector<QImage> m_thumbs; // [layers][heads + 1] row-major
    int m_layers = 0, m_heads = 0;
    int m_cell = 92;
    std::pair<int, int> m_hover{-1, -1};
};

class ModelGridView : public QWidget {
    Q_OBJECT
public:
    explicit ModelGridView(TranslationDocument* document, QWidget* parent = nullptr);
    ModelGridCanvas* canvas() const { return m_canvas; }

signals:
    void headActivated(int layer, int head);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    ModelGridCanvas* m_canvas;
    QScrollArea* m_scroll = nullptr;
};

} // namespace attnlens::ui
