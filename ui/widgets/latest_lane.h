#pragma once
// LatestLane: work made off the GUI thread on a lane of its own (one thread), so that the worker's long jobs
// never hold up what a view is waiting for (issue 40: a long text's map, its Lines). The latest request
// wins: one piece of work runs at a time, a newer request replaces one still waiting, and a result reaches
// `done` (on the GUI thread) only if nothing was requested after it.
//
//   lane->request<Links>([run] { return makeLinks(*run); },          // any thread; must not throw
//                        [this](Links l) { m_links = std::move(l); update(); });
//
// Threading: request(), cancel() and `done` on the GUI thread; the destructor waits for the work running.

#include <QMetaObject>
#include <QObject>
#include <QThreadPool>

#include <functional>
#include <memory>

namespace attnlens::ui {

class LatestLane : public QObject {
public:
    explicit LatestLane(QObject* parent = nullptr) : QObject(parent) { m_pool.setMaxThreadCount(1); }
    ~LatestLane() override {
        m_pool.clear();
        m_pool.waitForDone();
    }

    template <class Result> void request(std::function<Result()> work, std::function<void(Result)> done) {
        const int generation = ++m_generation;
        m_pending = true;
        m_pool.clear(); // a request still waiting is replaced
        m_pool.start([this, generation, work = std::move(work), done = std::move(done)] {
            auto result = std::make_shared<Result>(work());
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
    // Work for a quiet moment (no result, not pending): it runs after what was asked, and a request made
    // before it started replaces it.
    void whenIdle(std::function<void()> work) { m_pool.start(std::move(work)); }
    // A request not answered yet.
    bool pending() const { return m_pending; }
    // Drops whatever was asked: no result arrives for it.
    void cancel() {
        ++m_generation;
        m_pending = false;
        m_pool.clear();
    }

private:
    QThreadPool m_pool;
    int m_generation = 0;
    bool m_pending = false;
};

} // namespace attnlens::ui
