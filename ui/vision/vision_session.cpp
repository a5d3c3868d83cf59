#include "ui/vision/vision_session.h"

#include "core/util/error.h"
#include "ui/vision/vision_document.h"

#include <QBuffer>
#include <QImage>
#include <QJsonArray>

namespace attnlens::ui {

namespace {

constexpr int kMaxLayers = 1024;

} // namespace

VisionSession VisionSession::parse(const QJsonObject& o, SessionReader& r) {
    VisionSession s;
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
    s.queryRegister = r.integer("register", -1, -1, 1 << 10);
    s.reduce = r.choice("reduce", "sum", {"sum", "mean"}) == QLatin1String("mean") ? TokenReduce::Mean
                                                                                   : TokenReduce::Sum;
    s.keySide = r.boolean("key_side", false);
    s.layer = r.integer("layer", -1, -1, kMaxLayers);
    s.head = r.integer("head", -1, -1, kMaxLayers);
    s.fusion = *parseHeadFusion(r.choice("fusion", "mean", {"mean", "max", "min"}).toStdString());
    s.rollout = r.boolean("rollout", false);
    s.flow = r.boolean("flow", false);
    s.tokenNorms = r.boolean("token_norms", false);
    s.opacity = r.number("opacity", 0.6, 0.0, 1.0);
    s.colorMap = readColorMap(r, "color_map", ColorMap::Inferno);
    s.smooth = r.boolean("smooth", false);
    s.ablated = readHeadPairs(r, "ablated");
    s.pinned = readPinnedMap(r, "pinned");
    try {
        s.texts = splitClipTexts(r.string("clip_texts").toStdString());
    } catch (const Error& e) {
        r.fail("clip_texts", QString::fromStdString(e.what()));
    }
    s.textMap = r.integer("text_map", -1, -1, kMaxClipTexts - 1);
    s.textRelevance = r.boolean("text_relevance", false);
    return s;
}

VisionSession VisionSession::capture(const VisionDocument& doc) {
    VisionSession s;
    s.cls = doc.query() == VisionDocument::Query::Cls;
    s.patches = doc.patches();
    if (doc.query() == VisionDocument::Query::Register) s.queryRegister = doc.queryRegister();
    s.reduce = doc.reduce();
    s.keySide = doc.keySide();
    s.layer = doc.layer();
    s.head = doc.head();
    s.fusion = doc.fusion();
    s.rollout = doc.rollout();
    s.flow = doc.flow();
    s.tokenNorms = doc.tokenNorms();
    s.opacity = doc.opacity();
    s.colorMap = doc.colorMap();
    s.smooth = doc.smooth();
    s.texts = doc.texts();
    s.textMap = doc.textMapShown() ? doc.textMap() : -1;
    s.textRelevance = doc.textRelevance();
    return s;
}

QByteArray VisionSession::png(const ImageU8& image) {
    const QImage picture(image.pixels.data(), image.width, image.height, image.width * image.channels,
                         image.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    picture.save(&buffer, "PNG");
    return bytes;
}

void VisionSession::write(QJsonObject& s) const {
    if (!imagePath.isEmpty())
        s.insert("image_path", imagePath);
    else if (!imagePng.isEmpty())
        s.insert("image_png", QString::fromLatin1(imagePng.toBase64()));
    if (cls) {
        s.insert("query", "cls");
    } else {
        QJsonArray list;
        for (int p : patches)
            list.append(p);
        s.insert("query", list);
    }
    if (queryRegister >= 0) s.insert("register", queryRegister);
    s.insert("reduce", reduce == TokenReduce::Mean ? "mean" : "sum");
    s.insert("key_side", keySide);
    s.insert("layer", layer);
    s.insert("head", head);
    s.insert("fusion", QString::fromLatin1(headFusionName(fusion).data()));
    s.insert("rollout", rollout);
    s.insert("flow", flow);
    s.insert("token_norms", tokenNorms);
    s.insert("opacity", opacity);
    s.insert("color_map", colorMapId(colorMap));
    s.insert("smooth", smooth);
    if (!ablated.empty()) s.insert("ablated", headPairsToJson(ablated));
    if (pinned) s.insert("pinned", pinnedMapToJson(pinned->map, pinned->description));
    if (!texts.empty()) {
        QStringList line;
        for (const std::string& t : texts)
            line << QString::fromStdString(t);
        s.insert("clip_texts", line.join(QStringLiteral(" | ")));
        s.insert("text_map", textMap);
        s.insert("text_relevance", textRelevance);
    }
}

void VisionSession::applyLook(VisionDocument& doc) const {
    doc.setOpacity(static_cast<float>(opacity));
    doc.setColorMap(colorMap);
    doc.setSmooth(smooth);
    doc.setTexts(texts);
}

void VisionSession::applyView(VisionDocument& doc) const {
    if (queryRegister >= 0)
        doc.selectRegister(queryRegister);
    else if (cls)
        doc.selectCls();
    else
        doc.selectPatches(patches);
    doc.setReduce(reduce);
    doc.setKeySide(keySide);
    if (layer >= 0) doc.setLayer(layer);
    doc.setFusion(fusion);
    doc.setHead(head);
    if (flow)
        doc.setFlow(true);
    else if (tokenNorms)
        doc.setTokenNorms(true);
    else
        doc.setRollout(rollout);
    doc.setTextRelevance(textRelevance);
    if (textMap >= 0) doc.setTextMap(textMap);
}

} // namespace attnlens::ui
