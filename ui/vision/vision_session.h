#pragma once
// The Vision page's saved session (ui/shell/session.h), read in one place: what checkSession() checks is what
// the restore applies. Keys: model_dir (absent: the built-in model), image_path or image_png (a pasted
// picture itself, PNG in base64: nothing the user made is lost), query ("cls" or patch indices; "register": R
// when a register is the query), reduce,
// key_side, layer, head, fusion, rollout, flow, token_norms, opacity, color_map, smooth, ablated ([[layer,
// head], …]), pinned; with CLIP texts typed: clip_texts ("a dog | a cat"), text_map (−1: attention),
// text_relevance.

#include "core/analysis/attention_maps.h"
#include "core/contract/run_controls.h"
#include "core/export/colormap.h"
#include "core/vision/image_io.h"
#include "ui/shell/session.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <optional>
#include <string>
#include <vector>

namespace attnlens::ui {

class VisionDocument;

struct VisionSession {
    QString imagePath;
    QByteArray imagePng;
    // The view (applyView) and the look (applyLook).
    bool cls = true;
    std::vector<int> patches;
    int queryRegister = -1; // a register as the query (key "register")
    TokenReduce reduce = TokenReduce::Sum;
    bool keySide = false, rollout = false, flow = false, tokenNorms = false;
    int layer = -1, head = -1;
    HeadFusion fusion = HeadFusion::Mean;
    double opacity = 0.6;
    ColorMap colorMap = ColorMap::Inferno;
    bool smooth = false;
    HeadList ablated;
    std::optional<PinnedMap> pinned;
    std::vector<std::string> texts;
    int textMap = -1;
    bool textRelevance = false;

    // The first problem is kept in `reader` (defaults returned for the rest).
    static VisionSession parse(const QJsonObject& state, SessionReader& reader);
    // The document's view and look (the page adds the picture, heads off and the pin).
    static VisionSession capture(const VisionDocument& doc);
    static QByteArray png(const ImageU8& image);
    void write(QJsonObject& state) const;      // every key but model_dir
    void applyLook(VisionDocument& doc) const; // and the texts, which the picture's analysis reads
    void applyView(VisionDocument& doc) const; // once the picture is analysed
};

} // namespace attnlens::ui
