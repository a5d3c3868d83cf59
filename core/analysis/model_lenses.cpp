#include "core/analysis/model_lenses.h"

#include "core/util/error.h"

#include <string>

namespace attnlens {

std::vector<LogitLens> marianLogitLens(const MarianModel& model, const MarianEncoderOutput& encoder,
                                       std::span<const int> decoderInput, std::span<const int> positions,
                                       std::span<const int> targets, int topK,
                                       const MarianAblation* ablation) {
    if (positions.empty()) throw Error("logit lens: no position asked for");
    if (!targets.empty() && targets.size() != positions.size())
        throw Error("logit lens: " + std::to_string(targets.size()) + " targets for " +
                    std::to_string(positions.size()) + " positions");
    for (int p : positions)
        if (p < 0 || p >= int(decoderInput.size()))
            throw Error("position " + std::to_string(p) + " is outside the decoder's " +
                        std::to_string(decoderInput.size()) + " tokens (numbered from 0)");
    const int vocab = int(model.config().decoderVocabSize);
    for (int t : targets)
        if (t >= vocab)
            throw Error("token id " + std::to_string(t) + " is outside the decoder's vocabulary of " +
                        std::to_string(vocab));
    ResidualTrace trace;
    trace.rows.assign(positions.begin(), positions.end());
    model.decodeForced(decoderInput, encoder, ablation, &trace);
    return lensOfTrace(trace, targets, topK, [&](const RowMatrix& stream) { return model.readout(stream); });
}

LogitLens vitLogitLens(const VitModel& model, const Tensor& pixels, int target, int topK,
                       const VitRunOptions& options) {
    if (!model.hasClassifier())
        throw Error("the logit lens needs a ViT with a classifier (this one has none)");
    if (target >= model.numLabels())
        throw Error("class " + std::to_string(target) + " is outside the classifier's " +
                    std::to_string(model.numLabels()) + " classes (numbered from 0)");
    ResidualTrace trace;
    trace.rows = {0}; // the CLS token
    VitRunOptions run = options;
    run.captureAttention = false;
    run.trace = &trace;
    model.forward(pixels, run);
    const std::vector<int> targets{target};
    return lensOfTrace(trace, targets, topK, [&](const RowMatrix& stream) { return model.classify(stream); })
        .front();
}

} // namespace attnlens
