#pragma once
// AttentionMatrixView: the Matrix tab — the document's current matrix (kind, layer, head/aggregate,
// toggles) as a labelled heatmap. The focus token's row (or column) is selected and the rest dimmed;
// clicking a row or column label selects that token in the document (every view follows).

#include "ui/translate/translation_document.h"

#include <QWidget>

class QLabel;
class QStackedWidget;

namespace attnlens::ui {

class HeatmapView;

class AttentionMatrixView : public QWidget {
    Q_OBJECT
public:
    explicit AttentionMatrixView(TranslationDocument* document, QWidget* parent = nullptr);
    HeatmapView* heatmap() const { return m_heatmap; }
    const AttentionMatrix& shownMatrix() const { return m_matrix; }
    QString title() const;

private:
    void refresh();
    void applyFocus();

    TranslationDocument* m_doc;
    AttentionMatrix m_matrix;
    QLabel* m_title = nullptr;
    QLabel* m_placeholder = nullptr;
    QStackedWidget* m_stack = nullptr;
    HeatmapView* m_heatmap = nullptr;
};

} // namespace attnlens::ui
