#pragma once
// NumberItem: a QTableWidget cell that shows a number with fixed decimals and sorts by its value
// (Qt::UserRole); NaN shows "—", has no number and sorts last. Shared by the lens tables.

#include <QTableWidgetItem>

#include <cmath>

namespace attnlens::ui {

class NumberItem : public QTableWidgetItem {
public:
    NumberItem(double v, int decimals) {
        if (std::isnan(v)) {
            setData(Qt::DisplayRole, QStringLiteral("—"));
        } else {
            setData(Qt::DisplayRole, QString::number(v, 'f', decimals));
            setData(Qt::UserRole, v);
        }
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override {
        const QVariant a = data(Qt::UserRole), b = other.data(Qt::UserRole);
        if (!a.isValid()) return false;
        if (!b.isValid()) return true;
        return a.toDouble() < b.toDouble();
    }
};

} // namespace attnlens::ui
