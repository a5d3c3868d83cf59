#pragma once
// MultiHeadPanel: the rest of the multi-head formula after the five stages of one head,
//
//   MultiHead(Q, K, V) = Concat(head_0, …, head_{h−1}) · W_O,   head_i = softmax(Q_i K_iᵀ / √d_k + M) V_i
//
// every head's output [n, d_v/h] side by side (tinted like the columns of Q, K, V they come from), their
// concatenation [n, d_v], the editable output projection W_O [d_v, d_v] and the result [n, d_v]. Heads and
// the concatenation share one colour range (the concatenation is the heads side by side); the result has
// its own. Clicking a head selects it (the stages then show that head); a row focuses that query.
//
// Object names for tests: "headOutput<i>", "concatOutput", "outputProjection", "projectedOutput",
// "multiHeadFormula", "projectionDetail".

#include "core/export/colormap.h"

#include <QWidget>

#include <vector>

class QHBoxLayout;
class QLabel;

namespace attnlens::ui {

class HeatmapView;
class MatrixEditor;
class PlaygroundModel;

class MultiHeadPanel : public QWidget {
    Q_OBJECT
public:
    MultiHeadPanel(PlaygroundModel* model, QWidget* parent = nullptr);

    int headViewCount() const { return static_cast<int>(m_heads.size()); }
    HeatmapView* headView(int head) const;
    HeatmapView* concatView() const { return m_concat; }
    HeatmapView* resultView() const { return m_result; }
    MatrixEditor* projectionEditor() const { return m_projection; }
    QString formula() const;
    QString detail() const; // the arithmetic of the focused query's first result feature

    void setColorMap(ColorMap map);
    void setAnnotationsEnabled(bool on);
    void refresh();

private:
    HeatmapView* makeView(const QString& name);
    void syncHeadViews();

    PlaygroundModel* m_model;
    QLabel* m_formula;
    QLabel* m_detail;
    QHBoxLayout* m_headRow;
    std::vector<QWidget*> m_headCards; // a tinted title + view per head
    std::vector<HeatmapView*> m_heads;
    HeatmapView* m_concat;
    MatrixEditor* m_projection;
    HeatmapView* m_result;
    ColorMap m_colorMap = ColorMap::Viridis;
    bool m_annotate = true;
};

} // namespace attnlens::ui
