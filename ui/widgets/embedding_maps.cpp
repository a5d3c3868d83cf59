#include "ui/widgets/embedding_maps.h"

#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace attnlens::ui {

EmbeddingMaps::EmbeddingMaps(const std::array<QString, 3>& titles, QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    // The three maps one under the other, each tall enough for a label per token (the tab scrolls for long
    // inputs); titles above the maps, so that they are never clipped to a narrow grid.
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("embeddingScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* maps = new QWidget(scroll);
    auto* mapsLayout = new QVBoxLayout(maps);
    mapsLayout->setContentsMargins(0, 0, 0, 0);
    for (int i = 0; i < 3; ++i) {
        auto* title = caption(titles[static_cast<size_t>(i)], maps);
        title->setObjectName(QStringLiteral("embeddingTitle%1").arg(i));
        mapsLayout->addWidget(title);
        auto* v = new HeatmapView(maps);
        v->setObjectName(QStringLiteral("embedding%1").arg(i));
        v->setColorMap(ColorMap::Magma);
        v->setRangeMode(HeatmapView::RangeMode::Fixed);
        v->setAnnotationsEnabled(false);
        v->setAxisTitles(tr("token"), tr("dimension →"));
        v->setMaximumCellSize(28);
        m_views[static_cast<size_t>(i)] = v;
        mapsLayout->addWidget(v, 1);
    }
    scroll->setWidget(maps);
    layout->addWidget(scroll, 1);
}

void EmbeddingMaps::clear() {
    for (HeatmapView* v : m_views)
        v->setMatrix(RowMatrix::Zero(1, 1));
}

void EmbeddingMaps::setParts(const std::array<const RowMatrix*, 3>& parts, const QStringList& labels,
                             int focusRow) {
    QStringList dims;
    for (Eigen::Index d = 0; d < parts[0]->cols(); ++d)
        dims << QString::number(d);
    for (size_t i = 0; i < 3; ++i) {
        const RowMatrix& m = *parts[i];
        const float lim = m.size() > 0 ? std::max(m.cwiseAbs().maxCoeff(), 1e-6f) : 1.0f;
        m_views[i]->setFixedRange(-lim, lim);
        m_views[i]->setMatrix(m, labels, dims);
        // A text line per token row (labels at every row), the dimension labels and the colour bar.
        m_views[i]->setMinimumHeight(std::clamp(90 + 16 * static_cast<int>(m.rows()), 150, 1100));
        if (focusRow >= 0 && focusRow < m_views[i]->rows())
            m_views[i]->selectRow(focusRow);
        else
            m_views[i]->clearSelection();
    }
}

} // namespace attnlens::ui
