#include "diffusion_driver.h"

#include "ui/diffusion/diffusion_page.h"

using attnlens::ui::DiffusionPage;

bool scriptInt(const QString& text, int& value) {
    bool ok = false;
    value = text.toInt(&ok);
    return ok;
}

QString applyDiffusionSettings(DiffusionPage* page, const DiffusionScript& script) {
    auto* doc = page->document();
    attnlens::ui::DiffusionSettings s = page->settingsFromControls();
    int v = 0;
    if (!script.seed.isEmpty()) {
        if (!scriptInt(script.seed, v) || v < 0)
            return QStringLiteral("--seed %1: expected a non-negative integer").arg(script.seed);
        s.seed = static_cast<uint64_t>(v);
    }
    if (!script.steps.isEmpty()) {
        if (!scriptInt(script.steps, v) || v < 1)
            return QStringLiteral("--steps %1: expected a positive integer").arg(script.steps);
        s.steps = v;
    }
    if (script.scheduler == QLatin1String("ddpm"))
        s.scheduler = attnlens::SchedulerKind::Ddpm;
    else if (script.scheduler == QLatin1String("ddim"))
        s.scheduler = attnlens::SchedulerKind::Ddim;
    else if (!script.scheduler.isEmpty())
        return QStringLiteral("--scheduler %1: expected ddim or ddpm").arg(script.scheduler);
    if (!script.className.isEmpty()) {
        int c = -1;
        if (!scriptInt(script.className, c)) {
            c = -1; // a name: look it up in the model's id2label
            for (int i = 0; i < doc->classCount(); ++i)
                if (doc->className(i) == script.className) c = i;
        }
        if (c < 0 || c >= doc->classCount())
            return QStringLiteral("--class %1: not a class of this model (0..%2)")
                .arg(script.className)
                .arg(doc->classCount() - 1);
        s.classLabel = c;
    }
    page->setSettings(s);
    return {};
}

QString applyDiffusionView(DiffusionPage* page, const DiffusionScript& script) {
    auto* doc = page->document();
    int v = 0;
    if (!script.layer.isEmpty()) {
        if (!scriptInt(script.layer, v) || v < 0 || v >= static_cast<int>(doc->layers().size()))
            return QStringLiteral("--layer %1: expected 0..%2")
                .arg(script.layer)
                .arg(static_cast<int>(doc->layers().size()) - 1);
        doc->setLayer(v);
    }
    if (!script.head.isEmpty()) {
        try {
            const attnlens::HeadSelection heads =
                attnlens::parseHeadSelection(script.head.toStdString(), doc->headCount());
            doc->setFusion(heads.fusion);
            doc->setHead(heads.head);
        } catch (const std::exception& e) {
            return QStringLiteral("--%1").arg(QString::fromUtf8(e.what()));
        }
    }
    if (!script.query.isEmpty()) {
        attnlens::PixelRegion r;
        try {
            r = attnlens::parsePixelRegion(script.query.toStdString());
        } catch (const std::exception& e) {
            return QStringLiteral("--%1").arg(QString::fromUtf8(e.what()));
        }
        if (r.row1 >= doc->imageHeight() || r.col1 >= doc->imageWidth())
            return QStringLiteral("--query %1: outside the %2×%3 image")
                .arg(script.query)
                .arg(doc->imageHeight())
                .arg(doc->imageWidth());
        doc->setQuery(r);
    }
    if (script.on == QLatin1String("xt") || script.on == QLatin1String("x0"))
        doc->setOnNoisy(script.on == QLatin1String("xt"));
    else if (!script.on.isEmpty())
        return QStringLiteral("--on %1: expected x0 or xt").arg(script.on);
    doc->setKeySide(script.keySide);
    if (!script.step.isEmpty()) {
        if (!scriptInt(script.step, v) || v < 0 || v >= doc->completedSteps())
            return QStringLiteral("--step %1: expected 0..%2")
                .arg(script.step)
                .arg(doc->completedSteps() - 1);
        doc->setCurrentStep(v);
    }
    return {};
}
