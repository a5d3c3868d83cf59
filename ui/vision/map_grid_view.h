#pragma once
// MapGridView: small attention overlays side by side with titles — the heads grid (every head of one
// layer for the current query, DINO-style) and the layers strip (one head through every layer).
// Click a tile to select it. Tiles keep the picture's aspect ratio and grow with the widget; enlarged
// tiles are drawn without smoothing. renderImage() draws the same tiles into one image for export.
//
// Threading: GUI thread only.

#include <QFontMetrics>
#include <QImage>
#include <QStringList>
#include <QWidget>

#include <vector>

namespace attnlens::ui {

class MapGridView : public QWidget {
    Q_OBJECT
public:
    explicit MapGridView(QWidget* parent = nullptr);

    // All tiles must have the same size. Clears the selection when the count changes.
    void setTiles(std::vector<QImage> tiles, QStringList titles);
    void clear();
    // Replaces one tile (same size as the others): tiles arriving one by one. Ignored outside the grid.
    void setTile(int index, QImage tile);
    int count() const { return static_cast<int>(m_tiles.size()); }
    const QImage& tile(int index) const { return m_tiles.at(static_cast<size_t>(index)); }
    QString title(int index) const { return m_titles.value(index); }

    // 0 = automatic (the column count that gives the largest tiles); otherwise at most this many per row.
    void setMaxColumns(int columns);
    int columns() const;
    int rows() const;
    void setSelected(int index); // -1 = none
    int selected() const { return m_selected; }

    QRect tileRect(int index) const; // widget coordinates (the picture, without the title)
    int tileAt(const QPoint& pos) const;

    // The tiles at `tileSize` px (longer side) with titles, on a white background.
    QImage renderImage(int tileSize) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void tileClicked(int index);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    int tileEdge(int width, int height, int columns) const; // the longer tile side that fits
    int titleHeight(const QFontMetrics& fm,
                    int tileWidth) const; // one caption line, or two when one is too wide
    int columnsFor(int width, int height) const;
    int rowsFor(int columns) const;
    QSize tileSize(int edge) const;
    void paintTiles(QPainter& p, int edge, int columns, QPoint origin, bool forExport) const;

    std::vector<QImage> m_tiles;
    QStringList m_titles;
    int m_maxColumns = 0;
    int m_selected = -1;
};

} // namespace attnlens::ui
