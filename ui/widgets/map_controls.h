#pragma once
// The choices every map view offers, as one widget each so the pages say them the same way:
//   HeadCombo      "Mean of heads", "Max of heads", "Head 0" …   → HeadSelection (heads from 0)
//   ColorMapCombo  every colour map, its bar as the icon          → ColorMap
//   MapLensBox     the sidebar's "Map" box of the map pages (Vision, Diffusion): layer, heads, the page's own
//                  rows, then the lenses on the map shown (head statistics, neuron view, pin as A)
//   MapDisplayBox  the sidebar's "Display" box: opacity and colours of the map over the picture, the page's
//   rows
// Setters never emit; a user's choice emits the *Changed / *Chosen / *Requested signal. Object names of the
// combos are the caller's; those inside the boxes are fixed (below), so tests and the harness find them.

#include "core/analysis/attention_maps.h"
#include "core/export/colormap.h"

#include <QComboBox>
#include <QGroupBox>

class QFormLayout;
class QSlider;

namespace attnlens::ui {

class HeadCombo : public QComboBox {
    Q_OBJECT
public:
    explicit HeadCombo(QWidget* parent = nullptr);
    void
    setHeadCount(int heads); // rebuilds the list when the count changes, keeping the selection if it fits
    int headCount() const { return count() - 2; }
    void setSelection(const HeadSelection& heads);
    HeadSelection selection() const;

signals:
    void selectionChanged(attnlens::HeadSelection heads);
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
