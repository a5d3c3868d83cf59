// attnlens: the GUI front end. Parses the command line (gui_options.h documents it), composes the main
// window from the pages in ui/, and runs it — for a user, or driven for a README screenshot or the UI
// benchmark (gui_harness.h).

#include "core/util/huge_pages.h"
#include "gui_harness.h"
#include "gui_options.h"
#include "ui/render/heatmap_image.h"
#include "ui/shell/main_window.h"
#include "ui/shell/session_autosave.h"
#include "ui/shell/theme.h"

#include <QApplication>
#include <QIcon>
#include <QPixmap>
#include <QSettings>

#include <cstdio>

namespace {

// The app icon is an attention pattern drawn by the same renderer as every heatmap: a causal 4 × 4
// block whose rows sum to 1.
QIcon appIcon() {
    attnlens::RowMatrix weights(4, 4); // [query, key]
    weights << 1.0f, 0.0f, 0.0f, 0.0f, //
        0.3f, 0.7f, 0.0f, 0.0f,        //
        0.1f, 0.6f, 0.3f, 0.0f,        //
        0.15f, 0.1f, 0.25f, 0.5f;
    QIcon icon;
    for (int cell : {4, 8, 16, 32, 64})
        icon.addPixmap(QPixmap::fromImage(
            attnlens::ui::heatmapImage(weights, attnlens::ColorMap::Viridis, 0.0f, 1.0f, cell)));
    return icon;
}

} // namespace

int main(int argc, char** argv) {
    attnlens::useHugePages(argv); // 64 MB maps without 16 k page faults each (core/util/huge_pages.h)
    attnlens::keepLargeBuffers();
    QApplication app(argc, argv);
    QApplication::setApplicationName("Attention Lens");
    QApplication::setOrganizationName("AttentionLens");
    QApplication::setApplicationVersion("0.1.0");
    QApplication::setWindowIcon(appIcon());

    GuiOptions options;
    if (const QString problem = parseGuiOptions(app, options); !problem.isEmpty()) {
        std::fprintf(stderr, "error: %s\n", qPrintable(problem));
        return 2;
    }
    attnlens::ui::applyTheme(options.dark ? attnlens::ui::Theme::Dark : attnlens::ui::savedTheme());

    attnlens::ui::MainWindow window;
    if (!options.precision.isEmpty() &&
        !window.setPrecision(options.precision == QLatin1String("bf16") ? attnlens::LinearPrecision::Bf16
                                                                        : attnlens::LinearPrecision::Fp32)) {
        std::fprintf(stderr, "error: --precision %s: this CPU has no bf16 kernel\n",
                     qPrintable(options.precision));
        return 2;
    }
    const GuiPages pages = addPages(window, options);
    // what the user does is kept every few seconds and offered back after a crash (not for a screenshot or
    // a benchmark: their windows are scripted)
    if (options.screenshot.isEmpty() && !options.benchUi) window.autosave()->start();
    return runGui(window, pages, options);
}
