#include "text_bench.h"

#include "gui_harness.h"
#include "stall_meter.h"
#include "ui/shell/main_window.h"
#include "ui/text/text_document.h"
#include "ui/text/text_kv_whatif.h"
#include "ui/text/text_logit_lens.h"
#include "ui/text/text_page.h"
#include "ui/widgets/heatmap_view.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QTabWidget>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

// The synchronous part: every step ends with the matrix repainted, as a user sees it.
void benchShownRun(attnlens::ui::TextPage* page) {
    attnlens::ui::TextDocument* doc = page->document();
    attnlens::ui::HeatmapView* view = page->matrixView();
    const int layers = doc->model()->layers(), heads = doc->model()->heads();
    QElapsedTimer t, piece;
    std::vector<double> switches, busy, zoom, pan, hover;
    // The first map arrives, and the user looks at it for a second before switching (meanwhile the map lane
    // maps the heap for the next maps: MapLane, reserveHeap).
    QElapsedTimer look;
    look.start();
    while (page->matrixPending()) {
        QCoreApplication::processEvents();
        QThread::usleep(200);
    }
    std::printf("%-44s %8.2f ms\n", "Text: result -> its map shown", look.nsecsElapsed() / 1e6);
    look.start();
    while (look.elapsed() < 1000) {
        QCoreApplication::processEvents();
        QThread::usleep(1000);
    }
    for (int k = 1; k <= 10; ++k) { // another head, then another layer, …: a map not made before each time
        t.start();
        piece.start();
        if (k % 2)
            doc->setHead((std::max(0, doc->head()) + 5) % heads);
        else
            doc->setLayer((doc->layer() + 7) % layers);
        double longest = piece.nsecsElapsed() / 1e6;
        while (page->matrixPending()) { // a long text's map is made off the GUI thread: what arrives is timed
            piece.start();
            QCoreApplication::processEvents();
            longest = std::max(longest, piece.nsecsElapsed() / 1e6);
            QThread::usleep(200);
        }
        piece.start();
        view->viewport()->repaint();
        switches.push_back(t.nsecsElapsed() / 1e6);
        busy.push_back(std::max(longest, piece.nsecsElapsed() / 1e6));
    }
    for (int cell : {-8, -4, -2, 1, 2, 4, 8, 16, 8, 4, 2, 1, -2, -4, -8}) { // −n: n cells per pixel
        t.start();
        if (cell < 0)
            view->setCellsPerPixel(-cell);
        else
            view->setCellSize(cell);
        view->viewport()->repaint();
        zoom.push_back(t.nsecsElapsed() / 1e6);
    }
    view->setCellSize(8);
    for (int i = 0; i < 40; ++i) {
        t.start();
        view->horizontalScrollBar()->setValue(view->horizontalScrollBar()->maximum() * i / 39);
        view->verticalScrollBar()->setValue(view->verticalScrollBar()->maximum() * i / 39);
        view->viewport()->repaint();
        pan.push_back(t.nsecsElapsed() / 1e6);
    }
    const int rows = doc->visibleTokens();
    for (int i = 0; i < 40; ++i) {
        t.start();
        doc->setHoveredToken(rows * i / 40);
        view->viewport()->repaint();
        hover.push_back(t.nsecsElapsed() / 1e6);
    }
    std::printf("Text: %d tokens, %d layers x %d heads, attention %s\n", rows, layers, heads,
                doc->onDemand() ? "kept on demand" : "captured");
    printTimes("Text: switch (layer, head) -> repainted", switches);
    printTimes("Text: switch: longest GUI-thread piece", busy);
    printTimes("Text: zoom step -> repainted", zoom);
    printTimes("Text: pan step (8 px cells) -> repainted", pan);
    printTimes("Text: hover a row -> repainted", hover);
}

// Waits (the events running) until `pending` is false; the milliseconds it took.
template <typename Pending> double waitFor(Pending pending) {
    QElapsedTimer t;
    t.start();
    do {
        QCoreApplication::processEvents();
        QThread::usleep(200);
    } while (pending());
    return t.nsecsElapsed() / 1e6;
}

// The lenses past the weights (issue 42) on the run shown: the Logit lens tab (its map: the last 24
// positions), Contributions at the last position, then the KV cache tab — its baseline (64 greedy steps after
// the prompt) with a first policy, then another policy (the re-run alone).
void benchLenses(attnlens::ui::TextPage* page) {
    using namespace attnlens::ui;
    if (!page->document()->model()->decoderOnly()) return;
    TextLogitLens* lens = page->logitLens();
    page->views()->setCurrentWidget(lens);
    std::printf("%-44s %8.2f ms\n", "Lens tab shown -> the last position's lens",
                waitFor([&] { return lens->map()->rows() == 0; }));
    std::printf("%-44s %8.2f ms\n", "  then the 24 positions' lens",
                waitFor([&] { return lens->pending(); }));
    lens->setMode(TextLogitLens::Mode::Contributions);
    std::printf("%-44s %8.2f ms\n", "Contributions at the last position",
                waitFor([&] { return lens->pending(); }));
    TextKvWhatIf* kv = page->kvWhatIf();
    kv->setSteps(64);
    kv->setPolicy(QStringLiteral("streaming:4,64"));
    page->views()->setCurrentWidget(kv);
    std::printf("%-44s %8.2f ms\n", "KV tab: baseline 64 steps + streaming:4,64",
                waitFor([&] { return kv->pending(); }));
    if (const attnlens::KvRerun* r = kv->shown())
        std::printf("%-44s %8.2f ms (%zu steps)\n", "  of which the re-run", r->seconds * 1e3,
                    r->steps.size());
    kv->setPolicy(QStringLiteral("h2o:256,32"));
    std::printf("%-44s %8.2f ms\n", "KV tab: h2o:256,32 (re-run only)",
                waitFor([&] { return kv->pending(); }));
    if (const attnlens::KvRerun* r = kv->shown())
        std::printf("%-44s %8.2f ms (%d of %zu steps changed)\n", "  of which the re-run", r->seconds * 1e3,
                    r->changed(), r->steps.size());
}

// Cancel while generating: the run started again (the prompt, then 256 tokens) and Cancel pressed 100 ms,
// 400 ms and 1.5 s in (in the prompt, later in it, or generating); the time until the page has no job left —
// the worker idle and the cancellation signalled (issue 45: within 200 ms at any thread count).
void benchCancel(attnlens::ui::TextPage* page) {
    if (!page->document()->model()->decoderOnly()) return;
    page->setNewTokens(256);
    for (int delay : {100, 400, 1500}) {
        page->runText();
        QElapsedTimer t;
        t.start();
        waitFor([&] { return t.elapsed() < delay; });
        if (!page->isBusy()) { // a fast machine: nothing left to cancel
            std::printf("Cancel %d ms into a run: the run had finished\n", delay);
            continue;
        }
        page->cancel();
        const double ms = waitFor([&] { return page->isBusy(); });
        std::printf("%-44s %8.2f ms\n",
                    qPrintable(QStringLiteral("Cancel %1 ms into a run -> no job left").arg(delay)), ms);
    }
}

} // namespace

void runTextUiBench(attnlens::ui::MainWindow& window, const GuiPages& pages, const QString& input,
                    std::function<void(int)> done) {
    auto* meter = new StallMeter(&window);
    meter->setPhase(QStringLiteral("loading + running the text (Text)"));
    attnlens::ui::TextPage* page = pages.text;
    page->setNewTokens(0);
    if (!input.isEmpty()) page->setText(input);
    auto clock = std::make_shared<QElapsedTimer>();
    QObject::connect(
        page, &attnlens::ui::WorkspacePage::resultReady, meter,
        [page, meter, clock, done] {
            std::printf("%-44s %8.2f ms\n", "Text: load + run -> result", clock->nsecsElapsed() / 1e6);
            // The rest runs after this delivery has returned (the worker counts the run pending until then).
            QTimer::singleShot(0, meter, [page, meter, done] {
                meter->pause();
                benchShownRun(page);
                benchLenses(page);
                benchCancel(page);
                meter->resume();
                meter->report();
                done(0);
            });
        },
        Qt::SingleShotConnection);
    QObject::connect(page, &attnlens::ui::WorkspacePage::failed, meter, [done](const QString& m) {
        std::fprintf(stderr, "error: %s\n", qPrintable(m));
        done(2);
    });
    clock->start();
    window.setCurrentPage(static_cast<int>(GuiPage::Text)); // showing the page starts its first run
    window.show();
}
