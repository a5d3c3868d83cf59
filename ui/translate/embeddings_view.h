#pragma once
// EmbeddingsView: the Embeddings tab — for the source sentence (or the decoder inputs) the token
// embeddings × embed scale, the sinusoidal positional encodings and their sum (what layer 1 receives)
// as three heatmaps [tokens, d_model] on one shared symmetric colour range, so the three are
// comparable: "the positional encoding supplies order".

#include "ui/translate/translation_document.h"

#include <QWidget>

#include <array>

class QComboBox;
class QLabel;

namespace attnlens::ui {

class EmbeddingMaps;
class HeatmapView;

class EmbeddingsView : public QWidget {
    Q_OBJECT
public:
    enum Part { Tokens = 0, Positions = 1, Sum = 2 };
    explicit EmbeddingsView(TranslationDocument* document, QWidget* parent = nullptr);
    HeatmapView* view(Part part) const;
    void setSide(TokenSide side);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void refresh(); // while hidden only marks the view stale (rebuilt when shown)
    bool m_dirty = false;
    TokenRef m_lastFocus;

    TranslationDocument* m_doc;
    QComboBox* m_side = nullptr;
    QLabel* m_info = nullptr;
    EmbeddingMaps* m_maps = nullptr;
};

} // namespace attnlens::ui
