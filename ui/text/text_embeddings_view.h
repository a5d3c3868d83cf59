#pragma once
// TextEmbeddingsView: the Text page's Embeddings tab — for the tokens shown (the prompt and the generated
// ones up to the step), the token embeddings, the learned position embeddings (BERT: with token type 0's) and
// what layer 0 receives (their sum; BERT: after the embedding LayerNorm), as Translate's tab shows them
// (EmbeddingMaps). The focus token's row is selected. Object name "textEmbeddings". GUI thread only.

#include <QWidget>

class QLabel;

namespace attnlens::ui {

class EmbeddingMaps;
class TextDocument;

class TextEmbeddingsView : public QWidget {
    Q_OBJECT
public:
    TextEmbeddingsView(TextDocument* doc, QWidget* parent);
    EmbeddingMaps* maps() const { return m_maps; }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void refresh(); // while hidden only marks the view stale (rebuilt when shown)
    TextDocument* m_doc;
    QLabel* m_info;
    EmbeddingMaps* m_maps;
    bool m_dirty = true;
};

} // namespace attnlens::ui
