#pragma once
// The Text page's saved session (ui/shell/session.h), read in one place: what checkSession() checks is what
// the restore applies. Keys: model_dir (absent: the built-in model), input, new_tokens, ran, step, layer,
// head, fusion ("mean" | "max"), view (matrix | model | lines | heads | difference | embeddings), word_level,
// hide_special, off_heads ([[layer, head], …]), and how generated tokens are chosen: temperature (0: greedy),
// top_k, top_p, seed (absent: greedy); chat (the text as a user turn of the chat template); draft (the box's
// text when edited after the run), generated (the run's generated tokens, restored as many).

#include "core/analysis/attention_maps.h"
#include "core/models/text_generation.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <utility>
#include <vector>

namespace attnlens::ui {

class SessionReader;

struct TextSession {
    static const QStringList kViews; // the tabs' names, in tab order

    QString input; // what the run shown is of (the text box's text when nothing ran)
    // The text box's text when it differs from `input` (edited since the run; "" when cleared): back in the
    // box once the run is restored. Absent: the box shows `input`.
    std::optional<QString> draft;
    int newTokens = 0;
    bool ran = false;
    int generated = -1; // the run's generated tokens (more than new_tokens after "generate more"); -1: none
    int step = 0, layer = 0, head = -1;
    HeadFusion fusion = HeadFusion::Mean;
    QString view = QStringLiteral("matrix");
    bool valueWeighted = false;
    bool wordLevel = false, hideSpecial = false;
    std::vector<std::pair<int, int>> offHeads;
    Sampling sampling;
    bool chat = false;

    // The first problem is kept in `reader` (defaults returned for the rest).
    static TextSession parse(SessionReader& reader, int maxNewTokens);
    void write(QJsonObject& state) const; // every key but model_dir
};

} // namespace attnlens::ui
