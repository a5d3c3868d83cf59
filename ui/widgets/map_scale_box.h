#pragma once
// MapScaleBox: the sink-aware scale of an attention map as one row of controls (core/analysis/map_scale.h):
// a combo "Linear" / "Log" / "Clip at 99 %" and a check box "Ignore first token" (the sink column left out,
// each row renormalised over the rest). Setters never emit; a user's choice emits changed().
// Children: "mapScale" (QComboBox), "ignoreFirstToken" (QCheckBox).

#include "core/analysis/map_scale.h"

#include <QWidget>

class QCheckBox;
class QComboBox;

namespace attnlens::ui {

class MapScaleBox : public QWidget {
    Q_OBJECT
public:
    explicit MapScaleBox(QWidget* parent = nullptr);
    MapScale scale() const;
    void setScale(const MapScale& scale);

signals:
    void changed();

private:
    QComboBox* m_kind = nullptr;
    QCheckBox* m_ignoreFirst = nullptr;
};

} // namespace attnlens::ui
