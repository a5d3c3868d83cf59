#pragma once
// DecodeSettings: how the Translate page decodes — "Greedy" or "Beam search" with its width, and the most
// target tokens. Object names: "searchMode", "beamWidth", "maxLength".

#include <QWidget>

class QComboBox;
class QSpinBox;

namespace attnlens::ui {

class DecodeSettings : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxBeam = 16, kMaxTokens = 512;
    explicit DecodeSettings(QWidget* parent);
    int beamWidth() const; // 1 = greedy
    void setBeamWidth(int width);
    int maxNewTokens() const;
    void setMaxNewTokens(int n);

private:
    QComboBox* m_mode;
    QSpinBox* m_beamWidth;
    QSpinBox* m_maxLength;
};

} // namespace attnlens::ui
