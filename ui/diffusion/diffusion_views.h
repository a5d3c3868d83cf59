#pragma once
// DiffusionViews: the centre of the Diffusion page — the step's x_t, ε̂ and x̂0 (click x_t or x̂0 to draw the
// map over it), the chosen layer's map over the image, large, with its colour bar (click a pixel or drag a
// region to make it the query), every attention layer laid out as the U (click one to show it) and, below,
// the query across evenly spaced steps (click one to go there). Reads and sets the page's DiffusionDocument.
//
// Object names: "stepImages", "viewTitle", "overlayView", "colorBar", "uView", "stepStrip"; the splitter
// "diffusionSplitter" (sizes remembered by the window).

#include <QImage>
#include <QWidget>

class QLabel;

namespace attnlens::ui {

class ColorBar;
class DiffusionDocument;
class MapGridView;
class PatchImageView;
class UShapeView;

class DiffusionViews : public QWidget {
    Q_OBJECT
public:
    DiffusionViews(DiffusionDocument* doc, QWidget* parent);

    void refreshStepImages(); // the step shown changed
    void refreshMaps();       // the maps, the U and the strip from the document

    // The views as PNG pictures (tiles as on screen); null when there is nothing to draw.
    QImage uViewImage() const;
    QImage stripImage() const;

    PatchImageView* overlayView() const { return m_overlay; }
    UShapeView* uView() const { return m_uView; }
    MapGridView* stepStrip() const { return m_strip; }
    MapGridView* stepImages() const { return m_stepImages; }
    ColorBar* colorBar() const { return m_colorBar; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override; // keeps the colour bar as tall as the picture

private:
    QWidget* buildStepImages(QWidget* top);
    QLayout* buildLargeView(QWidget* top);
    QLayout* buildUView(QWidget* top);
    QWidget* buildStrip(QWidget* parent);
    void syncColorBarSpan();

    DiffusionDocument* m_doc;
    MapGridView* m_stepImages = nullptr;
    QLabel* m_viewTitle = nullptr;
    PatchImageView* m_overlay = nullptr;
    ColorBar* m_colorBar = nullptr;
    QLabel* m_uTitle = nullptr;
    UShapeView* m_uView = nullptr;
    QLabel* m_stripTitle = nullptr;
    MapGridView* m_strip = nullptr;
};

} // namespace attnlens::ui
