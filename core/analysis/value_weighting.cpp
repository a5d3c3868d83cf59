#include "core/analysis/value_weighting.h"

#include "core/analysis/logit_lens.h"
#include "core/util/error.h"

#include <string>

namespace attnlens {

void valueWeightRows(Eigen::Ref<RowMatrix> map, const Eigen::Ref<const Eigen::RowVectorXf>& norms) {
    if (norms.size() != map.cols())
        throw Error("value weighting: " + std::to_string(norms.size()) + " norms for " +
                    std::to_string(map.cols()) + " keys");
    for (Eigen::Index i = 0; i < map.rows(); ++i) {
        auto r = map.row(i);
        r = r.cwiseProduct(norms);
        const double sum = r.cast<double>().sum();
        if (sum > 0) r /= static_cast<float>(sum);
    }
}

std::vector<RowMatrix> textValueNorms(const TextModel& model, std::span<const int> ids,
                                      const Callbacks* callbacks) {
    ResidualTrace trace = traceForward(model, ids, {0}, true, callbacks);
    std::vector<RowMatrix> norms;
    for (LayerTrace& layer : trace.layers)
        norms.push_back(std::move(layer.valueNorms));
    return norms;
}

std::vector<RowMatrix> cacheValueNorms(const TextModel& model, const TextCache& cache) {
    const auto blocks = model.blocks();
    if (blocks.size() != cache.layers.size()) return {};
    std::vector<RowMatrix> norms;
    for (size_t l = 0; l < blocks.size(); ++l)
        norms.push_back(
            blocks[l].attention.valueNorms(cache.layers[l].values.topRows(cache.layers[l].length)));
    return norms;
}

void valueWeightAttentions(Tensor& attentions, const std::vector<RowMatrix>& norms) {
    if (attentions.rank() != 4 || attentions.dim(0) != static_cast<int64_t>(norms.size()))
        throw Error("value weighting: " + std::to_string(norms.size()) +
                    " layers of norms for attention of " +
                    std::to_string(attentions.rank() == 4 ? attentions.dim(0) : 0));
    const int64_t heads = attentions.dim(1), n = attentions.dim(2), m = attentions.dim(3);
    for (size_t l = 0; l < norms.size(); ++l)
        for (int64_t h = 0; h < heads; ++h) {
            if (norms[l].rows() != heads || norms[l].cols() < m)
                throw Error("value weighting: layer " + std::to_string(l) +
                            "'s norms do not fit its attention");
            MatrixMap map(attentions.data() + ((int64_t(l) * heads + h) * n) * m, n, m);
            valueWeightRows(map, norms[l].row(h).leftCols(m));
        }
}

} // namespace attnlens
