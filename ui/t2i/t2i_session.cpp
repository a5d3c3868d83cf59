// TextToImagePage: sessions (the settings and the view; the run is made again — it is deterministic) and
// Help → What am I looking at?

#include "ui/t2i/t2i_page.h"

#include <QJsonArray>

namespace attnlens::ui {

namespace {

constexpr int kMaxIndex = 1 << 16;

struct T2iSession {
    T2iSettings settings;
    bool generated = false;
    int word = -1, step = -1, layer = -1, head = -1, selfLayer = -1;
    QList<int> compared;
    HeadFusion fusion = HeadFusion::Mean;
    T2iHalf half = T2iHalf::Cond;
    bool allSteps = true, special = false, valueWeighted = false;
    std::optional<std::pair<int, int>> pixel;
    double opacity = 0.6;
    ColorMap colorMap = ColorMap::Inferno;

    static T2iSession parse(SessionReader& r) {
        T2iSession s;
        (void)r.string("model_dir");
        s.settings.prompt = r.string("prompt", s.settings.prompt);
        s.settings.negative = r.string("negative");
        s.settings.seed = r.integer("seed", 0, 0, 2147483647);
        s.settings.steps = r.integer("steps", 25, 1, 1000);
        s.settings.guidance = r.number("guidance", 7.5, 0.0, 100.0);
        s.settings.size = r.integer("size", 0, 0, 2048);
        const QString sampler = r.choice("scheduler", "folder", {"folder", "pndm", "ddim", "euler", "dpm"});
        if (sampler != QLatin1String("folder")) s.settings.sampler = parseSamplerName(sampler.toStdString());
        s.settings.allHeads = r.boolean("all_heads", false);
        s.settings.valueWeighted = r.boolean("keep_value_weighted", false);
        s.valueWeighted = r.boolean("value_weighted", false);
        s.generated = r.boolean("generated", false);
        s.word = r.integer("word", -1, -1, kMaxIndex);
        if (r.has("compared")) s.compared = r.integers("compared", 0, kMaxIndex);
        s.step = r.integer("step", -1, -1, 1000);
        s.allSteps = r.boolean("all_steps", true);
        s.layer = r.integer("layer", -1, -1, kMaxIndex);
        s.head = r.integer("head", -1, -1, kMaxIndex);
        s.fusion = *parseHeadFusion(r.choice("fusion", "mean", {"mean", "max", "min"}).toStdString());
        const QString half = r.choice("half", "cond", {"cond", "uncond", "cond-uncond"});
        s.half = half == QLatin1String("uncond")        ? T2iHalf::Uncond
                 : half == QLatin1String("cond-uncond") ? T2iHalf::Difference
                                                        : T2iHalf::Cond;
        s.special = r.boolean("show_special", false);
        if (r.has("pixel")) {
            const QList<int> p = r.integers("pixel", 0, 4096, 2);
            if (r.ok()) s.pixel = std::pair{p[0], p[1]};
        }
        s.selfLayer = r.integer("self_layer", -1, -1, kMaxIndex);
        s.opacity = r.number("opacity", 0.6, 0.0, 1.0);
        s.colorMap = readColorMap(r, "color_map", ColorMap::Inferno);
        return s;
    }

    void write(QJsonObject& o) const {
        o.insert("prompt", settings.prompt);
        o.insert("negative", settings.negative);
        o.insert("seed", settings.seed);
        o.insert("steps", settings.steps);
        o.insert("guidance", settings.guidance);
        o.insert("size", settings.size);
        o.insert("scheduler", settings.sampler ? QString::fromLatin1(samplerName(*settings.sampler))
                                               : QStringLiteral("folder"));
        o.insert("all_heads", settings.allHeads);
        o.insert("keep_value_weighted", settings.valueWeighted);
        o.insert("value_weighted", valueWeighted);
        o.insert("generated", generated);
        o.insert("word", word);
        if (!compared.isEmpty()) {
            QJsonArray a;
            for (int c : compared)
                a.append(c);
            o.insert("compared", a);
        }
        o.insert("step", step);
        o.insert("all_steps", allSteps);
        o.insert("layer", layer);
        o.insert("head", head);
        o.insert("fusion", QString::fromLatin1(headFusionName(fusion).data()));
        o.insert("half", QString::fromLatin1(t2iHalfName(half).data()));
        o.insert("show_special", special);
        if (pixel) o.insert("pixel", QJsonArray{pixel->first, pixel->second});
        o.insert("self_layer", selfLayer);
        o.insert("opacity", opacity);
        o.insert("color_map", colorMapId(colorMap));
    }
};

} // namespace

QJsonObject TextToImagePage::saveSession() const {
    T2iSession s;
    s.settings = m_doc->hasRun() ? m_doc->runSettings() : settingsFromControls();
    s.generated = m_doc->hasRun();
    s.word = m_doc->word();
    for (int c : m_doc->compared())
        s.compared << c;
    s.step = m_doc->shownStep();
    s.allSteps = m_doc->allSteps();
    s.layer = m_doc->layer();
    s.head = m_doc->heads().head;
    s.fusion = m_doc->heads().fusion;
    s.half = m_doc->half();
    s.special = m_doc->showSpecial();
    s.valueWeighted = m_doc->valueWeightedSwitch();
    s.pixel = m_doc->pixel();
    s.selfLayer = m_doc->selfLayer();
    if (!m_doc->hasRun()) // a run stopped before its first step: no word, layer or step of it to come back to
        s.word = -1, s.compared.clear(), s.selfLayer = -1, s.step = 0;
    s.opacity = m_doc->opacity();
    s.colorMap = m_doc->colorMap();
    QJsonObject o = modelSessionState();
    s.write(o);
    return o;
}

QString TextToImagePage::checkSession(const QJsonObject& state) const {
    SessionReader r = sessionReader(state);
    (void)T2iSession::parse(r);
    return r.error();
}

bool TextToImagePage::restoreInputs(const QJsonObject& state) {
    SessionReader r = sessionReader(state);
    const T2iSession s = T2iSession::parse(r);
    if (!r.ok()) {
        showError(r.error());
        return false;
    }
    m_firstShow = false; // the session decides whether there is a run
    m_generateWhenLoaded = false;
    m_doc->setOpacity(static_cast<float>(s.opacity));
    m_doc->setColorMap(s.colorMap);
    return true;
}

void TextToImagePage::continueRestore() {
    if (!restoreState()) return;
    if (!m_doc->pipeline()) {
        endRestore();
        showError(tr("Session restored without a model: open a Stable Diffusion pipeline with Open model…"));
        return;
    }
    SessionReader r = sessionReader(*restoreState());
    const T2iSession s = T2iSession::parse(r);
    setSettings(s.settings);
    if (s.generated)
        generate(); // then applyRestoredView()
    else
        applyRestoredView();
}

void TextToImagePage::applyRestoredView() {
    if (!restoreState()) return;
    SessionReader r = sessionReader(*restoreState());
    const T2iSession s = T2iSession::parse(r);
    endRestore();
    m_doc->setShowSpecial(s.special);
    m_doc->setWord(s.word);
    for (int c : s.compared)
        m_doc->toggleCompared(c);
    m_doc->setAllSteps(s.allSteps);
    if (s.step >= 0) m_doc->setShownStep(s.step);
    m_doc->setLayer(s.layer);
    m_doc->setHeads({s.head, s.fusion});
    m_doc->setHalf(s.half);
    m_doc->setValueWeighted(s.valueWeighted);
    m_doc->setSelfLayer(s.selfLayer);
    m_doc->setPixel(s.pixel);
    showNotice(tr("Session restored."));
}

QString t2iHelpTitle() {
    return QObject::tr("Text to image: which word lands where");
}

QString t2iHelpText() {
    return QObject::tr(
        "<p>A Stable Diffusion pipeline turns noise into a picture in steps. At each step its U-Net looks at "
        "the prompt through <b>cross-attention</b>: every pixel of every attention layer spreads one unit of "
        "attention over the 77 text tokens. The map of a word is how much of that each pixel gives it.</p>"
        "<p><b>Click a word</b> for its map over the image; <b>shift-click</b> more words to compare them. "
        "<i>Aggregate over the steps</i> with <i>All cross-attention layers</i> is DAAM's map: each layer's "
        "map upsampled to the image (bicubic) and averaged. Untick it and move the timeline to see a step; "
        "pick a layer (or click one in the U view) to see one resolution.</p>"
        "<p>With guidance above 1 the U-Net also runs on the negative (or empty) prompt: its maps are the "
        "baseline, and <i>cond − uncond</i> shows what the prompt changed.</p>"
        "<p><b>Click a pixel</b>: the words it attends to, and where it looks in the picture itself "
        "(self-attention of one layer at the shown step, computed again on demand — the run does not keep "
        "it).</p>"
        "<p><i>Keep value-weighted maps too</i>, then <i>Value-weighted</i>: each weight times the length "
        "of what its token sends through the head (‖v·W_O‖), rows renormalised — a token can draw attention "
        "and write almost nothing.</p>"
        "<p>Much of the attention goes to <i>&lt;start&gt;</i>, <i>&lt;end&gt;</i> and the padding after "
        "the prompt (an attention sink): show them with the check box. A prompt longer than 77 tokens is "
        "cut there, as the pipeline cuts it.</p>");
}

} // namespace attnlens::ui
