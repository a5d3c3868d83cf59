// Benchmark (not a test; never run by CTest): how long the Vision page takes from an image drop to the
// first overlay on screen, and from a patch click to the repainted maps.
//
//   ninja -C build bench_vision_page
//   QT_QPA_PLATFORM=offscreen build/tests/bench_vision_page [MODEL_DIR] [IMAGE] [REPEATS=10]
//
// "Drop" is a real QDropEvent with the file's URL sent to the page; the clock stops when the page has
// shown the result and the picture has been repainted (repaint() is synchronous). "Click" is a real
// mouse click on a patch of the picture view; the clock stops after the synchronous map update and a
// repaint of the picture, raw map, heads grid and layers strip. Prints medians and extremes in ms.

#include "core/io/model_folder.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/heatmap_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QMimeData>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

void summary(const char* what, std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    std::printf("%-28s median %8.1f ms   min %8.1f   max %8.1f   (n=%zu)\n", what, ms[ms.size() / 2],
                ms.front(), ms.back(), ms.size());
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    const QString modelDir = argc > 1 ? QString::fromLocal8Bit(argv[1])
                                      : QString::fromStdString(builtinModelDir("vit-fashion-mnist").string());
    const QString image =
        argc > 2 ? QString::fromLocal8Bit(argv[2])
                 : QString::fromStdString((resourcesDir() / "samples/fashion-mnist/bag_1.png").string());
    const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 10;
    const int timeoutMs = 120000;

    VisionPage page(nullptr, modelDir);
    page.setStartImage(image);
    page.resize(1400, 900);
    page.show();
    QElapsedTimer load;
    load.start();
    QSignalSpy shown(&page, &VisionPage::resultReady);
    if (!shown.wait(timeoutMs)) {
        std::fprintf(stderr, "error: no image shown: %s\n", qPrintable(page.message()));
        return 2;
    }
    std::printf("model %s\nimage %s (%d×%d)\nmodel load + first image: %.0f ms\n",
                qPrintable(page.modelDescription()), qPrintable(image), page.document()->image()->image.width,
                page.document()->image()->image.height, static_cast<double>(load.nsecsElapsed()) / 1e6);

    std::vector<double> drop, forward, click, shiftClick;
    QObject::connect(&page, &VisionPage::resultReady, &page, [&page] { page.imageView()->repaint(); });
    for (int i = 0; i < repeats; ++i) {
        auto* mime = new QMimeData;
        mime->setUrls({QUrl::fromLocalFile(image)});
        QElapsedTimer t;
        t.start();
        const QPoint at = page.rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&page, &enter);
        QDropEvent event(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&page, &event);
        if (!shown.wait(timeoutMs)) {
            std::fprintf(stderr, "error: the dropped image was not shown: %s\n", qPrintable(page.message()));
            return 2;
        }
        drop.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        forward.push_back(page.document()->image()->seconds * 1000.0);
        delete mime;
    }
    PatchImageView* view = page.imageView();
    const int count = view->grid().count();
    for (int i = 0; i < repeats * 3; ++i) {
        const int patch = (i * 7919 + 13) % count;
        QElapsedTimer t;
        t.start();
        QTest::mouseClick(view, Qt::LeftButton, {}, view->patchRect(patch).center().toPoint());
        view->repaint();
        page.rawMapView()->viewport()->repaint();
        page.headsGrid()->repaint();
        page.layersStrip()->repaint();
        click.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        t.restart();
        QTest::mouseClick(view, Qt::LeftButton, Qt::ShiftModifier,
                          view->patchRect((patch + 1) % count).center().toPoint());
        view->repaint();
        page.rawMapView()->viewport()->repaint();
        page.headsGrid()->repaint();
        page.layersStrip()->repaint();
        shiftClick.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }
    summary("drop → first overlay", drop);
    summary("  of which forward pass", forward);
    summary("patch click → repainted", click);
    summary("shift-click (2 patches)", shiftClick);
    {
        // Where a click's time goes: the core overlay at display size, the thumbnails, the raw heatmap.
        std::vector<double> overlay, thumbs;
        for (int i = 0; i < repeats; ++i) {
            QElapsedTimer t;
            t.start();
            const RgbImage px = page.document()->renderDisplayOverlay();
            overlay.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
            t.restart();
            for (const RowMatrix& m : page.document()->headMaps())
                (void)page.document()->renderThumbnail(m);
            for (const RowMatrix& m : page.document()->layerMaps())
                (void)page.document()->renderThumbnail(m);
            thumbs.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        }
        summary("  core overlay (display)", overlay);
        summary("  heads + layers thumbnails", thumbs);
    }
    page.document()->setRollout(true);
    std::vector<double> rollout;
    for (int i = 0; i < repeats; ++i) {
        QElapsedTimer t;
        t.start();
        QTest::mouseClick(view, Qt::LeftButton, {}, view->patchRect((i * 31) % count).center().toPoint());
        view->repaint();
        rollout.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }
    summary("click with rollout on", rollout);
    return 0;
}
