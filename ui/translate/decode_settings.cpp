#include "ui/translate/decode_settings.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QSpinBox>

namespace attnlens::ui {

DecodeSettings::DecodeSettings(QWidget* parent)
    : QWidget(parent), m_mode(new QComboBox(this)), m_beamWidth(new QSpinBox(this)),
      m_maxLength(new QSpinBox(this)) {
    m_mode->setObjectName(QStringLiteral("searchMode"));
    m_mode->addItem(tr("Greedy"));
    m_mode->addItem(tr("Beam search"));
    m_beamWidth->setObjectName(QStringLiteral("beamWidth"));
    m_beamWidth->setRange(2, kMaxBeam);
    m_beamWidth->setValue(4);
    m_beamWidth->setPrefix(tr("width "));
    m_beamWidth->setEnabled(false);
    m_maxLength->setObjectName(QStringLiteral("maxLength"));
    m_maxLength->setRange(1, kMaxTokens);
    m_maxLength->setValue(40);
    m_maxLength->setPrefix(tr("max "));
    m_maxLength->setSuffix(tr(" tokens"));
    m_maxLength->setToolTip(tr("Most target tokens to generate (the last one is forced to </s>)"));
    connect(m_mode, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_beamWidth->setEnabled(i == 1); });
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(6);
    row->addWidget(m_mode);
    row->addWidget(m_beamWidth);
    row->addWidget(m_maxLength);
}

int DecodeSettings::beamWidth() const {
    return m_mode->currentIndex() == 1 ? m_beamWidth->value() : 1;
}

void DecodeSettings::setBeamWidth(int width) {
    m_mode->setCurrentIndex(width > 1 ? 1 : 0);
    if (width > 1) m_beamWidth->setValue(width);
}

int DecodeSettings::maxNewTokens() const {
    return m_maxLength->value();
}

void DecodeSettings::setMaxNewTokens(int n) {
    m_maxLength->setValue(n);
}

} // namespace attnlens::ui
