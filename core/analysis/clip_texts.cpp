#include "core/analysis/clip_texts.h"

#include "core/analysis/attention_maps.h"
#include "core/util/error.h"

namespace attnlens {

namespace {

std::string_view trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

RowMatrix gridOf(const Tensor& perPatch, const PatchGrid& grid) {
    return tokensToGrid(ConstVectorMap(perPatch.data(), perPatch.numel()), grid.rows(), grid.cols(), 0);
}

} // namespace

Tensor summaryRollout(const VitOutput& output, const PatchGrid& grid) {
    if (output.attentions.empty()) throw Error("the rollout needs the attention captured");
    const RowMatrix roll = attentionRollout(output.attentions); // [T, T]
    const int first = grid.prefixTokens(), n = grid.count();
    Tensor out({n});
    if (grid.hasCls()) {
        for (int i = 0; i < n; ++i)
            out.data()[i] = roll(0, first + i);
        return out;
    }
    if (output.probeAttention.empty() || output.probeAttention.dim(1) != n)
        throw Error("a vision tower without CLS needs its pooling probe's attention for the rollout");
    const RowMatrix probe = output.probeAttention.matrix().colwise().mean(); // [1, N]
    VectorMap(out.data(), n) = (probe * roll.bottomRightCorner(n, n)).transpose();
    return out;
}

std::vector<std::string> splitClipTexts(std::string_view line) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= line.size()) {
        const size_t bar = std::min(line.find('|', start), line.size());
        if (const auto piece = trimmed(line.substr(start, bar - start)); !piece.empty())
            out.emplace_back(piece);
        start = bar + 1;
    }
    if (out.size() > kMaxClipTexts)
        throw Error(std::to_string(out.size()) + " texts; at most " + std::to_string(kMaxClipTexts) +
                    " are compared at once");
    return out;
}

std::vector<ClipTextRun> runClipTexts(const ClipTextSide& side, const VitOutput& output,
                                      const PatchGrid& grid, std::span<const std::string> texts) {
    if (output.patchEmbeds.empty())
        throw Error("this vision tower has no visual_projection: texts need a CLIPModel folder");
    if (output.attentions.empty()) throw Error("texts need the attention captured (for the rollout)");
    std::vector<ClipTextEmbedding> embedded;
    for (const std::string& t : texts)
        embedded.push_back(side.embed(t));
    const ClipScores scores = clipScores(output.imageEmbeds, embedded, side.scoring());
    const Tensor rollout = summaryRollout(output, grid);
    std::vector<ClipTextRun> runs;
    for (size_t i = 0; i < embedded.size(); ++i) {
        ClipTextRun r;
        const Tensor similarity = clipPatchSimilarity(output.patchEmbeds, embedded[i]);
        r.similarity = gridOf(similarity, grid);
        r.relevance = gridOf(clipTextRelevance(similarity, rollout), grid);
        r.logit = scores.logits[i];
        r.probability = scores.probabilities[i];
        r.embedding = std::move(embedded[i]);
        runs.push_back(std::move(r));
    }
    return runs;
}

} // namespace attnlens
