#pragma once
// The Translate page's saved session (ui/shell/session.h), read in one place: what checkSession() checks is
// what the restore applies. Restored in stages — the model loads, the sentence is translated with the saved
// settings and heads off, the decoding goes to the saved step, then the selection, view options and tab are
// set and the pinned matrix comes back. Keys: model_dir (absent: the built-in model), input, beam_width,
// max_new_tokens, translated, step, view, kind, layer, head, fusion, through, word_level, hide_special,
// beam_node, sentence and whole_input (a paragraph's sentence shown, SentenceBar), selected
// ({side, index}), ablation ({encoder|decoder|cross: [[layer, head], …]}), pinned ({values, rows, columns,
// description}).

#include "core/analysis/attention_diff.h"
#include "core/models/marian_model.h"
#include "ui/shell/session.h"
#include "ui/translate/translation_document.h"

#include <QJsonObject>
#include <QStringList>

#include <array>
#include <optional>

namespace attnlens::ui {

struct TranslateSession {
    static const QStringList kViews; // the tabs' names, in tab order

    QString input; // what the translation shown is of (the input box's text when nothing is translated)
    // The input box's text when it differs from `input` (edited since it was translated; "" when cleared):
    // given back to the box once the translation is restored. Absent: the box shows `input`.
    std::optional<QString> draft;
    int sentence = 0; // the paragraph's sentence the views show (from 0)
    bool wholeInput = false;
    int beamWidth = 1, maxNewTokens = 0;
    bool translated = false;
    int step = -1;
    QString view = QStringLiteral("matrix");
    // The document's selection (capture / applyView).
    AttentionKind kind = AttentionKind::Cross;
    int layer = 0, head = -1, beamNode = -1;
    HeadFusion fusion = HeadFusion::Mean;
    TranslationDocument::Through through = TranslationDocument::Through::Layer;
    bool wordLevel = false, hideSpecial = false, valueWeighted = false;
    std::optional<TokenRef> selected;
    std::array<HeadList, 3> ablation; // encoder, decoder, cross
    std::optional<LabelledMatrix> pinned;
    QString pinnedDescription;

    // The first problem is kept in `reader` (defaults returned for the rest).
    static TranslateSession parse(const QJsonObject& state, SessionReader& reader, int maxBeam,
                                  int maxLength);
    static TranslateSession capture(const TranslationDocument& doc);
    void write(QJsonObject& state) const; // every key but model_dir
    void applyView(TranslationDocument& doc) const;
    // The heads off as this model's ablation; throws attnlens::Error when they do not fit it.
    MarianAblation ablationFor(const MarianConfig& config) const;
    void setAblation(const MarianAblation& ablation);
};

} // namespace attnlens::ui
