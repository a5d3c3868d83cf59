#include "ui/text/sampling_button.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QMenu>
#include <QSpinBox>
#include <QWidgetAction>

namespace attnlens::ui {

SamplingButton::SamplingButton(QWidget* parent) : QToolButton(parent) {
    setObjectName("sampling");
    setPopupMode(QToolButton::InstantPopup);
    setToolTip(tr("How each generated token is chosen: the most likely (greedy), or drawn from the "
                  "probabilities divided by a temperature, cut to the top k and to the top p of the mass. "
                  "The same seed gives the same text; the chosen token is marked among the top 10."));
    auto* menu = new QMenu(this);
    auto* form = new QWidget(menu);
    auto* layout = new QFormLayout(form);
    m_temperature = new QDoubleSpinBox(form);
    m_temperature->setObjectName("temperature");
    m_temperature->setRange(0.0, 5.0);
    m_temperature->setSingleStep(0.1);
    m_temperature->setSpecialValueText(tr("0 (greedy)"));
    m_topK = new QSpinBox(form);
    m_topK->setObjectName("topK");
    m_topK->setRange(0, 100000);
    m_topK->setSpecialValueText(tr("all"));
    m_topP = new QDoubleSpinBox(form);
    m_topP->setObjectName("topP");
    m_topP->setRange(0.01, 1.0);
    m_topP->setSingleStep(0.05);
    m_topP->setValue(1.0);
    m_seed = new QSpinBox(form);
    m_seed->setObjectName("seed");
    m_seed->setRange(0, 2147483647);
    layout->addRow(tr("Temperature"), m_temperature);
    layout->addRow(tr("Top k"), m_topK);
    layout->addRow(tr("Top p"), m_topP);
    layout->addRow(tr("Seed"), m_seed);
    auto* action = new QWidgetAction(menu);
    action->setDefaultWidget(form);
    menu->addAction(action);
    setMenu(menu);
    for (auto* box : {m_temperature, m_topP})
        connect(box, &QDoubleSpinBox::valueChanged, this, &SamplingButton::sync);
    for (auto* box : {m_topK, m_seed})
        connect(box, &QSpinBox::valueChanged, this, &SamplingButton::sync);
    sync();
}

Sampling SamplingButton::sampling() const {
    return {static_cast<float>(m_temperature->value()), m_topK->value(), static_cast<float>(m_topP->value()),
            static_cast<uint64_t>(m_seed->value())};
}

void SamplingButton::setSampling(const Sampling& s) {
    m_temperature->setValue(s.temperature);
    m_topK->setValue(s.topK);
    m_topP->setValue(s.topP);
    m_seed->setValue(static_cast<int>(s.seed));
}

void SamplingButton::sync() {
    const Sampling s = sampling();
    QString text = tr("Greedy");
    if (!s.greedy()) {
        text = tr("Sample · T %1").arg(s.temperature, 0, 'g', 3);
        if (s.topK > 0) text += tr(" · top-k %1").arg(s.topK);
        if (s.topP < 1.0f) text += tr(" · top-p %1").arg(s.topP, 0, 'f', 2);
        text += tr(" · seed %1").arg(s.seed);
    }
    for (auto* box : std::initializer_list<QWidget*>{m_topK, m_topP, m_seed})
        box->setEnabled(!s.greedy());
    setText(text);
    emit samplingChanged();
}

} // namespace attnlens::ui
