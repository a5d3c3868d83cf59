#pragma once
// SamplingButton: how the Text page chooses each generated token — greedy, or sampled with a temperature,
// top-k, top-p and a seed (core/models/text_generation.h's Sampling). A tool button whose label says the
// choice ("Greedy", "Sample · T 0.8 · top-p 0.90 · seed 7"), its menu the four settings.

#include "core/models/text_generation.h"

#include <QToolButton>

class QDoubleSpinBox;
class QSpinBox;

namespace attnlens::ui {

class SamplingButton : public QToolButton {
    Q_OBJECT
public:
    explicit SamplingButton(QWidget* parent = nullptr);
    Sampling sampling() const;
    void setSampling(const Sampling& sampling);

signals:
    void samplingChanged();

private:
    void sync();

    QDoubleSpinBox* m_temperature = nullptr;
    QSpinBox* m_topK = nullptr;
    QDoubleSpinBox* m_topP = nullptr;
    QSpinBox* m_seed = nullptr;
};

} // namespace attnlens::ui
