#include "ui/text/text_session.h"

#include "ui/shell/session.h"

namespace attnlens::ui {

const QStringList TextSession::kViews{"matrix", "model", "lines", "heads", "difference", "embeddings"};

TextSession TextSession::parse(SessionReader& r, int maxNewTokens) {
    TextSession s;
    (void)r.string("model_dir");
    s.input = r.string("input");
    s.newTokens = r.integer("new_tokens", 0, 0, maxNewTokens);
    s.ran = r.boolean("ran", false);
    s.step = r.integer("step", 0, 0, 100000);
    s.layer = r.integer("layer", 0, 0, 1024);
    s.head = r.integer("head", -1, -1, 1024);
    s.fusion = r.choice("fusion", "mean", {"mean", "max"}) == QLatin1String("max") ? HeadFusion::Max
                                                                                   : HeadFusion::Mean;
    s.view = r.choice("view", "matrix", kViews);
    s.wordLevel = r.boolean("word_level", false);
    s.hideSpecial = r.boolean("hide_special", false);
    s.offHeads = readHeadPairs(r, "off_heads");
    return s;
}

void TextSession::write(QJsonObject& s) const {
    s.insert("input", input);
    s.insert("new_tokens", newTokens);
    s.insert("ran", ran);
    s.insert("step", step);
    s.insert("layer", layer);
    s.insert("head", head);
    s.insert("fusion", fusion == HeadFusion::Max ? "max" : "mean");
    s.insert("view", view);
    s.insert("word_level", wordLevel);
    s.insert("hide_special", hideSpecial);
    if (!offHeads.empty()) s.insert("off_heads", headPairsToJson(offHeads));
}

} // namespace attnlens::ui
