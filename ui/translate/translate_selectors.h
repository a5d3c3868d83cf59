#pragma once
// TranslateSelectors: what the Translate page's views show — "Show [kind] [layer of 0–L] [heads]  ☐ Words
// ☐ Hide special tokens". The head choice is a HeadCombo: mean / max of heads, one head, or (encoder
// self-attention) rollout / flow through layers 0…L. Reads and sets the page's TranslationDocument.
// Object names: "attentionKind", "layer", "head", "wordLevel", "hideSpecial".

#include <QWidget>

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace attnlens::ui {

class HeadCombo;
class TranslationDocument;

class TranslateSelectors : public QWidget {
    Q_OBJECT
public:
    TranslateSelectors(TranslationDocument* doc, QWidget* parent);
    void sync(); // from the document (emits nothing)
    HeadCombo* headCombo() const { return m_head; }

private:
    TranslationDocument* m_doc;
    QComboBox* m_kind;
    QSpinBox* m_layer;
    HeadCombo* m_head;
    QCheckBox* m_wordLevel;
    QCheckBox* m_hideSpecial;
    QCheckBox* m_valueWeighted;
};

} // namespace attnlens::ui
