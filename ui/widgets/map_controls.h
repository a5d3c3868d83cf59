#pragma once
// The choices every map view offers, as one widget each so the pages say them the same way:
//   HeadCombo      "Mean of heads", "Max of heads", ["Rollout, layers 0…L", "Flow, layers 0…L"], "Head 0" …
//                  → HeadSelection (heads from 0) and whether it is through the layers
//   ColorMapCombo  every colour map, its bar as the icon          → ColorMap
//   MapLensBox     the sidebar's "Map" box of the map pages (Vision, Diffusion): layer, heads, the page's own
//                  rows, then the lenses on the map shown (head statistics, neuron view, pin as A)
//   MapDisplayBox  the sidebar's "Display" box: opacity and colours of the map over the picture, the page's
//   rows
//   valueWeightedBox  the "Value-weighted" switch every page has (object name "valueWeighted"): its tooltip
//   says
//                  the method (Kobayashi et al., 2020) for what the page's keys are, then the page's own note
// Setters never emit; a user's choice emits the *Changed / *Chosen / *Requested signal. Object names of the
// combos are the caller's; those inside the boxes are fixed (below), so tests and the harness find them.

#include "core/analysis/attention_maps.h"
#include "core/export/colormap.h"

#include <QComboBox>
#include <QGroupBox>

class QCheckBox;
class QFormLayout;
class QSlider;

namespace attnlens::ui {

// keys: what the page's keys are ("key", "token", "pixel"); note: the page's own sentence (may be empty).
QCheckBox* valueWeightedBox(QWidget* parent, const QString& keys, const QString& note,
                            const QString& label = {});
QString valueWeightedTip(const QString& keys, const QString& note); // the box's tooltip

class HeadCombo : public QComboBox {
    Q_OBJECT
public:
    // Layer: the layer's heads; Rollout / Flow: through layers 0…L, the heads fused with the mean.
    enum class Through { Layer, Rollout, Flow };
    explicit HeadCombo(QWidget* parent = nullptr);
    // Rebuilds the list when the count or the choices change, keeping the selection if it fits. kvHeads
    // (grouped-query attention, 0 < kvHeads < heads): each head's item names the key/value head it reads,
    // "Head 5 · KV 1", its tooltip the query heads that share it.
    void setHeadCount(int heads, bool throughChoices = false, int kvHeads = 0);
    int headCount() const { return m_heads; }
    void setSelection(const HeadSelection& heads, Through through = Through::Layer);
    HeadSelection selection() const;
    Through through() const;

signals:
    void selectionChanged(attnlens::HeadSelection heads); // a user's choice; through() says where

private:
    int m_heads = 0, m_kvHeads = 0;
    bool m_through = false;
};

class ColorMapCombo : public QComboBox {
    Q_OBJECT
public:
    explicit ColorMapCombo(ColorMap current, QWidget* parent = nullptr);
    void setColorMap(ColorMap map);
    ColorMap colorMap() const;

signals:
    void colorMapChanged(attnlens::ColorMap map);
};

// Children: "layer" (QComboBox), "head" (HeadCombo), "headStatsButton", "neuronButton", "pinMap".
class MapLensBox : public QGroupBox {
    Q_OBJECT
public:
    struct LensTips { // what each lens does on this page (tooltips)
        QString headStats, neuron, pin;
    };
    MapLensBox(const LensTips& tips, QWidget* parent);
    // The page's own rows, placed under Layer and Head, above the lens buttons.
    void addRow(const QString& label, QWidget* field);
    void addRow(QWidget* row);
    // Rebuilds the layer list when the names differ; neither setter emits.
    void setLayers(const QStringList& names);
    void setSelection(int layer, int headCount, const HeadSelection& heads);
    QComboBox* layerCombo() const { return m_layer; }
    HeadCombo* headCombo() const { return m_head; }
    // The usual wiring: the layer and heads chosen set `doc`'s (setLayer, setFusion, setHead), the lens
    // buttons open `lenses`' views (showHeadStats, showNeuronView, pin).
    template <typename Document, typename Lenses> void bind(Document* doc, Lenses* lenses) {
        connect(this, &MapLensBox::layerChosen, doc, &Document::setLayer);
        connect(this, &MapLensBox::headsChosen, doc, [doc](HeadSelection heads) {
            doc->setFusion(heads.fusion);
            doc->setHead(heads.head);
        });
        connect(this, &MapLensBox::headStatsRequested, lenses, &Lenses::showHeadStats);
        connect(this, &MapLensBox::neuronRequested, lenses, &Lenses::showNeuronView);
        connect(this, &MapLensBox::pinRequested, lenses, [lenses] { lenses->pin(); });
    }

signals:
    void layerChosen(int layer);
    void headsChosen(attnlens::HeadSelection heads);
    void headStatsRequested();
    void neuronRequested();
    void pinRequested();

private:
    QFormLayout* m_form;
    QComboBox* m_layer;
    HeadCombo* m_head;
    int m_pageRows = 0;
};

// Children: "opacity" (QSlider, 0–100), "colorMap" (ColorMapCombo).
class MapDisplayBox : public QGroupBox {
    Q_OBJECT
public:
    MapDisplayBox(float opacity, ColorMap map, QWidget* parent);
    void addRow(QWidget* row); // the page's own, under the colours
    QSlider* opacitySlider() const { return m_opacity; }
    ColorMapCombo* colorMapCombo() const { return m_colorMap; }

signals:
    void opacityChanged(float opacity); // 0–1
    void colorMapChanged(attnlens::ColorMap map);

private:
    QFormLayout* m_form;
    QSlider* m_opacity;
    ColorMapCombo* m_colorMap;
};

} // namespace attnlens::ui
