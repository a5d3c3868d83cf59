#pragma once
// UShapeView: every attention layer of a U-Net laid out as the U itself — the contracting path going
// down on the left, the bottleneck at the bottom, the expansive path coming back up on the right —
// one tile per layer (its map for the query at its own resolution), in execution order from left to
// right, one row per resolution level. Solid lines follow the execution order; dashed lines join a
// contracting level to the expansive layers at the same resolution (the skip connections).
// Click a tile to select its layer. renderImage() draws the same picture for export.
//
// Threading: GUI thread only.

#include "core/models/unet_model.h"

#include <QImage>
#include <QWidget>

#include <vector>

namespace attnlens::ui {

class UShapeView : public QWidget {
    Q_OBJECT
public:
    explicit UShapeView(QWidget* parent = nullptr);

    // The layers (execution order) and their short labels; clears the tiles.
    void setLayers(std::vector<UNetAttentionInfo> layers, QStringList labels);
    // One picture per layer (null: not computed yet, drawn as an empty tile).
    void setTiles(std::vector<QImage> tiles);
    void setSelected(int layer);
    int selected() const { return m_selected; }
    int count() const { return static_cast<int>(m_layers.size()); }
    const QImage& tile(int layer) const { return m_tiles.at(static_cast<size_t>(layer)); }
    void setPlaceholderText(const QString& text);

    // Grid position of a layer: column = execution order, row = its resolution level among those used
    // (the bottleneck below the deepest).
    int columnOf(int layer) const;
    int rowOf(int layer) const;
    int rows() const;
    QRect tileRect(int layer) const; // widget coordinates (the picture, without its label)
    int tileAt(const QPoint& pos) const;

    QImage renderImage(int tileSize) const; // on white, labels included

    QSize sizeHint() const override { return {560, 360}; }
    QSize minimumSizeHint() const override { return {180, 160}; }

signals:
    void layerClicked(int layer);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    int tileEdge(QSize area) const;
    QRect tileRectFor(int layer, int edge, QPoint origin) const;
    void paintU(QPainter& p, int edge, QPoint origin, bool forExport) const;

    std::vector<UNetAttentionInfo> m_layers;
    QStringList m_labels;
    std::vector<int> m_rowOf;
    std::vector<QImage> m_tiles;
    int m_selected = -1;
    QString m_placeholder;
};

} // namespace attnlens::ui
