#pragma once
// MapDifferenceWindow: difference maps of one grid (issue 22, M12) in a window beside a page — a map pinned
// as A, the page's map now as B, and A − B (DifferenceView::setGridDifference). The Vision page pins patch
// maps, the Diffusion page a layer's map at a step; each calls setCurrent() whenever its map changes.
//
// Object names for tests: "differenceDialog", "pinAgain", "unpinMap".

#include "core/export/colormap.h"
#include "core/tensor/tensor.h"

#include <QDialog>

#include <optional>

namespace attnlens::ui {

class DifferenceView;

class MapDifferenceWindow : public QDialog {
    Q_OBJECT
public:
    MapDifferenceWindow(const QString& title, QWidget* parent);

    void pin(const RowMatrix& map, const QString& description);
    void unpin();
    bool hasPin() const { return m_pin.has_value(); }
    const RowMatrix& pinnedMap() const { return m_pin->map; } // when hasPin()
    const QString& pinnedDescription() const { return m_pin->description; }
    // The page's map now (empty: none yet) and what it is.
    void setCurrent(const RowMatrix& map, const QString& description, ColorMap colorMap);
    DifferenceView* view() const { return m_view; }

signals:
    void pinRequested(); // "Pin the map now as A": the page pins its current map

private:
    struct Pin {
        RowMatrix map;
        QString description;
    };
    std::optional<Pin> m_pin;
    RowMatrix m_current;
    QString m_currentDescription;
    ColorMap m_colorMap = ColorMap::Viridis;
    DifferenceView* m_view;
    void refresh();
};

} // namespace attnlens::ui
