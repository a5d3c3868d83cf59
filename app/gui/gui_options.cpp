#include "gui_options.h"

#include "core/io/hf_cache.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QRegularExpression>

namespace {

QCommandLineOption option(const char* name, const char* help, const char* value = nullptr) {
    const QString text = QApplication::translate("main", help);
    return value ? QCommandLineOption(QString::fromLatin1(name), text, QString::fromLatin1(value))
                 : QCommandLineOption(QString::fromLatin1(name), text);
}

QList<QCommandLineOption> guiOptionList() {
    return {
        option("page",
               "Page to open: 0 Attention, 1 Translate, 2 Vision, 3 Diffusion, 4 Text, 5 Text to image.",
               "N"),
        option("size", "Window size.", "WxH"),
        option("dark", "Use the dark palette this once (View → Theme sets and remembers a theme)."),
        option("model",
               "Open this model folder at start (File → Open model…), or ORG/NAME of a model in the Hugging "
               "Face cache.",
               "DIR"),
        option("precision", "Linear layers in fp32 or bf16 (Compute menu; not remembered).", "P"),
        option("screenshot", "Write a PNG of the window once the page is ready, and exit.", "OUT.png"),
        option("grab", "With --screenshot: grab only this child widget.", "OBJECT-NAME"),
        option("wait", "With --screenshot: wait at most this long for the page's run (default 60).",
               "SECONDS"),
        option("bench-ui", "Time the pages (offscreen) and exit; with --page 4 the Text page on --input."),
        option("repeats", "--bench-ui: translations to time.", "N"),
        option("input", "Translate: the German sentence. Text: the text. Text to image: the prompt.", "TEXT"),
        option("beam", "Translate: beam width (1 = greedy).", "N"),
        option("max-tokens", "Translate: most target tokens.", "N"),
        option("steps", "Translate: reset, then step forward K times. Diffusion: denoising steps.", "K"),
        option("view",
               "Translate: matrix, model, lines, embeddings, beam, heads, difference or lens. Text: matrix, "
               "model, lines, heads, difference, embeddings, lens or contrib (the Logit lens tab), kv (the "
               "KV cache tab). Text to "
               "image: "
               "words, steps or u.",
               "NAME"),
        option("kind", "Translate: encoder, decoder or cross.", "KIND"),
        option("token", "Translate: select source piece sN or target piece tN.", "TOKEN"),
        option("words", "Translate: merge pieces into words."),
        option("hide-special", "Translate: hide special tokens."),
        option("beam-node", "Translate: show this beam tree node.", "N"),
        option("layer", "Translate, Vision, Text: the layer shown, from 0.", "L"),
        option("head", "Translate, Vision, Text: the head shown, from 0, or mean / max.", "H"),
        option("find", "Text: find this token in the matrix (Ctrl+F) and show its first match.", "TEXT"),
        option(
            "value-weighted",
            "value-weighted maps, each weight times its value's norm (Text to image: the run keeps them)."),
        option("kv-policy",
               "Text: the KV cache tab's policy (streaming:4,16, h2o:32,8, snapkv:32,8, keep:0-3).",
               "POLICY"),
        option(
            "query",
            "Vision: cls (SigLIP: its pooling probe, also 'probe'), regK (a register), norms (token norms), "
            "text:K / relevance:K (CLIP / SigLIP: --texts' text K, from 0) or ROW,COL[;ROW,COL…]. Diffusion: "
            "ROW,COL or ROW,COL:ROW,COL.",
            "QUERY"),
        option("texts",
               "Vision with a CLIPModel or SiglipModel: texts separated by '|', scored against the picture.",
               "TEXTS"),
        option("key-side", "Vision, Diffusion: show who attends to the query."),
        option("image", "Vision: image to open.", "PATH"),
        option("class", "Diffusion: the class to generate (number or name).", "C"),
        option("seed", "Diffusion: the seed.", "S"),
        option("scheduler", "Diffusion: ddim or ddpm.", "NAME"),
        option("step", "Diffusion: the denoising step shown (from 0).", "S"),
        option("on", "Diffusion: draw the map over x0 or xt.", "IMAGE"),
        option("word", "Text to image: the word whose map is shown (a word of the prompt or its index).",
               "WORD"),
    };
}

// Typed access to a processed parser.
struct Parsed {
    const QCommandLineParser& p;
    QString v(const char* name) const { return p.value(QString::fromLatin1(name)); }
    bool set(const char* name) const { return p.isSet(QString::fromLatin1(name)); }
};

// Page, window, model and screenshot options; an error text or empty.
QString parseShellOptions(const Parsed& a, GuiOptions& o) {
    bool ok = true;
    const int page = a.set("page") ? a.v("page").toInt(&ok) : 0;
    if (!ok || page < 0 || page >= kGuiPages)
        return QStringLiteral("--page %1: expected 0..%2").arg(a.v("page")).arg(kGuiPages - 1);
    o.page = static_cast<GuiPage>(page);
    if (a.set("size")) {
        const auto m = QRegularExpression(QStringLiteral("^(\\d+)x(\\d+)$")).match(a.v("size"));
        if (!m.hasMatch()) return QStringLiteral("--size %1: expected WxH, e.g. 1400x900").arg(a.v("size"));
        o.size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
    }
    o.dark = a.set("dark");
    o.model = a.v("model");
    if (!o.model.isEmpty() && !QFileInfo::exists(o.model)) // ORG/NAME of a model in the Hugging Face cache
        if (const auto dir = attnlens::resolveHfModel(o.model.toStdString()))
            o.model = QString::fromStdString(dir->string());
    o.precision = a.v("precision");
    if (!o.precision.isEmpty() && o.precision != QLatin1String("fp32") &&
        o.precision != QLatin1String("bf16"))
        return QStringLiteral("--precision %1: expected fp32 or bf16").arg(o.precision);
    o.screenshot = a.v("screenshot");
    o.grab = a.v("grab");
    o.layer = a.v("layer");
    o.head = a.v("head");
    o.find = a.v("find");
    o.valueWeighted = a.set("value-weighted");
    o.kvPolicy = a.v("kv-policy");
    if (a.set("wait")) {
        o.waitSeconds = a.v("wait").toInt(&ok);
        if (!ok || o.waitSeconds < 1)
            return QStringLiteral("--wait %1: expected seconds, 1 or more").arg(a.v("wait"));
    }
    o.benchUi = a.set("bench-ui");
    if (a.set("repeats")) o.repeats = std::max(1, a.v("repeats").toInt());
    return {};
}

QString parseTranslateScript(const Parsed& a, bool onPage, TranslateScript& t) {
    bool ok = true;
    t.input = a.v("input");
    t.beam = a.v("beam").toInt();
    t.maxTokens = a.v("max-tokens").toInt();
    t.steps = onPage && a.set("steps") ? a.v("steps").toInt() : -1;
    t.view = onPage ? a.v("view") : QString();
    t.kind = a.v("kind");
    t.layer = onPage && a.set("layer") ? a.v("layer").toInt(&ok) : -1;
    if (!ok || (onPage && a.set("layer") && t.layer < 0))
        return QStringLiteral("--layer %1: expected a layer from 0").arg(a.v("layer"));
    t.head = onPage ? a.v("head") : QString();
    t.token = a.v("token");
    t.wordLevel = a.set("words");
    t.hideSpecial = a.set("hide-special");
    t.beamNode = a.set("beam-node") ? a.v("beam-node").toInt() : -1;
    return validateScript(t);
}

void parseVisionScript(const Parsed& a, bool onPage, VisionScript& s) {
    s.image = a.v("image");
    s.texts = a.v("texts");
    if (!onPage) return;
    s.query = a.v("query");
    s.layer = a.v("layer");
    s.head = a.v("head");
    s.keySide = a.set("key-side");
}

void parseDiffusionScript(const Parsed& a, bool onPage, DiffusionScript& d) {
    d.className = a.v("class");
    d.seed = a.v("seed");
    d.scheduler = a.v("scheduler");
    d.step = a.v("step");
    d.on = a.v("on");
    if (!onPage) return;
    d.steps = a.v("steps");
    d.query = a.v("query");
    d.layer = a.v("layer");
    d.head = a.v("head");
    d.keySide = a.set("key-side");
}

} // namespace

const QStringList& textViewNames() {
    static const QStringList names{
        QStringLiteral("matrix"), QStringLiteral("model"),      QStringLiteral("lines"),
        QStringLiteral("heads"),  QStringLiteral("difference"), QStringLiteral("embeddings"),
        QStringLiteral("lens"),   QStringLiteral("contrib"),    QStringLiteral("kv")};
    return names;
}

QString parseGuiOptions(const QApplication& app, GuiOptions& o) {
    QCommandLineParser p;
    p.setApplicationDescription(QApplication::translate("main", "See attention inside transformer models."));
    p.addHelpOption();
    p.addVersionOption();
    p.addOptions(guiOptionList());
    p.addPositionalArgument(
        QStringLiteral("session"),
        QApplication::translate("main", "A saved session to open (File → Open session…)."),
        QStringLiteral("[SESSION.attnlens]"));
    p.process(app);
    const Parsed a{p};
    if (p.positionalArguments().size() > 1)
        return QStringLiteral("one session file at most, found %1 arguments")
            .arg(p.positionalArguments().size());
    o.session = p.positionalArguments().value(0);
    if (QString problem = parseShellOptions(a, o); !problem.isEmpty()) return problem;
    // Options of another page than the one opened are ignored (--layer means that page's layer).
    if (QString problem = parseTranslateScript(a, o.page == GuiPage::Translate, o.translate);
        !problem.isEmpty())
        return problem;
    if (o.page == GuiPage::Text && a.set("view")) {
        o.textView = static_cast<int>(textViewNames().indexOf(a.v("view")));
        if (o.textView < 0)
            return QStringLiteral("--view %1: expected %2")
                .arg(a.v("view"), textViewNames().join(QStringLiteral(", ")));
    }
    parseVisionScript(a, o.page == GuiPage::Vision, o.vision);
    parseDiffusionScript(a, o.page == GuiPage::Diffusion, o.diffusion);
    if (o.page == GuiPage::TextToImage) { // the Diffusion page's options, and its own
        parseDiffusionScript(a, true, o.t2i.d);
        o.t2i.prompt = a.v("input");
        o.t2i.word = a.v("word");
        o.t2i.view = a.v("view");
    }
    return {};
}
