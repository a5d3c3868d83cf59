#pragma once
// StagePanel: one step of the attention computation as a card: a numbered title, the formula, the
// current value at the focused cell, and the heatmap of the whole stage.

#include <QFrame>

class QLabel;

namespace attnlens::ui {

class HeatmapView;

class StagePanel : public QFrame {
    Q_OBJECT
public:
    StagePanel(const QString& title, QWidget* parent = nullptr);

    HeatmapView* view() const { return m_view; }
    void setFormula(const QString& html);
    void setDetail(const QString& html);
    QString formula() const;
    QString detail() const;

private:
    QLabel* m_title;
    QLabel* m_formula;
    QLabel* m_detail;
    HeatmapView* m_view;
};

} // namespace attnlens::ui
