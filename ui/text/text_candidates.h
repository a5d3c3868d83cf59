#pragma once
// TextCandidatesList: the Text page's right-hand list. GPT-2-style models: the ten most likely next tokens at
// the step shown (the one taken next in bold); BERT-style: the top five predictions for each [MASK], or what
// to type to get them. Object name "candidates".

#include <QListWidget>

namespace attnlens::ui {

class TextDocument;

class TextCandidatesList : public QListWidget {
public:
    TextCandidatesList(TextDocument* doc, QWidget* parent);
    void refresh(); // after the run or the step changed

private:
    TextDocument* m_doc;
};

} // namespace attnlens::ui
