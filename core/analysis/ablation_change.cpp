#include "core/analysis/ablation_change.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlens {

namespace {

// Row-wise softmax of a teacher-forced pass over `target` (start token first, the last token not fed): [T,
// V].
RowMatrix forcedProbabilities(const MarianModel& model, std::span<const int> source,
                              std::span<const int> target, const MarianAblation* ablation) {
    const std::vector<int> input = model.forcedDecoderInput(target);
    const MarianEncoderOutput encoder = model.encode(source, false, ablation);
    RowMatrix p = model.decodeForced(input, encoder, ablation).logits.matrix();
    for (Eigen::Index t = 0; t < p.rows(); ++t) {
        const float top = p.row(t).maxCoeff();
        p.row(t) = (p.row(t).array() - top).exp().matrix();
        p.row(t) /= p.row(t).sum();
    }
    return p;
}

std::vector<TokenChoice> topOf(const RowMatrix& p, int row, int k) {
    std::vector<int> ids(static_cast<size_t>(p.cols()));
    std::iota(ids.begin(), ids.end(), 0);
    k = std::min<int>(k, static_cast<int>(ids.size()));
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int a, int b) {
        return p(row, a) > p(row, b) || (p(row, a) == p(row, b) && a < b);
    });
    std::vector<TokenChoice> out;
    for (int i = 0; i < k; ++i)
        out.push_back({ids[size_t(i)], p(row, ids[size_t(i)])});
    return out;
}

} // namespace

AblationChange marianAblationChange(const MarianModel& model, std::span<const int> source,
                                    std::span<const int> plainIds, std::span<const int> ablatedIds,
                                    const MarianAblation& ablation, int topK) {
    if (plainIds.empty()) throw Error("ablation change: the plain translation has no tokens");
    AblationChange c;
    const size_t common = std::min(plainIds.size(), ablatedIds.size());
    for (size_t t = 0; t < common && c.partsAt < 0; ++t)
        if (plainIds[t] != ablatedIds[t]) c.partsAt = static_cast<int>(t);
    if (c.partsAt < 0 && plainIds.size() != ablatedIds.size()) c.partsAt = static_cast<int>(common);

    const RowMatrix plain = forcedProbabilities(model, source, plainIds, nullptr);
    const RowMatrix off = forcedProbabilities(model, source, plainIds, &ablation);
    for (size_t t = 0; t < plainIds.size(); ++t) {
        c.plainProbability.push_back(plain(Eigen::Index(t), plainIds[t]));
        c.ablatedProbability.push_back(off(Eigen::Index(t), plainIds[t]));
    }
    if (c.partsAt >= 0 && c.partsAt < static_cast<int>(plainIds.size())) {
        c.position = c.partsAt;
    } else {
        c.position = 0;
        for (size_t t = 1; t < plainIds.size(); ++t)
            if (c.plainProbability[t] - c.ablatedProbability[t] >
                c.plainProbability[size_t(c.position)] - c.ablatedProbability[size_t(c.position)])
                c.position = static_cast<int>(t);
    }
    c.topPlain = topOf(plain, c.position, topK);
    c.topAblated = topOf(off, c.position, topK);
    return c;
}

} // namespace attnlens
