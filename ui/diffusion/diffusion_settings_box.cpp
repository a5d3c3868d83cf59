#include "ui/diffusion/diffusion_settings_box.h"

#include <QComboBox>
#include <QFormLayout>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <climits>

namespace attnlens::ui {

DiffusionSettingsBox::DiffusionSettingsBox(QWidget* parent)
    : QGroupBox(tr("Generate"), parent), m_class(new QComboBox(this)), m_seed(new QSpinBox(this)),
      m_scheduler(new QComboBox(this)), m_steps(new QSpinBox(this)),
      m_generate(new QPushButton(tr("Generate"), this)) {
    m_class->setObjectName(QStringLiteral("class"));
    m_class->setToolTip(tr("The class the image is generated for (class-conditional models)"));
    m_seed->setObjectName(QStringLiteral("seed"));
    m_seed->setRange(0, INT_MAX);
    m_seed->setValue(1);
    m_seed->setToolTip(
        tr("The seed of the initial noise and every step's noise: the same seed gives the same image"));
    m_scheduler->setObjectName(QStringLiteral("scheduler"));
    m_scheduler->addItem(tr("DDIM"), static_cast<int>(SchedulerKind::Ddim));
    m_scheduler->addItem(tr("DDPM"), static_cast<int>(SchedulerKind::Ddpm));
    m_steps->setObjectName(QStringLiteral("steps"));
    m_steps->setRange(1, DenoiseSession::kMaxSteps);
    m_steps->setValue(50);
    m_generate->setObjectName(QStringLiteral("generate"));
    m_generate->setDefault(true);
    connect(m_generate, &QPushButton::clicked, this, &DiffusionSettingsBox::generateRequested);
    auto* form = new QFormLayout(this);
    form->addRow(tr("Class:"), m_class);
    form->addRow(tr("Seed:"), m_seed);
    form->addRow(tr("Scheduler:"), m_scheduler);
    form->addRow(tr("Steps:"), m_steps);
    form->addRow(m_generate);
}

DiffusionSettings DiffusionSettingsBox::settings() const {
    DiffusionSettings s;
    s.scheduler = static_cast<SchedulerKind>(m_scheduler->currentData().toInt());
    s.steps = m_steps->value();
    s.seed = static_cast<uint64_t>(m_seed->value());
    if (m_class->count() > 0 && m_class->currentIndex() >= 0) s.classLabel = m_class->currentIndex();
    return s;
}

void DiffusionSettingsBox::setSettings(const DiffusionSettings& s) {
    m_scheduler->setCurrentIndex(s.scheduler == SchedulerKind::Ddim ? 0 : 1);
    m_steps->setValue(s.steps);
    m_seed->setValue(static_cast<int>(std::min<uint64_t>(s.seed, INT_MAX)));
    if (s.classLabel && *s.classLabel < m_class->count()) m_class->setCurrentIndex(*s.classLabel);
}

void DiffusionSettingsBox::syncModel(const DiffusionDocument& doc) {
    const QSignalBlocker block(m_class);
    const int classes = doc.classCount();
    if (m_class->count() != classes) {
        m_class->clear();
        for (int c = 0; c < classes; ++c)
            m_class->addItem(QStringLiteral("%1 · %2").arg(c).arg(doc.className(c)));
    }
    m_class->setEnabled(classes > 0);
    m_class->setToolTip(classes > 0 ? tr("The class the image is generated for")
                                    : tr("This model is unconditional"));
    m_generate->setEnabled(doc.model() != nullptr);
    if (doc.model()) m_steps->setMaximum(doc.model()->scheduler.numTrainTimesteps);
}

} // namespace attnlens::ui
