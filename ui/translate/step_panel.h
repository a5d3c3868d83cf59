#pragma once
// StepPanel: the current step at a glance — the cross-attention of the newest target token over the
// source (one row per head of the chosen layer, then their mean) and the top-k candidates the token
// was chosen from, with probability bars.

#include "ui/translate/translation_document.h"
#include "ui/widgets/candidate_bars.h"

#include <QWidget>

class QLabel;

namespace attnlens::ui {

class HeatmapView;

// "Shown: the best partial hypothesis at step t (of b beams)." and, once the search has finished, where the
// final translation parts from the hypothesis shown (rich text, starts with a line break; empty for greedy).
QString hypothesisNote(const TranslationSnapshot& snap, const TranslationTrace& shown, int selectedNode,
                       const std::vector<std::string>& finalTokens);

class StepPanel : public QWidget {
    Q_OBJECT
public:
    explicit StepPanel(TranslationDocument* document, QWidget* parent = nullptr);
    HeatmapView* crossView() const { return m_cross; }
    QString titleText() const;
    CandidateBars* candidateBars() const { return m_bars; }

private:
    void refresh();
    TranslationDocument* m_doc;
    QLabel* m_title;
    QLabel* m_candTitle;
    HeatmapView* m_cross;
    CandidateBars* m_bars;
    AttentionMatrix m_matrix;
};

} // namespace attnlens::ui
