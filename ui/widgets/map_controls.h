#pragma once
// The two choices every map view offers, as one widget each so the pages say them the same way:
//   HeadCombo      "Mean of heads", "Max of heads", "Head 0" …   → HeadSelection (heads from 0)
//   ColorMapCombo  every colour map, its bar as the icon          → ColorMap
// Setters never emit; a user's choice emits the *Changed signal. Object names are the caller's.

#include "core/analysis/attention_maps.h"
#include "core/export/colormap.h"

#include <QComboBox>

namespace attnlens::ui {

class HeadCombo : public QComboBox {
    Q_OBJECT
public:
    explicit HeadCombo(QWidget* parent = nullptr);
    void
    setHeadCount(int heads); // rebuilds the list when the count changes, keeping the selection if it fits
    int headCount() const { return count() - 2; }
    void setSelection(const HeadSelection& heads);
    HeadSelection selection() const;

signals:
    void selectionChanged(attnlens::HeadSelection heads);
};

class ColorMapCombo : public QComboBox {
    Q_OBJECT
public:
    explicit ColorMapCombo(ColorMap current, QWidget* parent = nullptr);
    void setColorMap(ColorMap map);
    ColorMap colorMap() const;

signals:
    void colorMapChanged(attnlens::ColorMap map);
};

} // namespace attnlens::ui
