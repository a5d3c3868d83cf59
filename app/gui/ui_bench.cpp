#include "ui_bench.h"

#include "gui_harness.h"
#include "stall_meter.h"
#include "translate_driver.h"

#include "core/io/model_folder.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/shell/main_window.h"
#include "ui/vision/vision_page.h"

#include <QElapsedTimer>

#include <cstdio>
#include <memory>

namespace {

void benchVision(attnlens::ui::MainWindow& window, const GuiPages& pages, StallMeter* meter, std::function<void(int)> done) {
    meter->setPhase(QStringLiteral("analysing a picture (Vision)"));
    window.setCurrentPage(static_cast<int>(GuiPage::Vision));
    auto clock = std::make_shared<QElapsedTimer>();
    QObject::connect(
        pages.vision, &attnlens::ui::VisionPage::imageShown, meter,
        [meter, clock, done] {
            std::printf("%-40s %8.2f ms\n", "Vision: open a picture -> shown", clock->nsecsElapsed() / 1e6);
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
