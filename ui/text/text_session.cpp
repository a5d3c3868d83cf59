#include "ui/text/text_session.h"

#include "ui/shell/session.h"

namespace attnlens::ui {

const QStringList TextSession::kViews{"matrix",     "model",      "lines", "heads",
                                      "difference", "embeddings", "lens",  "kv"};

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
    s.valueWeighted = r.boolean("value_weighted", false);
    s.offHeads = readHeadPairs(r, "off_heads");
    s.sampling.temperature = static_cast<float>(r.number("temperature", 0.0, 0.0, 5.0));
    s.sampling.topK = r.integer("top_k", 0, 0, 100000);
    s.sampling.topP = static_cast<float>(r.number("top_p", 1.0, 0.01, 1.0));
    s.sampling.seed = static_cast<uint64_t>(r.integer("seed", 0, 0, 2147483647));
    s.chat = r.boolean("chat", false);
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
    s.insert("value_weighted", valueWeighted);
    s.insert("hide_special", hideSpecial);
    if (!offHeads.empty()) s.insert("off_heads", headPairsToJson(offHeads));
    if (chat) s.insert("chat", true);
    if (!sampling.greedy()) {
        s.insert("temperature", double(sampling.temperature));
        s.insert("top_k", sampling.topK);
        s.insert("top_p", double(sampling.topP));
        s.insert("seed", static_cast<qint64>(sampling.seed));
    }
}

} // namespace attnlens::ui
