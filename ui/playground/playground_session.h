#pragma once
// The Attention playground's saved session (ui/shell/session.h), read in one place: the whole worked example
// as the user left it. Inputs that a preset made are saved as the preset (and seed); edited ones value by
// value. Keys: length, d_model, d_value, heads, tokens, preset (worked_example | random | identity | edited),
// seed, q / k / v / w_o (edited only), mask (none | causal | padding | custom), padding, custom_mask, head,
// focus
// ([query, key]), tab, color_map, weights_auto_range.

#include "core/export/colormap.h"
#include "ui/playground/playground_model.h"
#include "ui/shell/session.h"

#include <QJsonObject>
#include <QStringList>

#include <array>

namespace attnlens::ui {

struct PlaygroundSession {
    QStringList tokens;
    int n = 4, dModel = 4, dValue = 4, heads = 1, seed = 1, padding = 1, head = 0, query = 0, key = 0,
        tab = 0;
    QString preset, mask;
    ColorMap colorMap = ColorMap::Viridis;
    std::array<QList<QList<double>>, 4> inputs; // when edited
    QList<QList<double>> customMask;
    bool weightsAuto = false;
    bool valueWeighted = false; // stage ④ value-weighted

    // The first problem is kept in `reader` (defaults returned for the rest).
    static PlaygroundSession parse(const QJsonObject& state, SessionReader& reader);
    // The example's part of a session from the model (the page adds tab, colours and range).
    static void writeModel(const PlaygroundModel& model, QJsonObject& state);
    // The example back into the model: the preset first (it fills the whole store), then the sizes that show
    // part of it, the edited values, the mask, the head and the focus.
    void applyTo(PlaygroundModel& model) const;
};

} // namespace attnlens::ui
