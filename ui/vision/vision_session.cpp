// VisionPage's saved sessions (ui/shell/session.h): the model, the picture, the query and the map's settings.
// A pasted picture has no file, so the session holds the picture itself (PNG, base64) — nothing the user made
// is lost.

#include "core/export/colormap.h"
#include "core/io/model_folder.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/map_difference_window.h"
#include "ui/widgets/page_message.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>

namespace attnlens::ui {

namespace {

constexpr int kMaxLayers = 1024;

struct State {
    QString imagePath;
    QByteArray imagePng;
    bool cls = true;
    std::vector<int> patches;
    QString reduce, fusion;
    ColorMap colorMap = ColorMap::Inferno;
    bool keySide = false, rollout = false, flow = false, smooth = false;
    int layer = -1, head = -1;
    double opacity = 0.6;
    std::vector<std::pair<int, int>> ablated;
    std::optional<PinnedMap> pinned;
};

State parse(const QJsonObject& o, SessionReader& r) {
    State s;
    (void)r.string("model_dir");
    s.imagePath = r.string("image_path");
    if (r.has("image_png")) {
        s.imagePng =
            QByteArray::fromBase64(r.string("image_png").toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        if (r.ok() && (s.imagePng.isEmpty() || QImage::fromData(s.imagePng, "PNG").isNull()))
            r.fail("image_png", "not a PNG picture in base64");
    }
    const QJsonValue query = o.value("query");
    if (!o.contains("query") || query.toString() == QLatin1String("cls")) {
        s.cls = true;
    } else if (query.isArray()) {
        s.cls = false;
        for (int p : r.integers("query", 0, 1 << 20))
            s.patches.push_back(p);
    } else {
        r.fail("query", "expected \"cls\" or an array of patch indices");
    }
    s.reduce = r.choice("reduce", "sum", {"sum", "mean"});
    s.keySide = r.boolean("key_side", false);
    s.layer = r.integer("layer", -1, -1, kMaxLayers);
    s.head = r.integer("head", -1, -1, kMaxLayers);
    s.fusion = r.choice("fusion", "mean", {"mean", "max", "min"});
    s.rollout = r.boolean("rollout", false);
    s.flow = r.boolean("flow", false);
    s.opacity = r.number("opacity", 0.6, 0.0, 1.0);
    s.colorMap = readColorMap(r, "color_map", ColorMap::Inferno);
    s.smooth = r.boolean("smooth", false);
    s.ablated = readHeadPairs(r, "ablated");
    s.pinned = readPinnedMap(r, "pinned");
    return s;
}

} // namespace

QJsonObject VisionPage::saveSession() const {
    QJsonObject s;
    saveModelDir(s, loadedModelDir(), ModelKind::Vit);
    if (!m_lastImagePath.isEmpty()) {
        s.insert("image_path", QFileInfo(m_lastImagePath).absoluteFilePath());
    } else if (!m_lastImage.empty()) { // pasted: the picture itself
        QImage image(m_lastImage.pixels.data(), m_lastImage.width, m_lastImage.height,
                     m_lastImage.width * m_lastImage.channels,
                     m_lastImage.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888);
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        image.save(&buffer, "PNG");
        s.insert("image_png", QString::fromLatin1(png.toBase64()));
    }
    if (m_doc->query() == VisionDocument::Query::Cls) {
        s.insert("query", "cls");
    } else {
        QJsonArray patches;
        for (int p : m_doc->patches())
            patches.append(p);
        s.insert("query", patches);
    }
    s.insert("reduce", m_doc->reduce() == TokenReduce::Mean ? "mean" : "sum");
    s.insert("key_side", m_doc->keySide());
    s.insert("layer", m_doc->layer());
    s.insert("head", m_doc->head());
    s.insert("fusion", QString::fromLatin1(headFusionName(m_doc->fusion()).data()));
    s.insert("rollout", m_doc->rollout());
    s.insert("flow", m_doc->flow());
    s.insert("opacity", double(m_doc->opacity()));
    s.insert("color_map", colorMapId(m_doc->colorMap()));
    s.insert("smooth", m_doc->smooth());
    if (!m_ablated.empty()) s.insert("ablated", headPairsToJson(m_ablated));
    if (m_difference && m_difference->hasPin())
        s.insert("pinned", pinnedMapToJson(m_difference->pinnedMap(), m_difference->pinnedDescription()));
    return s;
}

QString VisionPage::checkSession(const QJsonObject& state) const {
    SessionReader r(state, QStringLiteral("pages.vision"));
    (void)parse(state, r);
    return r.error();
}

bool VisionPage::restoreInputs(const QJsonObject& state) {
    SessionReader r(state, QStringLiteral("pages.vision"));
    const State s = parse(state, r);
    if (!r.ok()) {
        showError(r.error());
        return false;
    }
    m_pendingSample.clear();
    m_doc->setOpacity(static_cast<float>(s.opacity));
    m_doc->setColorMap(s.colorMap);
    m_doc->setSmooth(s.smooth);
    return true;
}

void VisionPage::continueRestore() {
    if (!restoreState()) return;
    SessionReader r(*restoreState(), QStringLiteral("pages.vision"));
    const State s = parse(*restoreState(), r);
    const int layers = m_doc->numLayers(), heads = m_doc->numHeads();
    m_ablated.clear();
    for (const auto& [l, h] : s.ablated)
        if (l < layers && h < heads) m_ablated.emplace_back(l, h);
    if (m_ablated.size() != s.ablated.size())
        showError(tr("Some of the session's heads switched off do not exist in this model."));
    refreshAblationNote();
    if (!m_doc->model()) {
        endRestore();
        showError(tr("Session restored without a model: open a vision model with File → Open model…"));
    } else if (!s.imagePath.isEmpty()) {
        openImage(s.imagePath); // then applyRestoredView()
    } else if (!s.imagePng.isEmpty()) {
        openImage(QImage::fromData(s.imagePng, "PNG"), tr("pasted image"));
    } else {
        applyRestoredView();
    }
}

void VisionPage::applyRestoredView() {
    if (!restoreState()) return;
    SessionReader r(*restoreState(), QStringLiteral("pages.vision"));
    const State s = parse(*restoreState(), r);
    endRestore();
    if (s.cls)
        m_doc->selectCls();
    else
        m_doc->selectPatches(s.patches);
    m_doc->setReduce(s.reduce == QLatin1String("mean") ? TokenReduce::Mean : TokenReduce::Sum);
    m_doc->setKeySide(s.keySide);
    if (s.layer >= 0) m_doc->setLayer(s.layer);
    m_doc->setFusion(*parseHeadFusion(s.fusion.toStdString()));
    m_doc->setHead(s.head);
    if (s.flow)
        m_doc->setFlow(true);
    else
        m_doc->setRollout(s.rollout);
    syncControls();
    if (s.pinned) pinMapAs(s.pinned->map, s.pinned->description);
    showNotice(tr("Session restored."));
}

} // namespace attnlens::ui
