#include "ui/text/map_lane.h"

#include <QMetaObject>

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

MapLane::MapLane(QObject* parent) : QObject(parent) {
    m_pool.setMaxThreadCount(1);
}

MapLane::~MapLane() {
    m_pool.clear();
    m_pool.waitForDone();
}

void MapLane::request(Request request, std::function<void(Result)> done) {
    const int generation = ++m_generation;
    m_pending = true;
    m_pool.clear(); // a request still waiting is replaced
    m_pool.start([this, generation, request = std::move(request), done = std::move(done)] {
        auto result = std::make_shared<Result>(make(request));
        QMetaObject::invokeMethod(
            this,
            [this, generation, result, done] {
                if (generation != m_generation) return; // something newer was asked
                m_pending = false;
                done(std::move(*result));
            },
            Qt::QueuedConnection);
    });
}

void MapLane::cancel() {
    ++m_generation;
    m_pending = false;
    m_pool.clear();
}

} // namespace attnlens::ui
