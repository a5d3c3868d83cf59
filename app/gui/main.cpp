// attnlens: the GUI front end. Composes the main window from the pages in ui/.
//
//   attnlens [--screenshot OUT.png [--page N] [--size WxH]]
//            [--input TEXT] [--beam N] [--max-tokens N] [--steps K] [--view NAME] [--kind K] [--layer N] [--head N]
//            [--token sN|tN] [--words] [--hide-special] [--beam-node N] [--model DIR]
//            [--grab WIDGET] [--image PATH] [--patch cls|ROW,COL[;ROW,COL...]] [--key-side]
//            [--class C] [--seed S] [--scheduler ddim|ddpm] [--step S] [--query ROW,COL[:ROW,COL]] [--on x0|xt]
//   attnlens --bench-ui [--input TEXT] [--repeats N]
// --screenshot shows the window, grabs it once it has been laid out and painted, writes OUT.png and
// exits (status 0 on success, 2 when the file cannot be written): README and review screenshots
// come from the real widgets, under Xvfb or QT_QPA_PLATFORM=offscreen. On the Translate page the
// grab waits for the model, the translation (then Reset and K steps when --steps is given) and the
// selection options. --bench-ui times Translate → first rendered heatmap and head/layer switches.

// --layer and --head apply to the page shown: Translate counts from 1 (head 0 = mean of heads); Vision
// counts from 0 as attnlens-cli vision does (head: a number, mean or max). --grab names a child widget
// (object name, e.g. headsGrid) to grab alone; --image/--patch/--key-side set up the Vision page.
// Diffusion page (--page 3): --class/--seed/--scheduler/--steps set up the first run (steps = denoising
// steps there), then --step/--query/--layer/--head/--on/--key-side the view, all counted from 0.

#include "diffusion_driver.h"
#include "translate_driver.h"
#include "ui/diffusion/diffusion_document.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/playground/playground_page.h"
#include "ui/render/heatmap_image.h"
#include "ui/shell/main_window.h"
#include "ui/shell/theme.h"
#include "ui/translate/translate_page.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QPixmap>
#include <QRegularExpression>
#include <QSettings>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

// Applies --patch/--layer/--head/--key-side to the Vision page's document. Returns an error or empty.
QString applyVisionOptions(attnlens::ui::VisionDocument* doc, const QString& patch, const QString& layer,
                           const QString& head, bool keySide) {
    using attnlens::HeadFusion;
    if (!layer.isEmpty()) {
        bool ok = false;
        const int l = layer.toInt(&ok);
        if (!ok || l < 0 || l >= doc->numLayers()) return QStringLiteral("--layer %1: expected 0..%2").arg(layer).arg(doc->numLayers() - 1);
        doc->setLayer(l);
    }
    if (head == QLatin1String("mean") || head == QLatin1String("max")) {
        doc->setFusion(head == QLatin1String("mean") ? HeadFusion::Mean : HeadFusion::Max);
        doc->setHead(-1);
    } else if (!head.isEmpty()) {
        bool ok = false;
        const int h = head.toInt(&ok);
        if (!ok || h < 0 || h >= doc->numHeads()) return QStringLiteral("--head %1: expected 0..%2, mean or max").arg(head).arg(doc->numHeads() - 1);
        doc->setHead(h);
    }
    doc->setKeySide(keySide);
    if (patch.isEmpty() || patch == QLatin1String("cls")) return {};
    std::vector<int> patches;
    for (const QString& item : patch.split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        const auto m = QRegularExpression(QStringLiteral("^(\\d+),(\\d+)$")).match(item.trimmed());
        const int r = m.hasMatch() ? m.captured(1).toInt() : -1, c = m.hasMatch() ? m.captured(2).toInt() : -1;
        if (r < 0 || r >= doc->gridRows() || c < 0 || c >= doc->gridCols())
            return QStringLiteral("--patch %1: expected cls or ROW,COL inside the %2×%3 grid").arg(item).arg(doc->gridRows()).arg(doc->gridCols());
        patches.push_back(r * doc->gridCols() + c);
    }
    doc->selectPatches(std::move(patches));
    return {};
}

} // namespace

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
    const QCommandLineOption layer = opt("layer", "Layer: Translate from 1; Vision from 0.", "N");
    const QCommandLineOption head = opt("head", "Head: Translate from 1 (0 = mean); Vision from 0, mean or max.", "N");
    const QCommandLineOption token = opt("token", "Translate page: select source piece sN or target piece tN.", "TOKEN");
    const QCommandLineOption words = opt("words", "Translate page: merge pieces into words.");
    const QCommandLineOption hideSpecial = opt("hide-special", "Translate page: hide special tokens.");
    const QCommandLineOption beamNode = opt("beam-node", "Translate page: show this beam tree node.", "N");
    const QCommandLineOption model = opt("model", "Open this model folder at start (File → Open model…).", "DIR");
    const QCommandLineOption benchUi = opt("bench-ui", "Time the Translate page (offscreen) and exit.");
    const QCommandLineOption repeats = opt("repeats", "--bench-ui: translations to time.", "N");
    const QCommandLineOption grab = opt("grab", "With --screenshot: grab only this child widget.", "OBJECT-NAME");
    const QCommandLineOption image = opt("image", "Vision page: image to open.", "PATH");
    const QCommandLineOption patch = opt("patch", "Vision page: query cls or ROW,COL[;ROW,COL…].", "QUERY");
    const QCommandLineOption keySide = opt("key-side", "Vision page: show who attends to the query.");
    const QCommandLineOption dark = opt("dark", "Use the dark palette (View → Dark mode remembers the choice).");
    const QCommandLineOption classOpt = opt("class", "Diffusion page: the class to generate (number or name).", "C");
    const QCommandLineOption seed = opt("seed", "Diffusion page: the seed.", "S");
    const QCommandLineOption scheduler = opt("scheduler", "Diffusion page: ddim or ddpm.", "NAME");
    const QCommandLineOption stepOpt = opt("step", "Diffusion page: the denoising step shown (from 0).", "S");
    const QCommandLineOption query = opt("query", "Diffusion page: query pixel ROW,COL or region ROW,COL:ROW,COL.", "QUERY");
    const QCommandLineOption on = opt("on", "Diffusion page: draw the map over x0 or xt.", "IMAGE");
    parser.addOptions({screenshot, page, size, input, beam, steps, view, kind, layer, head, token, words, hideSpecial,
                       beamNode, model, benchUi, repeats, maxTokens, grab, image, patch, keySide, classOpt, seed, scheduler,
                       stepOpt, query, on, dark});
    parser.process(app);
    if (parser.isSet(dark) || QSettings().value("darkMode").toBool()) attnlens::ui::applyTheme(attnlens::ui::Theme::Dark);

    const int requestedPage = parser.value(page).toInt();
    const bool forVision = requestedPage == 2; // the Vision page's index below
    const bool forDiffusion = requestedPage == 3; // the Diffusion page's
    TranslateScript script;
    script.input = parser.value(input);
    script.beam = parser.value(beam).toInt();
    script.maxTokens = parser.value(maxTokens).toInt();
    script.steps = parser.isSet(steps) && !forDiffusion ? parser.value(steps).toInt() : -1;
    script.view = parser.value(view);
    script.kind = parser.value(kind);
    script.layer = forVision || forDiffusion ? 0 : parser.value(layer).toInt();
    script.head = !forVision && !forDiffusion && parser.isSet(head) ? parser.value(head).toInt() : -1;
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
    auto* vision = new attnlens::ui::VisionPage;
    if (parser.isSet(image)) vision->setStartImage(parser.value(image));
    const int visionIndex = window.addPage(QApplication::translate("main", "Vision"), vision);
    auto* diffusion = new attnlens::ui::DiffusionPage;
    const int diffusionIndex = window.addPage(QApplication::translate("main", "Diffusion"), diffusion);

    // The Diffusion page: settings once its model is loaded (before the first run), the view after that run.
    DiffusionScript diffusionScript;
    diffusionScript.className = parser.value(classOpt);
    diffusionScript.seed = parser.value(seed);
    diffusionScript.scheduler = parser.value(scheduler);
    diffusionScript.steps = forDiffusion ? parser.value(steps) : QString();
    diffusionScript.step = parser.value(stepOpt);
    diffusionScript.query = parser.value(query);
    diffusionScript.layer = forDiffusion ? parser.value(layer) : QString();
    diffusionScript.head = forDiffusion ? parser.value(head) : QString();
    diffusionScript.on = parser.value(on);
    diffusionScript.keySide = forDiffusion && parser.isSet(keySide);
    auto diffusionError = std::make_shared<QString>();
    auto diffusionReady = std::make_shared<bool>(false);
    if (forDiffusion) {
        auto loaded = std::make_shared<QMetaObject::Connection>();
        *loaded = QObject::connect(diffusion, &attnlens::ui::DiffusionPage::modelLoaded, diffusion, [=] {
            QObject::disconnect(*loaded);
            *diffusionError = applyDiffusionSettings(diffusion, diffusionScript);
        });
        auto finished = std::make_shared<QMetaObject::Connection>();
        *finished = QObject::connect(diffusion, &attnlens::ui::DiffusionPage::runFinished, diffusion, [=] {
            QObject::disconnect(*finished);
            if (diffusionError->isEmpty()) *diffusionError = applyDiffusionView(diffusion, diffusionScript);
            *diffusionReady = true;
        });
    }

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

    if (parser.isSet(screenshot) && pageIndex == translateIndex) {
        const QString out = parser.value(screenshot);
        runTranslateScript(translatePage, script, [&window, out](bool scripted, const QString& message) {
            if (!scripted) std::fprintf(stderr, "warning: %s (grabbing the page as it is)\n", qPrintable(message));
            const bool saved = window.grab().save(out, "PNG");
            if (!saved) std::fprintf(stderr, "error: --screenshot %s: cannot write the file\n", qPrintable(out));
            QApplication::exit(saved ? 0 : 2);
        });
    }
    // The Vision options apply once its first image is on screen (the model loads on a worker thread).
    const bool visionSetup = parser.isSet(patch) || (parser.isSet(keySide) && pageIndex == visionIndex) ||
                             (pageIndex == visionIndex && (parser.isSet(layer) || parser.isSet(head)));
    auto visionError = std::make_shared<QString>();
    if (visionSetup) {
        const QString patchValue = parser.value(patch), layerValue = parser.value(layer), headValue = parser.value(head);
        const bool keySideValue = parser.isSet(keySide);
        auto connection = std::make_shared<QMetaObject::Connection>();
        *connection = QObject::connect(vision, &attnlens::ui::VisionPage::imageShown, vision, [=] {
            QObject::disconnect(*connection);
            *visionError = applyVisionOptions(vision->document(), patchValue, layerValue, headValue, keySideValue);
        });
    }

    if (parser.isSet(screenshot) && pageIndex != translateIndex) {
        const QString out = parser.value(screenshot);
        const QString grabName = parser.value(grab);
        const bool waitForImage = parser.isSet(image) || visionSetup || pageIndex == visionIndex;
        auto* timer = new QTimer(&window);
        auto waited = std::make_shared<int>(0);
        timer->setInterval(200);
        // Wait until the Vision page is idle and (if asked) shows its image, then two more turns so the
        // layouts settle and every widget has painted once; give up after 60 s.
        const bool onDiffusion = pageIndex == diffusionIndex;
        QObject::connect(timer, &QTimer::timeout, &window, [=, &window] {
            *waited += 200;
            const bool ready = onDiffusion ? *diffusionReady && !diffusion->isBusy()
                                           : !vision->isBusy() && (!waitForImage || vision->document()->hasImage());
            if (!ready && *waited < 60000) return;
            if (*waited < 400) return;
            timer->stop();
            const QString problem = onDiffusion ? *diffusionError : *visionError;
            if (!problem.isEmpty()) {
                std::fprintf(stderr, "error: %s\n", qPrintable(problem));
                QApplication::exit(2);
                return;
            }
            QTimer::singleShot(300, &window, [&window, out, grabName] {
                QWidget* target = &window;
                if (!grabName.isEmpty()) target = window.findChild<QWidget*>(grabName);
                if (target == nullptr) {
                    std::fprintf(stderr, "error: --grab %s: no such widget\n", qPrintable(grabName));
                    QApplication::exit(2);
                    return;
                }
                const bool saved = target->grab().save(out, "PNG");
                if (!saved) std::fprintf(stderr, "error: --screenshot %s: cannot write the file\n", qPrintable(out));
                QApplication::exit(saved ? 0 : 2);
            });
        });
        timer->start();
    }
    return QApplication::exec();
}
