#pragma once
// EmbeddingMaps: three heatmaps [tokens, dimensions] one under the other — token embeddings, position
// embeddings and what the first layer receives — each on a symmetric colour range of its own (0 in the
// middle: a positional table in [-1, 1] beside token rows several times larger would vanish on a shared one),
// a label per token row, the focus token's row selected. Translate's and Text's Embeddings tabs show it.
// Object names "embeddingScroll", "embeddingTitle<i>", "embedding<i>". GUI thread only.

#include "core/tensor/tensor.h"

#include <QStringList>
#include <QWidget>

#include <array>

namespace attnlens::ui {

class HeatmapView;

class EmbeddingMaps : public QWidget {
    Q_OBJECT
public:
    EmbeddingMaps(const std::array<QString, 3>& titles, QWidget* parent);
    HeatmapView* view(int part) const { return m_views[static_cast<size_t>(part)]; }
    // The three matrices (same rows: `labels`); `focusRow` selected in each (-1: none).
    void setParts(const std::array<const RowMatrix*, 3>& parts, const QStringList& labels, int focusRow);
    void clear();

private:
    std::array<HeatmapView*, 3> m_views{};
};

} // namespace attnlens::ui
