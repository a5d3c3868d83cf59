#pragma once
// PredictionsView: the model's top classes as labelled bars (probability in percent). An optional
// "expected" label (e.g. a sample's true class) is marked. Threading: GUI thread only.

#include "core/models/vit_model.h"

#include <QWidget>

#include <vector>

namespace attnlens::ui {

class PredictionsView : public QWidget {
    Q_OBJECT
public:
    explicit PredictionsView(QWidget* parent = nullptr);

    void setPredictions(std::vector<Prediction> predictions, const QString& expected = {});
    const std::vector<Prediction>& predictions() const { return m_predictions; }
    void setMessage(const QString& text); // shown instead of bars (e.g. "no classifier")

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<Prediction> m_predictions;
    QString m_expected;
    QString m_message;
};

} // namespace attnlens::ui
