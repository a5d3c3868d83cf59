#pragma once
// DifferenceView: difference maps in a page (issue 22, M12) — the pinned view A, the current view B and A − B
// side by side as heatmaps (A and B on one scale with the page's colour map, A − B on a symmetric diverging
// scale: red where A is larger), with what A and B are and the summary (max |Δ|, Jensen–Shannon divergence,
// what could not be matched) under them. Pages compute the AttentionDiff (core/analysis/attention_diff.h) and
// hand over the three matrices as they are to be drawn (a patch map as its grid).
//
// Object names for tests: "differenceA", "differenceB", "differenceDelta", "differenceSummary".

#include "core/analysis/attention_diff.h"
#include "core/export/colormap.h"

#include <QStringList>
#include <QWidget>

#include <functional>

class QLabel;

namespace attnlens::ui {

class HeatmapView;

class DifferenceView : public QWidget {
    Q_OBJECT
public:
    explicit DifferenceView(QWidget* parent = nullptr);

    struct Shown {
        RowMatrix a, b, diff;                // as drawn (a matrix, or a map's grid)
        QStringList rowLabels, columnLabels; // empty: indices
        QString titleA, titleB;              // what A and B are
        QString rowTitle, columnTitle;
        ColorMap colorMap = ColorMap::Viridis;
    };
    void setDifference(const Shown& shown, const AttentionDiff& diff);
    // Two maps of one grid (patch maps, a U-Net layer's map): compared as distributions over the cells
    // (diffAttention of the flattened maps), drawn as grids. Throws attnlens::Error when the grids differ in
    // size.
    void setGridDifference(const RowMatrix& a, const RowMatrix& b, const QString& titleA,
                           const QString& titleB, ColorMap map);
    // A pinned matrix and the one shown, matched by diffAttention and drawn with their labels; when they
    // cannot be matched, says so ("A (…) and B (…) cannot be compared: …") instead.
    void compareMatrices(const LabelledMatrix& a, const LabelledMatrix& b, const QString& titleA,
                         const QString& titleB, const QString& rowTitle, const QString& columnTitle);
    void clear(const QString& message); // e.g. "Pin a view as A"
    bool hasDifference() const { return m_has; }
    QString summary() const;
    HeatmapView* viewA() const { return m_a; }
    HeatmapView* viewB() const { return m_b; }
    HeatmapView* viewDelta() const { return m_delta; }

    // A page's Difference tab: "Pin this matrix as A" ("pinDifference", with `pinTip`) and "Unpin"
    // ("unpinDifference") above a DifferenceView (object name `viewName`) showing `hint`; `view` receives it.
    static QWidget* buildTab(QWidget* parent, const QString& viewName, const QString& pinTip,
                             const QString& hint, const std::function<void()>& pin,
                             const std::function<void()>& unpin, DifferenceView*& view);

private:
    HeatmapView *m_a, *m_b, *m_delta;
    QLabel *m_titleA, *m_titleB, *m_titleDelta, *m_summary;
    bool m_has = false;
};

} // namespace attnlens::ui
