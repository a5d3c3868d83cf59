// attnlens: the GUI front end. Composes the main window from the pages in ui/.
//
//   attnlens [--screenshot OUT.png [--page N] [--size WxH]]
// --screenshot shows the window, grabs it once it has been laid out and painted, writes OUT.png and
// exits (status 0 on success, 2 when the file cannot be written): README and review screenshots
// come from the real widgets, under Xvfb or QT_QPA_PLATFORM=offscreen.

#include "ui/playground/playground_page.h"
#include "ui/render/heatmap_image.h"
#include "ui/shell/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>
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
    QApplication app(argc, argv);
    QApplication::setApplicationName("Attention Lens");
    QApplication::setOrganizationName("AttentionLens");
    QApplication::setApplicationVersion("0.1.0");
    QApplication::setWindowIcon(appIcon());

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QApplication::translate("main", "See attention inside transformer models."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"), QApplication::translate("main", "Write a PNG of the window and exit."),
        QStringLiteral("OUT.png"));
    const QCommandLineOption page(QStringLiteral("page"),
                                  QApplication::translate("main", "Page to open (0 = first)."),
                                  QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption size(QStringLiteral("size"), QApplication::translate("main", "Window size."),
                                  QStringLiteral("WxH"));
    parser.addOptions({screenshot, page, size});
    parser.process(app);

    attnlens::ui::MainWindow window;
    window.addPage(QApplication::translate("main", "Attention"), new attnlens::ui::PlaygroundPage);

    bool ok = false;
    const int pageIndex = parser.value(page).toInt(&ok);
    if (!ok || pageIndex < 0 || pageIndex >= window.pageCount()) {
        std::fprintf(stderr, "error: --page %s: expected 0..%d\n", qPrintable(parser.value(page)),
                     window.pageCount() - 1);
        return 2;
    }
    window.setCurrentPage(pageIndex);
    if (parser.isSet(size)) {
        const auto match = QRegularExpression(QStringLiteral("^(\\d+)x(\\d+)$")).match(parser.value(size));
        if (!match.hasMatch()) {
            std::fprintf(stderr, "error: --size %s: expected WxH, e.g. 1400x900\n",
                         qPrintable(parser.value(size)));
            return 2;
        }
        window.resize(match.captured(1).toInt(), match.captured(2).toInt());
    }
    window.show();

    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        // 400 ms after show(): posted layout requests have run and every widget has painted once.
        QTimer::singleShot(400, &window, [&window, out] {
            const bool saved = window.grab().save(out, "PNG");
            if (!saved)
                std::fprintf(stderr, "error: --screenshot %s: cannot write the file\n", qPrintable(out));
            QApplication::exit(saved ? 0 : 2);
        });
    }
    return QApplication::exec();
}
