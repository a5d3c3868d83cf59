#include "ui/text/map_lane.h"

#include <QMetaObject>

#include <exception>

namespace attnlens::ui {

namespace {

MapLane::Result make(const MapLane::Request& r) {
    MapLane::Result out;
    out.request = r;
    try {
        out.tokens = TextDocument::makeMap(*r.run, r.folder->heads(), r.show.visible, r.layer, r.key);
        TextDocument::Shown shown = TextDocument::shape(out.tokens, *r.run, *r.folder, r.show);
        out.rows = std::move(shown.rows);
        out.columns = std::move(shown.columns);
        out.scaled = scaleMap(std::move(shown.values), r.scale);
    } catch (const std::exception& e) {
        out = MapLane::Result{r, {}, {}, {}, {}, e.what()};
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
