#pragma once
// MatrixEditor: a compact QTableView for one playground input (Q, K or V). Cells edit with a spin
// box that commits on every step, so the stage heatmaps follow the arrows or the mouse wheel live.

#include "ui/playground/playground_model.h"

#include <QTableView>

namespace attnlens::ui {

class MatrixTableModel;

class MatrixEditor : public QTableView {
    Q_OBJECT
public:
    MatrixEditor(PlaygroundModel* model, PlaygroundModel::Input which, QWidget* parent = nullptr);

    MatrixTableModel* tableModel() const { return m_table; }
    QSize sizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void fitColumns();

    MatrixTableModel* m_table;
};

} // namespace attnlens::ui
