#include "gui_options.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QRegularExpression>

namespace {

QCommandLineOption option(const char* name, const char* help, const char* value = nullptr) {
    const QString text = QApplication::translate("main", help);
    return value ? QCommandLineOption(QString::fromLatin1(name), text, QString::fromLatin1(value))
                 : QCommandLineOption(QString::fromLatin1(name), text);
}

} // namespace

QString parseGuiOptions(const QApplication& app, GuiOptions& o) {
    QCommandLineParser p;
    p.setApplicationDescription(QApplication::translate("main", "See attention inside transformer models."));
    p.addHelpOption();
    p.addVersionOption();
    const QList<QCommandLineOption> all{
        option("page", "Page to open: 0 Attention, 1 Translate, 2 Vision, 3 Diffusion.", "N"),
        option("size", "Window size.", "WxH"),
        option("dark", "Use the dark palette (View → Dark mode remembers the choice)."),
        option("model", "Open this model folder at start (File → Open model…).", "DIR"),
        option("screenshot", "Write a PNG of the window once the page is ready, and exit.", "OUT.png"),
        option("grab", "With --screenshot: grab only this child widget.", "OBJECT-NAME"),
        option("bench-ui", "Time the Translate page (offscreen) and exit."),
        option("repeats", "--bench-ui: translations to time.", "N"),
        option("input", "Translate: the German sentence.", "TEXT"),
        option("beam", "Translate: beam width (1 = greedy).", "N"),
        option("max-tokens", "Translate: most target tokens.", "N"),
        option("steps", "Translate: reset, then step forward K times. Diffusion: denoising steps.", "K"),
        option("view", "Translate: matrix, model, lines, embeddings or beam.", "NAME"),
        option("kind", "Translate: encoder, decoder or cross.", "KIND"),
        option("token", "Translate: select source piece sN or target piece tN.", "TOKEN"),
        option("words", "Translate: merge pieces into words."),
        option("hide-special", "Translate: hide special tokens."),
        option("beam-node", "Translate: show this beam tree node.", "N"),
        option("layer", "The layer shown, from 0.", "L"),
        option("head", "The head shown, from 0, or mean / max.", "H"),
        option("query", "Vision: cls or ROW,COL[;ROW,COL…]. Diffusion: ROW,COL or ROW,COL:ROW,COL.", "QUERY"),
        option("key-side", "Vision, Diffusion: show who attends to the query."),
        option("image", "Vision: image to open.", "PATH"),
        option("class", "Diffusion: the class to generate (number or name).", "C"),
        option("seed", "Diffusion: the seed.", "S"),
        option("scheduler", "Diffusion: ddim or ddpm.", "NAME"),
        option("step", "Diffusion: the denoising step shown (from 0).", "S"),
        option("on", "Diffusion: draw the map over x0 or xt.", "IMAGE"),
    };
    p.addOptions(all);
    p.process(app);
    auto v = [&p](const char* name) { return p.value(QString::fromLatin1(name)); };
    auto set = [&p](const char* name) { return p.isSet(QString::fromLatin1(name)); };

    bool ok = true;
    const int page = set("page") ? v("page").toInt(&ok) : 0;
    if (!ok || page < 0 || page >= kGuiPages) return QStringLiteral("--page %1: expected 0..%2").arg(v("page")).arg(kGuiPages - 1);
    o.page = static_cast<GuiPage>(page);
    if (set("size")) {
        const auto m = QRegularExpression(QStringLiteral("^(\\d+)x(\\d+)$")).match(v("size"));
        if (!m.hasMatch()) return QStringLiteral("--size %1: expected WxH, e.g. 1400x900").arg(v("size"));
        o.size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
    }
    o.dark = set("dark");
    o.model = v("model");
    o.screenshot = v("screenshot");
    o.grab = v("grab");
    o.benchUi = set("bench-ui");
    if (set("repeats")) o.repeats = std::max(1, v("repeats").toInt());

    const bool translate = o.page == GuiPage::Translate, vision = o.page == GuiPage::Vision,
               diffusion = o.page == GuiPage::Diffusion;
    TranslateScript& t = o.translate;
    t.input = v("input");
    t.beam = v("beam").toInt();
    t.maxTokens = v("max-tokens").toInt();
    t.steps = translate && set("steps") ? v("steps").toInt() : -1;
    t.view = v("view");
    t.kind = v("kind");
    t.layer = translate && set("layer") ? v("layer").toInt(&ok) : -1;
    if (!ok || (translate && set("layer") && t.layer < 0)) return QStringLiteral("--layer %1: expected a layer from 0").arg(v("layer"));
    t.head = translate ? v("head") : QString();
    t.token = v("token");
    t.wordLevel = set("words");
    t.hideSpecial = set("hide-special");
    t.beamNode = set("beam-node") ? v("beam-node").toInt() : -1;
    if (const QString problem = validateScript(t); !problem.isEmpty()) return problem;

    VisionScript& s = o.vision;
    s.image = v("image");
    if (vision) {
        s.query = v("query");
        s.layer = v("layer");
        s.head = v("head");
        s.keySide = set("key-side");
    }
    DiffusionScript& d = o.diffusion;
    d.className = v("class");
    d.seed = v("seed");
    d.scheduler = v("scheduler");
    d.step = v("step");
    d.on = v("on");
    if (diffusion) {
        d.steps = v("steps");
        d.query = v("query");
        d.layer = v("layer");
        d.head = v("head");
        d.keySide = set("key-side");
    }
    return {};
}
