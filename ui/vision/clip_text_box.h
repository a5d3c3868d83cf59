#pragma once
// ClipTextBox: the Vision page's "Texts (CLIP)" box, shown while a CLIPModel is loaded — type texts separated
// by
// '|' ("a dog | a cat | a red car"), Enter runs them against the picture (zero-shot scores in the predictions
// list); pick one to see where it is (the cosine similarity of each patch, or the relevance: rollout ×
// similarity above the mean), or "Attention maps" to go back. Object names: "clipTexts", "textMap",
// "textMeasure".

#include <QGroupBox>

class QComboBox;
class QLineEdit;

namespace attnlens::ui {

class VisionDocument;

class ClipTextBox : public QGroupBox {
    Q_OBJECT
public:
    ClipTextBox(VisionDocument* doc, QWidget* parent);
    // From the document: visible with a text side; the texts, the list of maps and the choices.
    void refresh();
    QLineEdit* textsEdit() const { return m_texts; }

signals:
    // The line as typed, on Enter (the page splits it, stores it and runs it on the worker).
    void textsEntered(const QString& line);

private:
    VisionDocument* m_doc;
    QLineEdit* m_texts;
    QComboBox* m_map;
    QComboBox* m_measure;
};

} // namespace attnlens::ui
