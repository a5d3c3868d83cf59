// InferenceWorker: results arrive on the GUI thread, errors become one message, cancel drops results,
// and the GUI thread is never blocked while a job runs; a streaming job's partial results arrive on the GUI
// thread in order before its result, none after Cancel; stop() joins the thread and nothing arrives after it.

#include "core/util/error.h"
#include "support/waits.h"
#include "ui/shell/inference_worker.h"

#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using attnlens::Callbacks;
using attnlens::ui::InferenceWorker;

class TestInferenceWorker : public QObject {
    Q_OBJECT
private slots:
    void deliversOnGuiThread();
    void reportsErrors();
    void cancelStopsJob();
    void progressIsForwarded();
    void streamsPartialsInOrderBeforeTheResult();
    void cancelDropsQueuedPartials();
    void stopJoinsAndDeliversNothing();
};

void TestInferenceWorker::deliversOnGuiThread() {
    InferenceWorker worker;
    QThread* workThread = nullptr;
    QThread* doneThread = nullptr;
    int value = 0;
    QSignalSpy finished(&worker, &InferenceWorker::finished);
    worker.run<int>(
        "sum",
        [&](const Callbacks&) {
            workThread = QThread::currentThread();
            return 42;
        },
        [&](int v) {
            doneThread = QThread::currentThread();
            value = v;
        });
    QCOMPARE(worker.pendingJobs(), 1);
    WAIT_UNTIL(finished.count() > 0);
    QCOMPARE(value, 42);
    QCOMPARE(worker.pendingJobs(), 0); // counted out before finished(), after the result was delivered
    QCOMPARE(doneThread, QThread::currentThread());
    QVERIFY(workThread != QThread::currentThread());
}

void TestInferenceWorker::reportsErrors() {
    InferenceWorker worker;
    QSignalSpy failed(&worker, &InferenceWorker::failed);
    bool delivered = false;
    worker.run<int>(
        "load", [](const Callbacks&) -> int { throw attnlens::Error("'x.safetensors': truncated"); },
        [&](int) { delivered = true; });
    WAIT_UNTIL(failed.count() > 0);
    QCOMPARE(worker.pendingJobs(), 0);
    QCOMPARE(failed.at(0).at(1).toString(), QString("'x.safetensors': truncated"));
    QVERIFY(!delivered);
}

void TestInferenceWorker::cancelStopsJob() {
    InferenceWorker worker;
    QSignalSpy cancelled(&worker, &InferenceWorker::cancelled);
    // started() is emitted on the worker thread: counted here on the GUI thread (a queued connection). A
    // QSignalSpy would record it on the worker thread while the test reads it (TSan: a data race).
    int started = 0;
    QObject::connect(&worker, &InferenceWorker::started, &worker, [&] { ++started; });
    bool delivered = false;
    worker.run<int>(
        "long",
        [](const Callbacks& cb) {
            for (int i = 0; i < 10000; ++i) {
                cb.checkCancel();
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            return 1;
        },
        [&](int) { delivered = true; });
    worker.run<int>(
        "queued", [](const Callbacks&) { return 2; }, [&](int) { delivered = true; });
    WAIT_UNTIL(started >= 1);
    // The GUI thread stays responsive while the job runs: the event loop spins here.
    QElapsedTimer t;
    t.start();
    QTest::qWait(50);
    QVERIFY(worker.isBusy());
    QCOMPARE(worker.pendingJobs(), 2);
    worker.cancel();
    QCOMPARE(worker.pendingJobs(), 1);        // the queued job is dropped at once; the running one stops soon
    WAIT_UNTIL_COMPARE(cancelled.count(), 2); // the running and the queued job
    QCOMPARE(worker.pendingJobs(), 0);
    QTest::qWait(50);
    QVERIFY(!delivered);
    QVERIFY(!worker.isBusy());
}

void TestInferenceWorker::progressIsForwarded() {
    InferenceWorker worker;
    std::vector<std::pair<double, QString>> progress; // received on the GUI thread, as the pages do
    QObject::connect(
        &worker, &InferenceWorker::progress, &worker,
        [&](int, double fraction, const QString& stage) { progress.emplace_back(fraction, stage); });
    QSignalSpy finished(&worker, &InferenceWorker::finished);
    worker.run<int>(
        "steps",
        [](const Callbacks& cb) {
            for (int i = 1; i <= 4; ++i)
                cb.report(i / 4.0, "step " + std::to_string(i));
            return 0;
        },
        [](int) {});
    WAIT_UNTIL(finished.count() > 0);
    QCOMPARE(progress.size(), size_t(4)); // all before finished(): events to one object arrive in order
    QCOMPARE(progress.back().first, 1.0);
    QCOMPARE(progress.back().second, QString("step 4"));
}

void TestInferenceWorker::streamsPartialsInOrderBeforeTheResult() {
    InferenceWorker worker;
    QSignalSpy finished(&worker, &InferenceWorker::finished);
    std::vector<int> seen;
    std::vector<QThread*> threads;
    int result = 0;
    worker.stream<int, int>(
        "count",
        [](const Callbacks&, const std::function<void(int)>& post) {
            for (int i = 0; i < 100; ++i)
                post(i);
            return 100;
        },
        [&](int i) {
            seen.push_back(i);
            threads.push_back(QThread::currentThread());
        },
        [&](int r) {
            result = r + static_cast<int>(seen.size());
        }); // every partial is in when the result comes
    WAIT_UNTIL(finished.count() == 1);
    QCOMPARE(result, 200);
    QCOMPARE(seen.size(), size_t(100));
    for (int i = 0; i < 100; ++i)
        QCOMPARE(seen[size_t(i)], i);
    for (QThread* t : threads)
        QCOMPARE(t, QThread::currentThread());
}

void TestInferenceWorker::cancelDropsQueuedPartials() {
    InferenceWorker worker;
    QSignalSpy cancelled(&worker, &InferenceWorker::cancelled);
    std::atomic<int> posted{0};
    int seen = 0;
    worker.stream<int, int>(
        "endless",
        [&posted](const Callbacks& cb, const std::function<void(int)>& post) {
            for (;;) {
                cb.checkCancel();
                post(posted++);
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            return 0;
        },
        [&seen](int) { ++seen; }, [](int) {});
    // Let partials pile up unseen (the GUI thread is blocked), then cancel before the event loop runs again.
    while (posted.load() < 20)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    worker.cancel();
    WAIT_UNTIL(cancelled.count() == 1);
    QCOMPARE(seen, 0); // those already queued when Cancel was pressed never reach the page
}

void TestInferenceWorker::stopJoinsAndDeliversNothing() {
    auto worker = std::make_unique<InferenceWorker>();
    std::atomic<bool> running{false};
    bool delivered = false;
    worker->stream<int, int>(
        "long",
        [&running](const Callbacks& cb, const std::function<void(int)>& post) {
            running = true;
            for (int i = 0;; ++i) {
                post(i);
                cb.checkCancel();
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            return 0;
        },
        [&delivered](int) { delivered = true; }, [&delivered](int) { delivered = true; });
    while (!running)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    worker->stop(); // what a page's destructor does first
    QVERIFY(!worker->isBusy());
    QCOMPARE(worker->run<int>(
                 "after", [](const Callbacks&) { return 1; }, [&delivered](int) { delivered = true; }),
             0);
    worker.reset(); // takes the queued partials and outcome with it
    QTest::qWait(20);
    QVERIFY(!delivered);
}

QTEST_MAIN(TestInferenceWorker)
#include "test_inference_worker.moc"
