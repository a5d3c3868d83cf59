#include "ui/text/map_lane.h"

#include "core/util/huge_pages.h"

#include <exception>

namespace attnlens::ui {

namespace {

MapLane::Result make(const MapLane::Request& r) {
    MapLane::Result out;
    try {
        TextDocument::Shown shown =
            TextDocument::shape(TextDocument::makeMap(*r.run, r.folder->heads(), r.show.visible, r.layer,
                                                      r.key, r.show.valueWeighted),
                                *r.run, *r.folder, r.show);
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
    // A long text's first map: the heap for the next few is mapped while the user looks at it (reserveHeap),
    // so that the first switch does not pay for it.
    const auto bytes =
        static_cast<std::size_t>(request.show.visible) * request.show.visible * sizeof(float) * 3;
    m_lane.request<Result>([request = std::move(request)] { return make(request); },
                           [this, bytes, done = std::move(done)](Result r) {
                               done(std::move(r));
                               if (bytes <= m_reserved) return;
                               m_reserved = bytes;
                               m_lane.whenIdle([bytes] { reserveHeap(bytes); });
                           });
}

} // namespace attnlens::ui
