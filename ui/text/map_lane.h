#pragma once
// MapLane: the Text page's matrix of a long text (its attention kept on demand, issue 40) made off the GUI
// thread, on a lane of its own so that the worker's long jobs (every head's statistics, the grid's tiles)
// never hold up a head switch: the head's map (TextDocument::makeMap), the shown form (words merged,
// special tokens hidden: TextDocument::shape), the sink-aware scale (scaleMap) and the colours
// (HeatmapScene::updateImage), ready for HeatmapView::setColouredMatrix. The view keeps showing the previous
// map meanwhile.
//
// The latest request wins (a LatestLane): one map is made at a time, a newer request replaces one still
// waiting, and a result reaches `done` (on the GUI thread) only if nothing was requested after it.
//
//   lane->request({run, folder, doc->showOptions(), layer, key, scale, view->colorMap()},
//                 [this](MapLane::Result r) { view->setColouredMatrix(std::move(r.scene)); });
//
// Threading: request() and done on the GUI thread; the destructor waits for the map being made.

#include "core/analysis/map_scale.h"
#include "ui/render/heatmap_scene.h"
#include "ui/text/text_document.h"
#include "ui/widgets/latest_lane.h"

#include <QObject>

#include <functional>
#include <memory>
#include <string>

namespace attnlens::ui {

class MapLane : public QObject {
    Q_OBJECT
public:
    struct Request {
        std::shared_ptr<const TextRun> run;
        std::shared_ptr<const TextFolder> folder;
        TextDocument::ShowOptions show;
        int layer = 0, key = 0; // key: a head ≥ 0 or −1 − a fusion (TextDocument::mapKey)
        MapScale scale;
        ColorMap colorMap = ColorMap::Viridis;
    };
    struct Result {
        HeatmapScene scene; // values as shown, labels, mask, range, scale, image and overview
        std::string error;  // not empty: what went wrong (nothing else is set)
    };

    explicit MapLane(QObject* parent = nullptr) : QObject(parent) {}

    void request(Request request, std::function<void(Result)> done);
    // A request not answered yet (the view shows an older map).
    bool pending() const { return m_lane.pending(); }
    // Drops whatever was asked: no result arrives for it.
    void cancel() { m_lane.cancel(); }

private:
    LatestLane m_lane;
    std::size_t m_reserved = 0; // the heap reserved for maps so far (reserveHeap), bytes
};

} // namespace attnlens::ui
