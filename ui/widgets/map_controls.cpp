#include "ui/widgets/map_controls.h"

#include "ui/render/heatmap_image.h"

#include <QIcon>
#include <QPixmap>
#include <QSignalBlocker>

namespace attnlens::ui {

HeadCombo::HeadCombo(QWidget* parent) : QComboBox(parent) {
    addItems({tr("Mean of heads"), tr("Max of heads")});
    connect(this, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) emit selectionChanged(selection());
    });
}

void HeadCombo::setHeadCount(int heads) {
    if (heads == headCount()) return;
    const QSignalBlocker block(this);
    const HeadSelection keep = selection();
    while (count() > 2)
        removeItem(count() - 1);
    for (int h = 0; h < heads; ++h)
        addItem(tr("Head %1").arg(h));
    setSelection(keep.head < heads ? keep : HeadSelection{-1, keep.fusion});
}

void HeadCombo::setSelection(const HeadSelection& heads) {
    const QSignalBlocker block(this);
    setCurrentIndex(heads.head >= 0 && heads.head < headCount() ? heads.head + 2
                                                                : (heads.fusion == HeadFusion::Max ? 1 : 0));
}

HeadSelection HeadCombo::selection() const {
    const int i = currentIndex();
    if (i >= 2) return {i - 2, HeadFusion::Mean};
    return {-1, i == 1 ? HeadFusion::Max : HeadFusion::Mean};
}

ColorMapCombo::ColorMapCombo(ColorMap current, QWidget* parent) : QComboBox(parent) {
    for (ColorMap map : allColorMaps())
        addItem(QIcon(QPixmap::fromImage(colorBarImage(map, 48, 12, Qt::Horizontal))),
                colorMapDisplayName(map), static_cast<int>(map));
    setColorMap(current);
    connect(this, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) emit colorMapChanged(colorMap());
    });
}

void ColorMapCombo::setColorMap(ColorMap map) {
    const QSignalBlocker block(this);
    setCurrentIndex(findData(static_cast<int>(map)));
}

ColorMap ColorMapCombo::colorMap() const {
    return static_cast<ColorMap>(currentData().toInt());
}

} // namespace attnlens::ui
