#include "ui/widgets/map_scale_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QSignalBlocker>

namespace attnlens::ui {

MapScaleBox::MapScaleBox(QWidget* parent) : QWidget(parent) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    m_kind = new QComboBox(this);
    m_kind->setObjectName(QStringLiteral("mapScale"));
    m_kind->addItem(tr("Linear"), static_cast<int>(MapScaleKind::Linear));
    m_kind->addItem(tr("Log"), static_cast<int>(MapScaleKind::Log));
    m_kind->addItem(tr("Clip at 99 %"), static_cast<int>(MapScaleKind::Clip));
    m_kind->setItemData(0, tr("Colours over [0, 1]: the weights as they are"), Qt::ToolTipRole);
    m_kind->setItemData(
        1,
        tr("Colours by log weight: a sink column and the faint rest on one bar, decades apart "
           "as steps apart"),
        Qt::ToolTipRole);
    m_kind->setItemData(
        2, tr("The bar ends at the 99th percentile of the weights shown; stronger ones saturate"),
        Qt::ToolTipRole);
    m_kind->setToolTip(tr("Colour scale of the map"));
    m_ignoreFirst = new QCheckBox(tr("Ignore first token"), this);
    m_ignoreFirst->setObjectName(QStringLiteral("ignoreFirstToken"));
    m_ignoreFirst->setToolTip(tr("Leave the first token (the attention sink) out and share each row over the "
                                 "rest"));
    row->addWidget(m_kind);
    row->addWidget(m_ignoreFirst);
    connect(m_kind, &QComboBox::activated, this, [this] { emit changed(); });
    connect(m_ignoreFirst, &QCheckBox::clicked, this, [this] { emit changed(); });
}

MapScale MapScaleBox::scale() const {
    MapScale s;
    s.kind = static_cast<MapScaleKind>(m_kind->currentData().toInt());
    s.ignoredKeys = m_ignoreFirst->isChecked() ? 1 : 0;
    return s;
}

void MapScaleBox::setScale(const MapScale& scale) {
    const QSignalBlocker b1(m_kind), b2(m_ignoreFirst);
    m_kind->setCurrentIndex(m_kind->findData(static_cast<int>(scale.kind)));
    m_ignoreFirst->setChecked(scale.ignoredKeys > 0);
}

} // namespace attnlens::ui
