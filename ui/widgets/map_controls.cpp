#include "ui/widgets/map_controls.h"

#include "ui/render/heatmap_image.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QIcon>
#include <QPixmap>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>

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

MapLensBox::MapLensBox(const LensTips& tips, QWidget* parent)
    : QGroupBox(tr("Map"), parent), m_form(new QFormLayout(this)), m_layer(new QComboBox(this)),
      m_head(new HeadCombo(this)) {
    m_layer->setObjectName(QStringLiteral("layer"));
    connect(m_layer, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) emit layerChosen(i);
    });
    m_head->setObjectName(QStringLiteral("head"));
    connect(m_head, &HeadCombo::selectionChanged, this, &MapLensBox::headsChosen);
    m_form->addRow(tr("Layer:"), m_layer);
    m_form->addRow(tr("Head:"), m_head);
    const auto button = [this](const QString& text, const QString& name, const QString& tip) {
        auto* b = new QPushButton(text, this);
        b->setObjectName(name);
        b->setToolTip(tip);
        return b;
    };
    auto* headStats = button(tr("Head statistics…"), QStringLiteral("headStatsButton"), tips.headStats);
    auto* neuron = button(tr("Inside one score…"), QStringLiteral("neuronButton"), tips.neuron);
    auto* pin = button(tr("Pin map as A…"), QStringLiteral("pinMap"), tips.pin);
    connect(headStats, &QPushButton::clicked, this, &MapLensBox::headStatsRequested);
    connect(neuron, &QPushButton::clicked, this, &MapLensBox::neuronRequested);
    connect(pin, &QPushButton::clicked, this, &MapLensBox::pinRequested);
    auto* lensRow = new QHBoxLayout;
    lensRow->addWidget(headStats);
    lensRow->addWidget(neuron);
    m_form->addRow(lensRow);
    m_form->addRow(pin);
}

void MapLensBox::addRow(const QString& label, QWidget* field) {
    m_form->insertRow(2 + m_pageRows++, label, field);
}

void MapLensBox::addRow(QWidget* row) {
    m_form->insertRow(2 + m_pageRows++, row);
}

void MapLensBox::setLayers(const QStringList& names) {
    QStringList now;
    for (int i = 0; i < m_layer->count(); ++i)
        now << m_layer->itemText(i);
    if (now == names) return;
    const QSignalBlocker block(m_layer);
    m_layer->clear();
    m_layer->addItems(names);
}

void MapLensBox::setSelection(int layer, int headCount, const HeadSelection& heads) {
    const QSignalBlocker b1(m_layer), b2(m_head);
    m_layer->setCurrentIndex(m_layer->count() == 0 ? -1 : layer);
    m_head->setHeadCount(headCount);
    m_head->setSelection(heads);
}

MapDisplayBox::MapDisplayBox(float opacity, ColorMap map, QWidget* parent)
    : QGroupBox(tr("Display"), parent), m_form(new QFormLayout(this)),
      m_opacity(new QSlider(Qt::Horizontal, this)), m_colorMap(new ColorMapCombo(map, this)) {
    m_opacity->setObjectName(QStringLiteral("opacity"));
    m_opacity->setRange(0, 100);
    m_opacity->setValue(static_cast<int>(opacity * 100));
    connect(m_opacity, &QSlider::valueChanged, this, [this](int v) { emit opacityChanged(v / 100.0f); });
    m_colorMap->setObjectName(QStringLiteral("colorMap"));
    connect(m_colorMap, &ColorMapCombo::colorMapChanged, this, &MapDisplayBox::colorMapChanged);
    m_form->addRow(tr("Opacity:"), m_opacity);
    m_form->addRow(tr("Colours:"), m_colorMap);
}

void MapDisplayBox::addRow(QWidget* row) {
    m_form->addRow(row);
}

} // namespace attnlens::ui
