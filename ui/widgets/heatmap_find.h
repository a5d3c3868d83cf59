#pragma once
// HeatmapFind: the "find a token" bar of a HeatmapView (Ctrl+F, or "Find token…" in its menu). At 4 096
// tokens a label is 0.2 px high in the fitted view; typing part of a token lists every row (then column)
// whose label contains it, and Enter / Shift+Enter step through them: the view zooms until labels are
// legible, centres the hit and selects it as a click on its label would (rowSelected / columnSelected).
//
//   heatmapFindLabels(scene, "cat")  → the hits, pure (no widget), in order: rows, then columns when the
//                                      column labels are not the row labels (Translate: source words).
//
// Matching ignores case, the word markers ("▁", "Ġ", and the "␣" the text views draw) and surrounding spaces,
// so "cat" finds "▁Cat", "Ġcat" and "␣cat". Escape or the close button hides the bar and gives the focus back
// to the view. Children: "findText" (QLineEdit), "findCount" (QLabel: "3 of 17", "no match").

#include "ui/render/heatmap_scene.h"

#include <QFrame>

#include <vector>

class QLabel;
class QLineEdit;

namespace attnlens::ui {

class HeatmapView;

struct HeatmapHit {
    bool row = true; // else a column
    int index = -1;
    bool operator==(const HeatmapHit&) const = default;
};

std::vector<HeatmapHit> heatmapFindLabels(const HeatmapScene& scene, const QString& text);

class HeatmapFind : public QFrame {
    Q_OBJECT
public:
    explicit HeatmapFind(HeatmapView* view);
    // Shows the bar (top right of the view), focused, its text selected.
    void open();
    // Types `text` into the bar and shows its first hit (the GUI harness's --find). False when nothing
    // matches.
    bool find(const QString& text);
    // Next (or previous) hit after the one shown last; wraps. Returns false when nothing matches.
    bool step(bool forward = true);
    const std::vector<HeatmapHit>& hits() const { return m_hits; }
    int current() const { return m_current; } // index into hits(), -1 = none shown yet
    void place();                             // follows the view's size

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void search();
    void close();

    HeatmapView* m_view;
    QLineEdit* m_text;
    QLabel* m_count;
    std::vector<HeatmapHit> m_hits;
    int m_current = -1;
};

} // namespace attnlens::ui
