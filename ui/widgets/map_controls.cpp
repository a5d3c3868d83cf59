#include "ui/widgets/map_controls.h"

#include "core/layers/multi_head_attention.h"
#include "ui/render/heatmap_image.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QIcon>
#include <QPixmap>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>

namespace attnlens::ui {

QString valueWeightedTip(const QString& keys, const QString& note) {
    return QObject::tr(
               "Each weight times the length of what its %1 sends through the head, ‖v·W_O‖, each row "
               "renormalised (Kobayashi et al., 2020): where the head's output comes from, not only where "
               "it looks. %2")
        .arg(keys, note);
}

QCheckBox* valueWeightedBox(QWidget* parent, const QString& keys, const QString& note, const QString& label) {
    auto* box = new QCheckBox(label.isEmpty() ? QObject::tr("Value-weighted") : label, parent);
    box->setObjectName(QStringLiteral("valueWeighted"));
    box->setToolTip(valueWeightedTip(keys, note));
    return box;
}

namespace {

// The items' data: a head from 0, or one of these.
constexpr int kMean = -1, kMax = -2, kRollout = -3, kFlow = -4;

} // namespace

HeadCombo::HeadCombo(QWidget* parent) : QComboBox(parent) {
    addItem(tr("Mean of heads"), kMean);
    addItem(tr("Max of heads"), kMax);
    connect(this, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) emit selectionChanged(selection());
    });
}

void HeadCombo::setHeadCount(int heads, bool throughChoices, int kvHeads) {
    if (heads == m_heads && throughChoices == m_through && kvHeads == m_kvHeads) return;
    const QSignalBlocker block(this);
    const HeadSelection keep = selection();
    const Through keepThrough = throughChoices ? through() : Through::Layer;
    while (count() > 2)
        removeItem(count() - 1);
    if (throughChoices) {
        addItem(tr("Rollout, layers 0…L"), kRollout);
        setItemData(2,
                    tr("Attention rollout (Abnar & Zuidema 2020): heads averaged, the residual added, layers "
                       "0…L multiplied"),
                    Qt::ToolTipRole);
        addItem(tr("Flow, layers 0…L"), kFlow);
        setItemData(3,
                    tr("Attention flow (Abnar & Zuidema 2020): a maximum flow through layers 0…L, heads "
                       "averaged, the residual added; computed on the worker, rollout above ≈ 3 s"),
                    Qt::ToolTipRole);
    }
    for (int h = 0; h < heads; ++h) {
        const int kv = keyValueHeadOf(h, heads, kvHeads);
        addItem(kv < 0 ? tr("Head %1").arg(h) : tr("Head %1 · KV %2").arg(h).arg(kv), h);
        if (const int group = kv < 0 ? 0 : heads / kvHeads; group > 0)
            setItemData(count() - 1,
                        tr("Query heads %1–%2 share key/value head %3 (grouped-query attention): their keys "
                           "and values are the same, only the queries differ")
                            .arg(kv * group)
                            .arg(kv * group + group - 1)
                            .arg(kv),
                        Qt::ToolTipRole);
    }
    m_heads = heads;
    m_kvHeads = kvHeads;
    m_through = throughChoices;
    setSelection(keep.head < heads ? keep : HeadSelection{-1, keep.fusion}, keepThrough);
}

void HeadCombo::setSelection(const HeadSelection& heads, Through through) {
    const QSignalBlocker block(this);
    int data = heads.head >= 0 && heads.head < m_heads ? heads.head
                                                       : (heads.fusion == HeadFusion::Max ? kMax : kMean);
    if (m_through && through != Through::Layer) data = through == Through::Rollout ? kRollout : kFlow;
    setCurrentIndex(findData(data));
}

HeadSelection HeadCombo::selection() const {
    const int data = currentIndex() < 0 ? kMean : currentData().toInt();
    if (data >= 0) return {data, HeadFusion::Mean};
    return {-1, data == kMax ? HeadFusion::Max : HeadFusion::Mean};
}

HeadCombo::Through HeadCombo::through() const {
    const int data = currentIndex() < 0 ? kMean : currentData().toInt();
    return data == kRollout ? Through::Rollout : data == kFlow ? Through::Flow : Through::Layer;
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
