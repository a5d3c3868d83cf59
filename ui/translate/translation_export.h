#pragma once
// Exports of the Translate page: the attention tensors (JSON, NPY) and the shown matrix (CSV), and a
// view as PNG or SVG. Free functions (the page's Export menu and the tests call them). Each throws
// attnlens::Error naming the path when it cannot write.
//
//   JSON  {source, translation, source_tokens, target_tokens, decoder_input_tokens, selection{…},
//          matrix{rows, columns, values}, tensors{encoder_self, decoder_self, cross: {shape, data}}}
//          tensors are the raw piece-level [layer][head][query][key] weights, data flat row-major.
//   CSV   the shown matrix: a header "query\key,<column labels>", then one line per row label.
//   NPY   the raw [layer, head, query, key] float32 tensor of the current kind.

#include "ui/translate/translation_document.h"

#include <QString>

class QWidget;

namespace attnlens::ui {
class HeatmapView;
}

namespace attnlens::ui {

void writeAttentionJson(const QString& path, const TranslationDocument& document);
void writeMatrixCsv(const QString& path, const AttentionMatrix& matrix);
void writeAttentionNpy(const QString& path, const TranslationDocument& document);

// The whole widget (not just its visible part) as a PNG, or drawn into an SVG through QSvgGenerator.
void saveWidgetPng(QWidget* widget, const QString& path);
void saveWidgetSvg(QWidget* widget, const QString& path, const QString& title);
// A view as .png or .svg (by the path's ending): a heatmap through its own writers (cells crisp, SVG in
// vectors), any other widget as saveWidgetPng / saveWidgetSvg draw it.
void saveView(const QString& path, const HeatmapView& heatmap, const QString& title);
void saveView(const QString& path, QWidget* widget, const QString& title);

} // namespace attnlens::ui
