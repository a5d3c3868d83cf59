#include "t2i_driver.h"

#include "ui/t2i/t2i_page.h"
#include "ui/vision/map_grid_view.h"

#include <QTabWidget>

using attnlens::ui::TextToImagePage;

namespace {

QString applyWord(attnlens::ui::T2iDocument* doc, const QString& word) {
    const auto& words = doc->words();
    const int w = attnlens::t2iFindWord(words, word.toStdString());
    if (w < 0) return QStringLiteral("--word %1: not a word of the prompt").arg(word);
    if (words[size_t(w)].special()) doc->setShowSpecial(true);
    doc->setWord(w);
    return {};
}

} // namespace

QString applyT2iSettings(TextToImagePage* page, const T2iScript& script) {
    attnlens::ui::T2iSettings s = page->settingsFromControls();
    if (!script.prompt.isEmpty()) s.prompt = script.prompt;
    int v = 0;
    if (!script.d.seed.isEmpty()) {
        if (!scriptInt(script.d.seed, v) || v < 0)
            return QStringLiteral("--seed %1: expected a non-negative integer").arg(script.d.seed);
        s.seed = v;
    }
    if (!script.d.steps.isEmpty()) {
        if (!scriptInt(script.d.steps, v) || v < 1 || v > 1000)
            return QStringLiteral("--steps %1: expected 1..1000").arg(script.d.steps);
        s.steps = v;
    }
    if (!script.d.scheduler.isEmpty()) {
        s.sampler = attnlens::parseSamplerName(script.d.scheduler.toStdString());
        if (!s.sampler)
            return QStringLiteral("--scheduler %1: expected pndm, ddim, euler or dpm")
                .arg(script.d.scheduler);
    }
    page->setSettings(s);
    return {};
}

QString applyT2iView(TextToImagePage* page, const T2iScript& script) {
    auto* doc = page->document();
    int v = 0;
    if (!script.word.isEmpty())
        if (QString problem = applyWord(doc, script.word); !problem.isEmpty()) return problem;
    if (!script.d.step.isEmpty()) {
        if (!scriptInt(script.d.step, v) || v < 0 || v >= doc->completedSteps())
            return QStringLiteral("--step %1: expected 0..%2")
                .arg(script.d.step)
                .arg(doc->completedSteps() - 1);
        doc->setAllSteps(false);
        doc->setShownStep(v);
    }
    if (!script.d.layer.isEmpty()) {
        const int layers = static_cast<int>(doc->crossLayers().size());
        if (!scriptInt(script.d.layer, v) || v < 0 || v >= layers)
            return QStringLiteral("--layer %1: expected 0..%2").arg(script.d.layer).arg(layers - 1);
        doc->setLayer(v);
    }
    if (!script.d.head.isEmpty()) {
        try {
            doc->setHeads(attnlens::parseHeadSelection(script.d.head.toStdString()));
        } catch (const std::exception& e) {
            return QStringLiteral("--%1").arg(QString::fromUtf8(e.what()));
        }
    }
    if (!script.d.query.isEmpty()) {
        const QStringList rc = script.d.query.split(QLatin1Char(','));
        int row = 0, col = 0;
        if (rc.size() != 2 || !scriptInt(rc[0], row) || !scriptInt(rc[1], col) || row < 0 || col < 0 ||
            row >= doc->imageHeight() || col >= doc->imageWidth())
            return QStringLiteral("--query %1: expected ROW,COL inside the %2×%3 image")
                .arg(script.d.query)
                .arg(doc->imageHeight())
                .arg(doc->imageWidth());
        doc->setPixel(std::pair{row, col});
    }
    if (!script.view.isEmpty()) {
        const QStringList names{QStringLiteral("words"), QStringLiteral("steps"), QStringLiteral("u")};
        const int tab = static_cast<int>(names.indexOf(script.view));
        if (tab < 0) return QStringLiteral("--view %1: expected words, steps or u").arg(script.view);
        page->findChild<QTabWidget*>(QStringLiteral("tabs"))->setCurrentIndex(tab);
    }
    return {};
}
