#pragma once
// MatrixTableModel: one of the playground's inputs (Q, K or V) as an editable Qt table model.
// Rows are tokens (vertical header = token text), columns are the d_model features; the columns of
// each head share a background tint so the split of d_model into heads is visible. Edits go to
// PlaygroundModel::setInputValue; the table follows PlaygroundModel::changed()/focusChanged().

#include "ui/playground/playground_model.h"

#include <QAbstractTableModel>

namespace attnlens::ui {

class MatrixTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    MatrixTableModel(PlaygroundModel* model, PlaygroundModel::Input which, QObject* parent = nullptr);

    PlaygroundModel::Input input() const { return m_which; }
    // Background tint of the columns of head `head` (cycles through a few light hues).
    static QColor headTint(int head, bool strong);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void sync();
    // The row this table highlights: the focus query in Q, the focus key in K and V; none in W_O.
    int focusRow() const;
    int headWidth() const;     // columns per head of this input: d_k for Q and K, d_v / h for V (rows of W_O)
    bool isProjection() const; // W_O: rows are the concatenated features (tinted by head), columns the output
    int headOf(int row, int col) const;

    PlaygroundModel* m_model;
    PlaygroundModel::Input m_which;
    int m_rows = 0, m_cols = 0;
};

} // namespace attnlens::ui
