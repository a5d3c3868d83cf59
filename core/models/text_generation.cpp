#include "core/models/text_generation.h"

#include "core/util/error.h"

namespace attnlens {

TextStep greedyStep(const TextFolder& folder, const RowMatrix& logits, TextCache& cache,
                    const RunControls& run) {
    if (!folder.decoderOnly()) throw Error("only decoder-only models generate");
    if (logits.rows() == 0) throw Error("greedy step: no logits to choose from");
    TextStep step;
    step.id = topCandidates(logits.data() + (logits.rows() - 1) * logits.cols(), logits.cols(), 1).front().id;
    step.forward = folder.model->extend(std::vector<int>{step.id}, cache, true, true, run);
    return step;
}

std::vector<int> greedyContinuation(const TextFolder& folder, RowMatrix logits, TextCache& cache, int count,
                                    const RunControls& run,
                                    const std::function<void(const TextStep&)>& onStep, StopAt stop) {
    std::vector<int> ids;
    for (int i = 0; i < count && cache.length() < folder.maxPositions(); ++i) {
        TextStep step = greedyStep(folder, logits, cache, run);
        ids.push_back(step.id);
        if (onStep) onStep(step);
        if (stop == StopAt::EndOfText && folder.isEndOfText(step.id)) break;
        logits = std::move(step.forward.logits);
    }
    return ids;
}

} // namespace attnlens
