#pragma once
// PatchImageView: the picture (with the attention overlay already blended in) at its own aspect ratio,
// the ViT patch grid drawn over it, and the selected query patches outlined. Mouse: click a patch to
// make it the query, shift/ctrl-click to add or remove one, drag to select a rectangle of patches
// (shift-drag adds to the selection). Small pictures are scaled up without smoothing (crisp pixels).
//
// Geometry: the grid is PatchGrid's, in ORIGINAL-image pixels; the picture shown may be an enlarged or
// reduced copy of that image (any size with the same aspect ratio) — the view maps both to widget
// coordinates through imageRect(). Threading: GUI thread only.

#include "core/vision/patch_grid.h"

#include <QImage>
#include <QWidget>

#include <vector>

namespace attnlens::ui {

class PatchImageView : public QWidget {
    Q_OBJECT
public:
    explicit PatchImageView(QWidget* parent = nullptr);

    // `picture` shows the original image of `grid` at any scale (aspect ratio preserved).
    void setPicture(const QImage& picture, const PatchGrid& grid);
    void setPicture(const QImage& picture); // same grid
    void clear();
    const QImage& picture() const { return m_picture; }
    const PatchGrid& grid() const { return m_grid; }

    void setSelection(const std::vector<int>& patches, bool clsSelected);
    const std::vector<int>& selection() const { return m_selection; }
    void setGridVisible(bool visible);
    bool gridVisible() const { return m_showGrid; }
    void setPlaceholderText(const QString& text);

    // Where the picture is drawn (widget coordinates), and a patch's rectangle there.
    QRectF imageRect() const;
    QRectF patchRect(int patch) const;
    // The patch under a widget point, or -1.
    int patchAt(const QPointF& pos) const;

    QSize sizeHint() const override { return {520, 520}; }
    QSize minimumSizeHint() const override { return {200, 200}; }

signals:
    void patchClicked(int patch, bool additive);                   // additive: shift or ctrl held
    void patchesSelected(std::vector<int> patches, bool additive); // a drag over several patches
    void patchHovered(int patch);                                  // -1 when the pointer leaves the grid

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    std::vector<int> patchesInRect(const QRectF& rect) const;

    QImage m_picture;
    PatchGrid m_grid;
    std::vector<int> m_selection;
    bool m_cls = true;
    bool m_showGrid = true;
    QString m_placeholder;
    int m_hovered = -1;
    bool m_pressed = false;
    bool m_dragging = false;
    bool m_additive = false;
    QPointF m_pressPos, m_dragPos;
};

} // namespace attnlens::ui
