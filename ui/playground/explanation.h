#pragma once
// The playground's words: formulas and the arithmetic behind the focused cell, as small HTML
// snippets for QLabel. Free functions of the model so tests can read exactly what a student reads.

#include "ui/playground/playground_model.h"

#include <QString>

namespace attnlens::ui {

// A number as the playground prints it: fixed decimals and a real minus sign.
QString formatNumber(double value, int decimals = 2);
// The formula of a stage, e.g. "S = Q·Kᵀ".
QString stageFormula(const PlaygroundModel& model, PlaygroundModel::Stage stage);
// The stage's value at the focus (query, key) with the numbers that produce it.
QString stageDetail(const PlaygroundModel& model, PlaygroundModel::Stage stage);
// The weights stage value-weighted (PlaygroundModel::valueWeightedWeights): its formula and the focused cell.
QString valueWeightedFormula();
QString valueWeightedDetail(const PlaygroundModel& model);
// All five steps for the focused cell of the selected head, one per line.
QString explainFocus(const PlaygroundModel& model);

} // namespace attnlens::ui
