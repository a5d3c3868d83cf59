#pragma once
// DiffusionSettingsBox: the Diffusion page's "Generate" box — class (class-conditional models, by name when
// the folder names them), seed, scheduler (DDIM / DDPM), steps and the Generate button.
// Object names: "class", "seed", "scheduler", "steps", "generate".

#include "ui/diffusion/diffusion_document.h"

#include <QGroupBox>

class QComboBox;
class QPushButton;
class QSpinBox;

namespace attnlens::ui {

class DiffusionSettingsBox : public QGroupBox {
    Q_OBJECT
public:
    explicit DiffusionSettingsBox(QWidget* parent);

    DiffusionSettings settings() const; // the class only when the model has classes
    void setSettings(const DiffusionSettings& settings);
    // The loaded model's classes and scheduler (no model: Generate is off).
    void syncModel(const DiffusionDocument& doc);

signals:
    void generateRequested();

private:
    QComboBox* m_class;
    QSpinBox* m_seed;
    QComboBox* m_scheduler;
    QSpinBox* m_steps;
    QPushButton* m_generate;
};

} // namespace attnlens::ui
