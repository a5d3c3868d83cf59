#pragma once
// HeadStrip: every head's attention weights as a small thumbnail in a row; clicking one selects it.

#include "core/export/colormap.h"
#include "core/tensor/tensor.h"

#include <QWidget>

#include <vector>

class QHBoxLayout;

namespace attnlens::ui {

class HeatmapView;

class HeadStrip : public QWidget {
    Q_OBJECT
public:
    explicit HeadStrip(QWidget* parent = nullptr);

    // One matrix per head (all [n, n]); rebuilds the thumbnails when the head count changes.
    void setWeights(const std::vector<RowMatrix>& perHead);
    void setSelectedHead(int head);
    void setColorMap(ColorMap map);
    int headCount() const { return static_cast<int>(m_thumbs.size()); }
    HeatmapView* thumbnail(int head) const { return m_thumbs.at(static_cast<size_t>(head)); }

signals:
    void headClicked(int head);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void restyle();

    QHBoxLayout* m_layout;
    std::vector<QWidget*> m_cards;
    std::vector<HeatmapView*> m_thumbs;
    int m_selected = 0;
    ColorMap m_map = ColorMap::Viridis;
};

} // namespace attnlens::ui
