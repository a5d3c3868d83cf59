#include "ui/text/map_lane.h"

#include <exception>

namespace attnlens::ui {

namespace {

MapLane::Result make(const MapLane::Request& r) {
    MapLane::Result out;
    try {
        TextDocument::Shown shown = TextDocument::shape(
            TextDocument::makeMap(*r.run, r.folder->heads(), r.show.visible, r.layer, r.key), *r.run,
            *r.folder, r.show);
        ScaledMap scaled = scaleMap(std::move(shown.values), r.scale);
        HeatmapScene& s = out.scene;
        s.values = std::move(scaled.values);
        s.mask = std::move(scaled.keep);
        s.rowLabels = std::move(shown.rows);
        s.columnLabels = std::move(shown.columns);
        s.lo = scaled.lo;
        s.hi = scaled.hi;
        s.scale = scaled.colorScale;
        s.sinks = std::move(scaled.sinks);
        s.colorMap = r.colorMap;
        s.updateImage();
    } catch (const std::exception& e) {
        out = MapLane::Result{{}, e.what()};
    }
    return out;
}

} // namespace

void MapLane::request(Request request, std::function<void(Result)> done) {
    m_lane.request<Result>([request = std::move(request)] { return make(request); }, std::move(done));
}

} // namespace attnlens::ui
