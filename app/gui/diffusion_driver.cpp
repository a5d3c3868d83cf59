#include "diffusion_driver.h"

#include "ui/diffusion/diffusion_page.h"

#include <QRegularExpression>

using attnlens::ui::DiffusionPage;

namespace {

bool toInt(const QString& text, int& value) {
    bool ok = false;
    value = text.toInt(&ok);
    return ok;
}

} // namespace

QString applyDiffusionSettings(DiffusionPage* page, const DiffusionScript& script) {
    auto* doc = page->document();
    attnlens::ui::DiffusionSettings s = page->settingsFromControls();
    int v = 0;
    if (!script.seed.isEmpty()) {
        if (!toInt(script.seed, v) || v < 0) return QStringLiteral("--seed %1: expected a non-negative integer").arg(script.seed);
        s.seed = static_cast<uint64_t>(v);
    }
    if (!script.steps.isEmpty()) {
        if (!toInt(script.steps, v) || v < 1) return QStringLiteral("--steps %1: expected a positive integer").arg(script.steps);
        s.steps = v;
    }
    if (script.scheduler == QLatin1String("ddpm")) s.scheduler = attnlens::SchedulerKind::Ddpm;
    else if (script.scheduler == QLatin1String("ddim")) s.scheduler = attnlens::SchedulerKind::Ddim;
    else if (!script.scheduler.isEmpty()) return QStringLiteral("--scheduler %1: expected ddim or ddpm").arg(script.scheduler);
    if (!script.className.isEmpty()) {
        int c = -1;
        if (!toInt(script.className, c))
            for (int i = 0; i < doc->classCount(); ++i)
                if (doc->className(i) == script.className) c = i;
        if (c < 0 || c >= doc->classCount())
            return QStringLiteral("--class %1: not a class of this model (0..%2)").arg(script.className).arg(doc->classCount() - 1);
        s.classLabel = c;
    }
    page->setSettings(s);
    return {};
}

QString applyDiffusionView(DiffusionPage* page, const DiffusionScript& script) {
    auto* doc = page->document();
    int v = 0;
    if (!script.layer.isEmpty()) {
        if (!toInt(script.layer, v) || v < 0 || v >= static_cast<int>(doc->layers().size()))
            return QStringLiteral("--layer %1: expected 0..%2").arg(script.layer).arg(static_cast<int>(doc->layers().size()) - 1);
        doc->setLayer(v);
    }
    if (script.head == QLatin1String("mean") || script.head == QLatin1String("max")) {
        doc->setFusion(script.head == QLatin1String("mean") ? attnlens::HeadFusion::Mean : attnlens::HeadFusion::Max);
        doc->setHead(-1);
    } else if (!script.head.isEmpty()) {
        if (!toInt(script.head, v) || v < 0 || v >= doc->headCount())
            return QStringLiteral("--head %1: expected 0..%2, mean or max").arg(script.head).arg(doc->headCount() - 1);
        doc->setHead(v);
    }
    if (!script.query.isEmpty()) {
        const auto m = QRegularExpression(QStringLiteral("^(\\d+),(\\d+)(?::(\\d+),(\\d+))?$")).match(script.query);
        if (!m.hasMatch()) return QStringLiteral("--query %1: expected ROW,COL or ROW0,COL0:ROW1,COL1").arg(script.query);
        attnlens::PixelRegion r{m.captured(1).toInt(), m.captured(2).toInt(), m.captured(1).toInt(), m.captured(2).toInt()};
        if (m.lastCapturedIndex() == 4) {
            r.row1 = m.captured(3).toInt();
            r.col1 = m.captured(4).toInt();
        }
        if (r.row1 >= doc->imageHeight() || r.col1 >= doc->imageWidth() || r.row1 < r.row0 || r.col1 < r.col0)
            return QStringLiteral("--query %1: outside the %2×%3 image").arg(script.query).arg(doc->imageHeight()).arg(doc->imageWidth());
        doc->setQuery(r);
    }
    if (script.on == QLatin1String("xt") || script.on == QLatin1String("x0")) doc->setOnNoisy(script.on == QLatin1String("xt"));
    else if (!script.on.isEmpty()) return QStringLiteral("--on %1: expected x0 or xt").arg(script.on);
    doc->setKeySide(script.keySide);
    if (!script.step.isEmpty()) {
        if (!toInt(script.step, v) || v < 0 || v >= doc->completedSteps())
            return QStringLiteral("--step %1: expected 0..%2").arg(script.step).arg(doc->completedSteps() - 1);
        doc->setCurrentStep(v);
    }
    return {};
}
