#pragma once
// The neuron view's picture (issue 21, M18): one score of one head taken apart. Three bar rows over the
// head's dimensions — q_i, k_i and q_i·k_i (blue negative, red positive, one symmetric scale per row) — then
// the arithmetic: Σ q_i·k_i, ÷√d_k, and the softmax weight over the query's row, with the row's scores drawn
// as a strip where the chosen key is marked. Free functions: the Translate / Vision / Diffusion dialogs and
// `attnlens-cli neuron --png` draw the same picture.
//
//   NeuronChartText text{"layer 2 head 1", "Haus", "house"};
//   QImage img = renderNeuronChart(terms, text, 900);        // or paintNeuronChart(painter, rect, …)

#include "core/analysis/neuron_view.h"

#include <QImage>
#include <QRectF>
#include <QString>

#include <optional>

class QPainter;

namespace attnlens::ui {

struct NeuronChartText {
    QString where;                   // "cross-attention, layer 2, head 1"
    QString query;                   // the query token's label
    QString key;                     // the key token's label
    std::optional<double> captured;  // the weight the model's own pass captured, when known
    bool sortByContribution = false; // dimensions ordered by |q_i·k_i| instead of by index
};

// Height the chart needs at a given width (bars + text).
int neuronChartHeight(const NeuronTerms& terms, int width);
void paintNeuronChart(QPainter& painter, const QRectF& rect, const NeuronTerms& terms,
                      const NeuronChartText& text);
QImage renderNeuronChart(const NeuronTerms& terms, const NeuronChartText& text, int width);

// The arithmetic as lines of plain text (the dialog's caption, the CLI's stdout):
//   q·k = Σ q_i·k_i = 12.3456 over 64 dimensions (top 5 give 81 %)
//   ÷ √64 = 1.5432
//   softmax over 17 keys: exp(1.5432 − 2.0011) / 3.2101 = 0.1968
QStringList neuronArithmetic(const NeuronTerms& terms);

} // namespace attnlens::ui
