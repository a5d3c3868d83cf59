// DiffusionPage's saved sessions (ui/shell/session.h). A run is deterministic for its model, class, seed,
// scheduler and step count, so the session keeps those and the run is made again on restore; then the step
// shown, the query and the map's settings come back.

#include "core/diffusion/unet_maps.h"
#include "core/export/colormap.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/page_message.h"

#include <QFileInfo>

namespace attnlens::ui {

namespace {

constexpr int kMaxLayers = 1024;

struct State {
    QString scheduler;
    int steps = 50, seed = 1, classLabel = -1;
    bool generated = false;
    int step = -1, layer = 0, head = -1;
    QString fusion;
    ColorMap colorMap = ColorMap::Viridis;
    std::optional<PixelRegion> query;
    bool keySide = false, onNoisy = false;
    double opacity = 0.6;
    std::vector<std::pair<int, int>> ablated;
    std::optional<PinnedMap> pinned;
};

State parse(SessionReader& r) {
    State s;
    (void)r.string("model_dir");
    s.scheduler = r.choice("scheduler", "ddim", {"ddim", "ddpm"});
    s.steps = r.integer("steps", 50, 1, 1000);
    s.seed = r.integer("seed", 1, 0, 2147483647);
    s.classLabel = r.integer("class", -1, -1, 1 << 20);
    s.generated = r.boolean("generated", false);
    s.step = r.integer("step", -1, -1, 1000);
    s.layer = r.integer("layer", 0, 0, kMaxLayers);
    s.head = r.integer("head", -1, -1, kMaxLayers);
    s.fusion = r.choice("fusion", "mean", {"mean", "max", "min"});
    if (r.has("query")) {
        const QList<int> q = r.integers("query", 0, 1 << 16, 4);
        if (r.ok()) s.query = PixelRegion{q[0], q[1], q[2], q[3]};
    }
    s.keySide = r.boolean("key_side", false);
    s.onNoisy = r.boolean("on_noisy", false);
    s.opacity = r.number("opacity", 0.6, 0.0, 1.0);
    s.colorMap = readColorMap(r, "color_map", ColorMap::Viridis);
    s.ablated = readHeadPairs(r, "ablated");
    s.pinned = readPinnedMap(r, "pinned");
    return s;
}

} // namespace

QJsonObject DiffusionPage::saveSession() const {
    QJsonObject s;
    saveModelDir(s, loadedModelDir(), ModelKind::Diffusion);
    const DiffusionSettings settings = m_doc->hasRun() ? m_doc->settings() : settingsFromControls();
    s.insert("scheduler", settings.scheduler == SchedulerKind::Ddpm ? "ddpm" : "ddim");
    s.insert("steps", settings.steps);
    s.insert("seed", static_cast<qint64>(settings.seed));
    if (settings.classLabel) s.insert("class", *settings.classLabel);
    s.insert("generated", m_doc->hasRun());
    s.insert("step", m_doc->currentStep());
    s.insert("layer", m_doc->layer());
    s.insert("head", m_doc->head());
    s.insert("fusion", QString::fromLatin1(headFusionName(m_doc->fusion()).data()));
    const PixelRegion q = m_doc->query();
    s.insert("query", QJsonArray{q.row0, q.col0, q.row1, q.col1});
    s.insert("key_side", m_doc->keySide());
    s.insert("on_noisy", m_doc->onNoisy());
    s.insert("opacity", double(m_doc->opacity()));
    s.insert("color_map", colorMapId(m_doc->colorMap()));
    if (!m_ablated.empty()) s.insert("ablated", headPairsToJson(m_ablated));
    if (m_difference && m_difference->hasPin())
        s.insert("pinned", pinnedMapToJson(m_difference->pinnedMap(), m_difference->pinnedDescription()));
    return s;
}

QString DiffusionPage::checkSession(const QJsonObject& state) const {
    SessionReader r(state, QStringLiteral("pages.diffusion"));
    (void)parse(r);
    return r.error();
}

bool DiffusionPage::restoreInputs(const QJsonObject& state) {
    SessionReader r(state, QStringLiteral("pages.diffusion"));
    const State s = parse(r);
    if (!r.ok()) {
        showError(r.error());
        return false;
    }
    setPlaying(false);
    m_firstShow = false; // the session decides whether there is a run
    m_generateWhenLoaded = false;
    m_doc->setOpacity(static_cast<float>(s.opacity));
    m_doc->setColorMap(s.colorMap);
    return true;
}

void DiffusionPage::continueRestore() {
    if (!restoreState()) return;
    SessionReader r(*restoreState(), QStringLiteral("pages.diffusion"));
    const State s = parse(r);
    if (!m_doc->model()) {
        endRestore();
        showError(tr("Session restored without a model: open a diffusion model with File → Open model…"));
        return;
    }
    DiffusionSettings settings;
    settings.scheduler = s.scheduler == QLatin1String("ddpm") ? SchedulerKind::Ddpm : SchedulerKind::Ddim;
    settings.steps = s.steps;
    settings.seed = static_cast<uint64_t>(s.seed);
    if (s.classLabel >= 0) settings.classLabel = s.classLabel;
    setSettings(settings);
    if (s.generated)
        generate(); // then applyRestoredView()
    else
        applyRestoredView();
}

void DiffusionPage::applyRestoredView() {
    if (!restoreState()) return;
    SessionReader r(*restoreState(), QStringLiteral("pages.diffusion"));
    const State s = parse(r);
    endRestore();
    if (s.step >= 0) m_doc->setCurrentStep(s.step);
    m_doc->setLayer(s.layer);
    m_doc->setFusion(*parseHeadFusion(s.fusion.toStdString()));
    m_doc->setHead(s.head);
    if (s.query) m_doc->setQuery(*s.query);
    m_doc->setKeySide(s.keySide);
    m_doc->setOnNoisy(s.onNoisy);
    syncControls();
    if (!s.ablated.empty()) setAblatedHeads(s.ablated);
    if (s.pinned) pinMapAs(s.pinned->map, s.pinned->description);
    showNotice(tr("Session restored."));
}

} // namespace attnlens::ui
