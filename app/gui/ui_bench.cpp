#include "ui_bench.h"

#include "core/io/model_folder.h"
#include "gui_harness.h"
#include "stall_meter.h"
#include "translate_driver.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/shell/main_window.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/heatmap_view.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QStringList>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

// Every patch of the picture made the query in turn, as a click does, each followed by a synchronous
// repaint of everything that shows it: the overlay, the raw map, the heads grid and the layers strip.
void benchPatchClicks(attnlens::ui::VisionPage* page) {
    auto* doc = page->document();
    const int patches = doc->gridRows() * doc->gridCols();
    std::vector<double> times, selectTimes;
    QElapsedTimer t;
    for (int p = 0; p < patches; ++p) {
        t.start();
        doc->selectPatches({p}); // the maps are computed and the overlays rendered here
        selectTimes.push_back(t.nsecsElapsed() / 1e6);
        for (QWidget* w :
             {static_cast<QWidget*>(page->imageView()), static_cast<QWidget*>(page->rawMapView()),
              static_cast<QWidget*>(page->headsGrid()), static_cast<QWidget*>(page->layersStrip())})
            w->repaint();
        times.push_back(t.nsecsElapsed() / 1e6);
    }
    printTimes("Vision: patch click -> map repainted", times);
    printTimes("  of which maps computed + rendered", selectTimes);
}

// A 512 x 512 matrix with a label on every row and column (a 512-token attention map) in a 900 x 700
// view: zoom steps from fit to 24 px cells, then panning across it at 12 px cells, each followed by a
// synchronous repaint — the frame time a user sees.
void benchLargeMatrix() {
    const int n = 512;
    attnlens::RowMatrix values(n, n);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            values(r, c) = static_cast<float>((r * 31 + c * 17) % 97) / 97.0f;
    QStringList labels;
    for (int i = 0; i < n; ++i)
        labels << QStringLiteral("tok%1").arg(i);
    attnlens::ui::HeatmapView view;
    view.resize(900, 700);
    view.setMatrix(values, labels, labels);
    view.show();
    for (int i = 0; i < 5; ++i)
        QCoreApplication::processEvents(); // exposed: repaint() paints now
    QElapsedTimer t;
    std::vector<double> zoom, pan;
    for (int cell = 2; cell <= 24; cell += 2) {
        t.start();
        view.setCellSize(cell);
        view.viewport()->repaint();
        zoom.push_back(t.nsecsElapsed() / 1e6);
    }
    view.setCellSize(12);
    for (int i = 0; i < 60; ++i) {
        t.start();
        view.horizontalScrollBar()->setValue(view.horizontalScrollBar()->maximum() * i / 59);
        view.verticalScrollBar()->setValue(view.verticalScrollBar()->maximum() * i / 59);
        view.viewport()->repaint();
        pan.push_back(t.nsecsElapsed() / 1e6);
    }
    printTimes("512x512 matrix: zoom step -> repainted", zoom);
    printTimes("512x512 matrix: pan step -> repainted", pan);
}

void benchVision(attnlens::ui::MainWindow& window, const GuiPages& pages, StallMeter* meter,
                 std::function<void(int)> done) {
    meter->setPhase(QStringLiteral("analysing a picture (Vision)"));
    window.setCurrentPage(static_cast<int>(GuiPage::Vision));
    auto clock = std::make_shared<QElapsedTimer>();
    QObject::connect(
        pages.vision, &attnlens::ui::VisionPage::resultReady, meter,
        [pages, meter, clock, done] {
            std::printf("%-40s %8.2f ms\n", "Vision: open a picture -> shown", clock->nsecsElapsed() / 1e6);
            meter->pause();
            benchPatchClicks(pages.vision);
            benchLargeMatrix();
            meter->resume();
            meter->report();
            done(0);
        },
        Qt::SingleShotConnection);
    clock->start();
    pages.vision->openImage(QString::fromStdString(
        (attnlens::resourcesDir() / "samples" / "fashion-mnist" / "sneaker_2.png").string()));
}

void benchDiffusion(attnlens::ui::MainWindow& window, const GuiPages& pages, StallMeter* meter,
                    std::function<void(int)> done) {
    meter->setPhase(QStringLiteral("loading + generating (Diffusion)"));
    auto clock = std::make_shared<QElapsedTimer>();
    QObject::connect(
        pages.diffusion, &attnlens::ui::DiffusionPage::runFinished, meter,
        [&window, pages, meter, clock, done] {
            std::printf("%-40s %8.2f ms\n", "Diffusion: first run, loaded + shown",
                        clock->nsecsElapsed() / 1e6);
            benchVision(window, pages, meter, done);
        },
        Qt::SingleShotConnection);
    QObject::connect(pages.diffusion, &attnlens::ui::DiffusionPage::failed, meter, [done](const QString& m) {
        std::fprintf(stderr, "error: %s\n", qPrintable(m));
        done(2);
    });
    clock->start();
    window.setCurrentPage(static_cast<int>(GuiPage::Diffusion)); // showing the page starts its first run
}

} // namespace

void runUiBench(attnlens::ui::MainWindow& window, const GuiPages& pages, const QString& input, int repeats,
                std::function<void(int)> done) {
    auto* meter = new StallMeter(&window);
    meter->setPhase(QStringLiteral("loading + translating"));
    window.setCurrentPage(static_cast<int>(GuiPage::Translate));
    runTranslateBench(pages.translate, input, repeats, meter, [&window, pages, meter, done](int status) {
        if (status != 0) return done(status);
        benchDiffusion(window, pages, meter, done);
    });
}
