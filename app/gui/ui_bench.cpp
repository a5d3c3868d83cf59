#include "ui_bench.h"

#include "gui_harness.h"
#include "stall_meter.h"
#include "translate_driver.h"

#include "core/io/model_folder.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/shell/main_window.h"
#include "ui/vision/vision_page.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/patch_image_view.h"
#include "ui/vision/map_grid_view.h"
#include "ui/widgets/heatmap_view.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <vector>
#include <memory>

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

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
        for (QWidget* w : {static_cast<QWidget*>(page->imageView()), static_cast<QWidget*>(page->rawMapView()),
                           static_cast<QWidget*>(page->headsGrid()), static_cast<QWidget*>(page->layersStrip())})
            w->repaint();
        times.push_back(t.nsecsElapsed() / 1e6);
    }
    if (times.empty()) return;
    const auto report = [](const char* what, const std::vector<double>& v) {
        std::printf("%-40s median %8.2f ms   min %8.2f   max %8.2f   (n=%zu)\n", what, median(v),
                    *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()), v.size());
    };
    report("Vision: patch click -> map repainted", times);
    report("  of which maps computed + rendered", selectTimes);
}

void benchVision(attnlens::ui::MainWindow& window, const GuiPages& pages, StallMeter* meter, std::function<void(int)> done) {
    meter->setPhase(QStringLiteral("analysing a picture (Vision)"));
    window.setCurrentPage(static_cast<int>(GuiPage::Vision));
    auto clock = std::make_shared<QElapsedTimer>();
    QObject::connect(
        pages.vision, &attnlens::ui::VisionPage::imageShown, meter,
        [pages, meter, clock, done] {
            std::printf("%-40s %8.2f ms\n", "Vision: open a picture -> shown", clock->nsecsElapsed() / 1e6);
            meter->pause();
            benchPatchClicks(pages.vision);
            meter->resume();
            meter->report();
            done(0);
        },
        Qt::SingleShotConnection);
    clock->start();
    pages.vision->openImage(QString::fromStdString((attnlens::resourcesDir() / "samples" / "fashion-mnist" / "sneaker_2.png").string()));
}

void benchDiffusion(attnlens::ui::MainWindow& window, const GuiPages& pages, StallMeter* meter, std::function<void(int)> done) {
    meter->setPhase(QStringLiteral("loading + generating (Diffusion)"));
    auto clock = std::make_shared<QElapsedTimer>();
    QObject::connect(
        pages.diffusion, &attnlens::ui::DiffusionPage::runFinished, meter,
        [&window, pages, meter, clock, done] {
            std::printf("%-40s %8.2f ms\n", "Diffusion: first run, loaded + shown", clock->nsecsElapsed() / 1e6);
            benchVision(window, pages, meter, done);
        },
        Qt::SingleShotConnection);
    QObject::connect(pages.diffusion, &attnlens::ui::DiffusionPage::errorShown, meter, [done](const QString& m) {
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
