#include "ui/playground/matrix_editor.h"

#include "ui/playground/matrix_table_model.h"

#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QStyledItemDelegate>

#include <cmath>

namespace attnlens::ui {

namespace {

constexpr int kRowHeight = 22;
constexpr int kColumnWidth = 52;

class ValueDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex&) const override {
        auto* spin = new QDoubleSpinBox(parent);
        spin->setRange(-99.0, 99.0);
        spin->setDecimals(2);
        spin->setSingleStep(0.1);
        spin->setButtonSymbols(QAbstractSpinBox::NoButtons);
        spin->setFrame(false);
        spin->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        // Commit on every change (arrow keys, wheel, typing): the heatmaps follow live.
        connect(spin, &QDoubleSpinBox::valueChanged, this,
                [this, spin] { emit const_cast<ValueDelegate*>(this)->commitData(spin); });
        return spin;
    }
    void setEditorData(QWidget* editor, const QModelIndex& index) const override {
        auto* spin = static_cast<QDoubleSpinBox*>(editor);
        const double v = index.data(Qt::EditRole).toDouble();
        // Silent: the view calls this before it registers the editor, so a commit now would be refused.
        const QSignalBlocker blocker(spin);
        if (std::abs(spin->value() - v) > 1e-9) spin->setValue(v);
    }
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override {
        auto* spin = static_cast<QDoubleSpinBox*>(editor);
        spin->interpretText();
        model->setData(index, spin->value(), Qt::EditRole);
    }
};

} // namespace

MatrixEditor::MatrixEditor(PlaygroundModel* model, PlaygroundModel::Input which, QWidget* parent)
    : QTableView(parent), m_table(new MatrixTableModel(model, which, this)) {
    setModel(m_table);
    setItemDelegate(new ValueDelegate(this));
    setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                    QAbstractItemView::AnyKeyPressed | QAbstractItemView::SelectedClicked);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    verticalHeader()->setDefaultSectionSize(kRowHeight);
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    verticalHeader()->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);
    horizontalHeader()->setDefaultSectionSize(kColumnWidth);
    horizontalHeader()->setMinimumSectionSize(24);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    horizontalHeader()->setHighlightSections(false);
    verticalHeader()->setHighlightSections(false);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    // A fixed height from the shape: the panel this sits in scrolls instead of squeezing the table.
    auto reshape = [this] {
        setFixedHeight(sizeHint().height());
        fitColumns();
    };
    connect(m_table, &QAbstractItemModel::modelReset, this, reshape);
    reshape();
}

// Columns share the width when they fit at kColumnWidth; otherwise they keep it and the table scrolls.
void MatrixEditor::fitColumns() {
    const int cols = m_table->columnCount();
    const bool fits = cols * kColumnWidth <= viewport()->width();
    horizontalHeader()->setSectionResizeMode(fits ? QHeaderView::Stretch : QHeaderView::Fixed);
    if (!fits)
        for (int c = 0; c < cols; ++c)
            horizontalHeader()->resizeSection(c, kColumnWidth);
}

void MatrixEditor::resizeEvent(QResizeEvent* event) {
    QTableView::resizeEvent(event);
    fitColumns();
}

QSize MatrixEditor::sizeHint() const {
    const int rows = m_table->rowCount();
    const int cols = m_table->columnCount();
    const int w = verticalHeader()->sizeHint().width() + cols * kColumnWidth + 2 * frameWidth();
    int h = horizontalHeader()->sizeHint().height() + rows * kRowHeight + 2 * frameWidth();
    if (w > 340) h += horizontalScrollBar()->sizeHint().height();
    return {std::min(w, 340), std::min(h, 8 * kRowHeight + 40)};
}

} // namespace attnlens::ui
