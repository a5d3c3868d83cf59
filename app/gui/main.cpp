// attnlens: the GUI front end. Composes the main window from the pages in ui/.
//
//   attnlens [--screenshot OUT.png [--page N] [--size WxH]]
//            [--input TEXT] [--beam N] [--max-tokens N] [--steps K] [--view NAME] [--kind K] [--layer N] [--head N]
//            [--token sN|tN] [--words] [--hide-special] [--beam-node N] [--model DIR]
//   attnlens --bench-ui [--input TEXT] [--repeats N]
// --screenshot shows the window, grabs it once it has been laid out and painted, writes OUT.png and
// exits (status 0 on success, 2 when the file cannot be written): README and review screenshots
// come from the real widgets, under Xvfb or QT_QPA_PLATFORM=offscreen. On the Translate page the
// grab waits for the model, the translation (then Reset and K steps when --steps is given) and the
// selection options. --bench-ui times Translate → first rendered heatmap and head/layer switches.

#include "translate_driver.h"
#include "ui/playground/playground_page.h"
#include "ui/render/heatmap_image.h"
#include "ui/shell/main_window.h"
#include "ui/translate/translate_page.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>

#include <algorithm>
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
    auto opt = [](const char* name, const char* help, const char* value = nullptr) {
        return value ? QCommandLineOption(QString::fromLatin1(name), QApplication::translate("main", help),
                                          QString::fromLatin1(value))
                     : QCommandLineOption(QString::fromLatin1(name), QApplication::translate("main", help));
    };
    const QCommandLineOption input = opt("input", "Translate page: the German sentence.", "TEXT");
    const QCommandLineOption beam = opt("beam", "Translate page: beam width (1 = greedy).", "N");
    const QCommandLineOption maxTokens = opt("max-tokens", "Translate page: most target tokens.", "N");
    const QCommandLineOption steps = opt("steps", "Translate page: reset, then step forward K times.", "K");
    const QCommandLineOption view = opt("view", "Translate page: matrix, model, lines, embeddings or beam.", "NAME");
    const QCommandLineOption kind = opt("kind", "Translate page: encoder, decoder or cross.", "KIND");
    const QCommandLineOption layer = opt("layer", "Translate page: layer (1-based).", "N");
    const QCommandLineOption head = opt("head", "Translate page: head (1-based; 0 = mean of heads).", "N");
    const QCommandLineOption token = opt("token", "Translate page: select source piece sN or target piece tN.", "TOKEN");
    const QCommandLineOption words = opt("words", "Translate page: merge pieces into words.");
    const QCommandLineOption hideSpecial = opt("hide-special", "Translate page: hide special tokens.");
    const QCommandLineOption beamNode = opt("beam-node", "Translate page: show this beam tree node.", "N");
    const QCommandLineOption model = opt("model", "Open this model folder at start (File → Open model…).", "DIR");
    const QCommandLineOption benchUi = opt("bench-ui", "Time the Translate page (offscreen) and exit.");
    const QCommandLineOption repeats = opt("repeats", "--bench-ui: translations to time.", "N");
    parser.addOptions({screenshot, page, size, input, beam, steps, view, kind, layer, head, token, words, hideSpecial,
                       beamNode, model, benchUi, repeats, maxTokens});
    parser.process(app);

    TranslateScript script;
    script.input = parser.value(input);
    script.beam = parser.value(beam).toInt();
    script.maxTokens = parser.value(maxTokens).toInt();
    script.steps = parser.isSet(steps) ? parser.value(steps).toInt() : -1;
    script.view = parser.value(view);
    script.kind = parser.value(kind);
    script.layer = parser.value(layer).toInt();
    script.head = parser.isSet(head) ? parser.value(head).toInt() : -1;
    script.token = parser.value(token);
    script.wordLevel = parser.isSet(words);
    script.hideSpecial = parser.isSet(hideSpecial);
    script.beamNode = parser.isSet(beamNode) ? parser.value(beamNode).toInt() : -1;
    if (const QString problem = validateScript(script); !problem.isEmpty()) {
        std::fprintf(stderr, "error: %s\n", qPrintable(problem));
        return 2;
    }

    attnlens::ui::MainWindow window;
    window.addPage(QApplication::translate("main", "Attention"), new attnlens::ui::PlaygroundPage);
    auto* translatePage = new attnlens::ui::TranslatePage;
    const int translateIndex = window.addPage(QApplication::translate("main", "Translate"), translatePage);

    if (parser.isSet(model) && !window.openModel(parser.value(model))) return 2;

    if (parser.isSet(benchUi)) {
        window.setCurrentPage(translateIndex);
        window.show();
        const int n = parser.isSet(repeats) ? std::max(1, parser.value(repeats).toInt()) : 10;
        runTranslateBench(translatePage, script.input.isEmpty() ? QStringLiteral("Wie geht es dir?") : script.input, n,
                          [](int status) { QApplication::exit(status); });
        return QApplication::exec();
    }

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

    if (parser.isSet(screenshot) && window.page(pageIndex) == translatePage) {
        const QString out = parser.value(screenshot);
        runTranslateScript(translatePage, script, [&window, out](bool scripted, const QString& message) {
            if (!scripted) std::fprintf(stderr, "warning: %s (grabbing the page as it is)\n", qPrintable(message));
            const bool saved = window.grab().save(out, "PNG");
            if (!saved) std::fprintf(stderr, "error: --screenshot %s: cannot write the file\n", qPrintable(out));
            QApplication::exit(saved ? 0 : 2);
        });
    } else if (parser.isSet(screenshot)) {
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
