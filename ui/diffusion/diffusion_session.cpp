#include "ui/diffusion/diffusion_session.h"

#include <QJsonArray>

namespace attnlens::ui {

namespace {

constexpr int kMaxLayers = 1024;

} // namespace

DiffusionSession DiffusionSession::parse(SessionReader& r) {
    DiffusionSession s;
    (void)r.string("model_dir");
    s.settings.scheduler = r.choice("scheduler", "ddim", {"ddim", "ddpm"}) == QLatin1String("ddpm")
                               ? SchedulerKind::Ddpm
                               : SchedulerKind::Ddim;
    s.settings.steps = r.integer("steps", 50, 1, 1000);
    s.settings.seed = static_cast<uint64_t>(r.integer("seed", 1, 0, 2147483647));
    if (const int label = r.integer("class", -1, -1, 1 << 20); label >= 0) s.settings.classLabel = label;
    s.generated = r.boolean("generated", false);
    s.step = r.integer("step", -1, -1, 1000);
    s.layer = r.integer("layer", 0, 0, kMaxLayers);
    s.head = r.integer("head", -1, -1, kMaxLayers);
    s.fusion = *parseHeadFusion(r.choice("fusion", "mean", {"mean", "max", "min"}).toStdString());
    if (r.has("query")) {
        const QList<int> q = r.integers("query", 0, 1 << 16, 4);
        if (r.ok()) s.query = PixelRegion{q[0], q[1], q[2], q[3]};
    }
    s.keySide = r.boolean("key_side", false);
    s.onNoisy = r.boolean("on_noisy", false);
    s.valueWeighted = r.boolean("value_weighted", false);
    s.opacity = r.number("opacity", 0.6, 0.0, 1.0);
    s.colorMap = readColorMap(r, "color_map", ColorMap::Viridis);
    s.ablated = readHeadPairs(r, "ablated");
    s.pinned = readPinnedMap(r, "pinned");
    return s;
}

DiffusionSession DiffusionSession::capture(const DiffusionDocument& doc) {
    DiffusionSession s;
    s.generated = doc.hasRun();
    s.step = doc.currentStep();
    s.layer = doc.layer();
    s.head = doc.head();
    s.fusion = doc.fusion();
    s.query = doc.query();
    s.keySide = doc.keySide();
    s.onNoisy = doc.onNoisy();
    s.valueWeighted = doc.valueWeighted();
    s.opacity = doc.opacity();
    s.colorMap = doc.colorMap();
    return s;
}

void DiffusionSession::write(QJsonObject& s) const {
    s.insert("scheduler", settings.scheduler == SchedulerKind::Ddpm ? "ddpm" : "ddim");
    s.insert("steps", settings.steps);
    s.insert("seed", static_cast<qint64>(settings.seed));
    if (settings.classLabel) s.insert("class", *settings.classLabel);
    s.insert("generated", generated);
    s.insert("step", step);
    s.insert("layer", layer);
    s.insert("head", head);
    s.insert("fusion", QString::fromLatin1(headFusionName(fusion).data()));
    if (query) s.insert("query", QJsonArray{query->row0, query->col0, query->row1, query->col1});
    s.insert("key_side", keySide);
    s.insert("on_noisy", onNoisy);
    s.insert("value_weighted", valueWeighted);
    s.insert("opacity", opacity);
    s.insert("color_map", colorMapId(colorMap));
    if (!ablated.empty()) s.insert("ablated", headPairsToJson(ablated));
    if (pinned) s.insert("pinned", pinnedMapToJson(pinned->map, pinned->description));
}

void DiffusionSession::applyLook(DiffusionDocument& doc) const {
    doc.setOpacity(static_cast<float>(opacity));
    doc.setColorMap(colorMap);
}

void DiffusionSession::applyView(DiffusionDocument& doc) const {
    if (step >= 0) doc.setCurrentStep(step);
    doc.setLayer(layer);
    doc.setFusion(fusion);
    doc.setHead(head);
    if (query) doc.setQuery(*query);
    doc.setKeySide(keySide);
    doc.setOnNoisy(onNoisy);
    doc.setValueWeighted(valueWeighted);
}

} // namespace attnlens::ui
