#include "ui/playground/matrix_table_model.h"

#include <QBrush>
#include <QFont>

#include <algorithm>
#include <array>

namespace attnlens::ui {

MatrixTableModel::MatrixTableModel(PlaygroundModel* model, PlaygroundModel::Input which, QObject* parent)
    : QAbstractTableModel(parent), m_model(model), m_which(which), m_rows(model->inputRows(which)),
      m_cols(model->inputWidth(which)) {
    connect(m_model, &PlaygroundModel::changed, this, &MatrixTableModel::sync);
    connect(m_model, &PlaygroundModel::focusChanged, this, &MatrixTableModel::sync);
}

QColor MatrixTableModel::headTint(int head, bool strong) {
    static constexpr std::array<QRgb, 4> kLight = {0xe3edfb, 0xfdecd9, 0xe2f3e6, 0xf0e4fa};
    static constexpr std::array<QRgb, 4> kStrong = {0xbcd3f5, 0xf9d2a8, 0xb9e2c3, 0xdcc2f3};
    const auto i = static_cast<size_t>(head) % kLight.size();
    return QColor::fromRgb(strong ? kStrong[i] : kLight[i]);
}

void MatrixTableModel::sync() {
    if (m_model->inputRows(m_which) != m_rows || m_model->inputWidth(m_which) != m_cols) {
        beginResetModel();
        m_rows = m_model->inputRows(m_which);
        m_cols = m_model->inputWidth(m_which);
        endResetModel();
        return;
    }
    // One range for everything: a range (not a single index) leaves an open editor alone.
    if (m_rows > 0 && m_cols > 0) emit dataChanged(index(0, 0), index(m_rows - 1, m_cols - 1));
    emit headerDataChanged(Qt::Vertical, 0, m_rows - 1);
    emit headerDataChanged(Qt::Horizontal, 0, m_cols - 1);
}

int MatrixTableModel::headWidth() const {
    return std::max(1, m_which == PlaygroundModel::Input::Value || isProjection() ? m_model->dV()
                                                                                  : m_model->dK());
}

bool MatrixTableModel::isProjection() const {
    return m_which == PlaygroundModel::Input::OutputProjection;
}

int MatrixTableModel::headOf(int row, int col) const {
    return (isProjection() ? row : col) / headWidth();
}

int MatrixTableModel::focusRow() const {
    if (isProjection()) return -1;
    return m_which == PlaygroundModel::Input::Query ? m_model->focusQuery() : m_model->focusKey();
}

int MatrixTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : m_rows;
}
int MatrixTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : m_cols;
}

QVariant MatrixTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_rows || index.column() >= m_cols) return {};
    const float v = m_model->inputValue(m_which, index.row(), index.column());
    const int head = headOf(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return QString::number(static_cast<double>(v), 'f', 2).replace(QLatin1Char('-'), QChar(0x2212));
    case Qt::EditRole:
        return static_cast<double>(v);
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::BackgroundRole: {
        QColor c = headTint(head, m_model->heads() > 1 && head == m_model->selectedHead());
        if (index.row() == focusRow()) c = c.darker(112);
        return QBrush(c);
    }
    case Qt::ForegroundRole:
        return QBrush(QColor(Qt::black));
    case Qt::FontRole:
        if (index.row() == focusRow()) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::ToolTipRole:
        if (isProjection())
            return tr("W_O[%1, %2]: how much concatenated feature %1 (from head %3) adds to output feature "
                      "%2: %4")
                .arg(index.row())
                .arg(index.column())
                .arg(head)
                .arg(static_cast<double>(v), 0, 'g', 8);
        return tr("%1, feature %2 (head %3): %4")
            .arg(m_model->tokens().value(index.row()))
            .arg(index.column())
            .arg(head)
            .arg(static_cast<double>(v), 0, 'g', 8);
    default:
        return {};
    }
}

bool MatrixTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !index.isValid()) return false;
    bool ok = false;
    const double v = value.toString().replace(QChar(0x2212), QLatin1Char('-')).toDouble(&ok);
    if (!ok) return false;
    m_model->setInputValue(m_which, index.row(), index.column(), static_cast<float>(v));
    return true;
}

Qt::ItemFlags MatrixTableModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable;
}

QVariant MatrixTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Vertical) {
        if (section < 0 || section >= m_rows) return {};
        if (isProjection()) {
            // Rows of W_O: the concatenated features, tinted by the head they come from.
            if (role == Qt::DisplayRole) return QString::number(section);
            if (role == Qt::ToolTipRole)
                return tr("concatenated feature %1 — from head %2").arg(section).arg(section / headWidth());
            if (role == Qt::BackgroundRole) return QBrush(headTint(section / headWidth(), true));
            if (role == Qt::ForegroundRole) return QBrush(QColor(Qt::black));
            return {};
        }
        if (role == Qt::DisplayRole) return m_model->tokens().value(section);
        if (role == Qt::FontRole && section == focusRow()) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    }
    if (section < 0 || section >= m_cols) return {};
    if (isProjection()) { // output features: not split by head
        if (role == Qt::DisplayRole) return QString::number(section);
        if (role == Qt::ToolTipRole) return tr("output feature %1").arg(section);
        return {};
    }
    const int head = section / headWidth();
    switch (role) {
    case Qt::DisplayRole:
        return QString::number(section);
    case Qt::ToolTipRole:
        return tr("feature %1 — belongs to head %2").arg(section).arg(head);
    case Qt::BackgroundRole:
        return QBrush(headTint(head, true));
    case Qt::ForegroundRole: // on the light head tint, under any palette
        return QBrush(QColor(Qt::black));
    default:
        return {};
    }
}

} // namespace attnlens::ui
