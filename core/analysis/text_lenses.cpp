#include "core/analysis/text_lenses.h"

#include "core/analysis/head_importance.h"
#include "core/util/error.h"

#include <cmath>
#include <utility>

namespace attnlens {

namespace {

// log softmax(row)[id], in double.
double logProbability(const RowMatrix& logits, int row, int id) {
    const auto r = logits.row(row);
    const float top = r.maxCoeff();
    const double z = (r.array() - top).exp().cast<double>().sum();
    return static_cast<double>(r(id) - top) - std::log(z);
}

// A pass that keeps no attention, with `off` switched off.
RunControls uncaptured(HeadList off = {}) {
    RunControls run;
    run.captureAttention = false;
    run.offHeads = std::move(off);
    return run;
}

} // namespace

TextTargets textTargets(const TextFolder& folder, const std::vector<int>& ids, int firstScored) {
    TextTargets out;
    const int n = static_cast<int>(ids.size());
    if (folder.decoderOnly()) {
        for (int t = std::max(1, firstScored); t < n; ++t)
            out.tokens.emplace_back(t, ids[static_cast<size_t>(t)]);
        const int count = static_cast<int>(out.tokens.size());
        out.description = firstScored > 1 ? "log p of the " + std::to_string(count) + " generated token(s)"
                                          : "log p of the text's " + std::to_string(count) + " next tokens";
        return out;
    }
    if (!folder.hasLmHead()) {
        out.description = "the change of the last hidden state, ‖h_off − h‖ / ‖h‖";
        return out;
    }
    const std::vector<int> masks = folder.maskPositions(ids);
    if (!masks.empty()) {
        const TextForward plain = folder.forward(ids, true, uncaptured());
        for (int t : masks) {
            Eigen::Index best = 0;
            plain.logits.row(t).maxCoeff(&best);
            out.tokens.emplace_back(t, static_cast<int>(best));
        }
        out.description = "log p of the top prediction at " + std::to_string(masks.size()) + " [MASK]";
        return out;
    }
    for (int t = 0; t < n; ++t)
        if (!folder.tokenizer->framesText(ids[static_cast<size_t>(t)]))
            out.tokens.emplace_back(t, ids[size_t(t)]);
    out.description = "log p of the text's own " + std::to_string(out.tokens.size()) + " tokens";
    return out;
}

double textLogProb(const TextFolder& folder, const std::vector<int>& ids, const TextTargets& targets,
                   const RunControls& run) {
    if (targets.tokens.empty()) throw Error("text log-probability: nothing to score");
    RunControls controls = run;
    controls.captureAttention = false;
    const TextForward f = folder.forward(ids, true, controls);
    const int shift = folder.decoderOnly() ? 1 : 0; // GPT-2: token t is predicted at row t − 1
    double sum = 0;
    for (const auto& [position, token] : targets.tokens)
        sum += logProbability(f.logits, position - shift, token);
    return sum;
}

RowMatrix textHeadImportance(const TextFolder& folder, const std::vector<int>& ids,
                             const TextTargets& targets, const Callbacks& callbacks, const HeadList& off) {
    const std::vector<int> heads(static_cast<size_t>(folder.layers()), folder.heads());
    const auto plus = [&](int l, int h) { // the run's heads off and (l, h)
        HeadList more = off;
        more.emplace_back(l, h);
        return uncaptured(std::move(more));
    };
    if (!targets.tokens.empty()) {
        const double base = textLogProb(folder, ids, targets, uncaptured(off));
        return measureEachHead(
            heads, [&](int l, int h) { return base - textLogProb(folder, ids, targets, plus(l, h)); },
            callbacks);
    }
    const RowMatrix base = folder.forward(ids, false, uncaptured(off)).hidden;
    const double norm = base.norm();
    return measureEachHead(
        heads,
        [&](int l, int h) {
            const double diff = (folder.forward(ids, false, plus(l, h)).hidden - base).norm();
            return norm > 0 ? diff / norm : diff;
        },
        callbacks);
}

AttentionInputs textAttentionInputs(const TextFolder& folder, const std::vector<int>& ids, int layer,
                                    const HeadList& offHeads) {
    if (layer < 0 || layer >= folder.layers())
        throw Error("layer " + std::to_string(layer) + " is outside the model's " +
                    std::to_string(folder.layers()) + " layers (numbered from 0)");
    AttentionInputs inputs;
    RunControls run = uncaptured(offHeads);
    run.probe = &inputs;
    run.probeLayer = layer;
    (void)folder.forward(ids, false, run);
    return inputs;
}

AttentionKind textAttentionKind(const TextFolder& folder) {
    return folder.decoderOnly() ? AttentionKind::DecoderSelf : AttentionKind::EncoderSelf;
}

} // namespace attnlens
