#pragma once
// TextCandidates: the Text page's right-hand panel. GPT-2-style models: the ten most likely next tokens at
// the step shown as probability bars (CandidateBars, as Translate's step panel; the one taken next
// highlighted); BERT-style: a list of the top five predictions for each [MASK], or what to type to get them.
// Object names "candidateBars" and "candidates" (the list).

#include <QWidget>

class QListWidget;

namespace attnlens::ui {

class CandidateBars;
class TextDocument;

class TextCandidates : public QWidget {
public:
    TextCandidates(TextDocument* doc, QWidget* parent);
    void refresh(); // after the run or the step changed
    void clear();
    QListWidget* list() const { return m_list; }
    CandidateBars* bars() const { return m_bars; }

private:
    void refreshMasks();
    TextDocument* m_doc;
    CandidateBars* m_bars;
    QListWidget* m_list;
};

} // namespace attnlens::ui
