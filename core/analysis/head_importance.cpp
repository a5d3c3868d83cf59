#include "core/analysis/head_importance.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace attnlens {

namespace {

double logOf(float p) {
    return std::log(std::max(1e-30, static_cast<double>(p)));
}

void reportHead(const Callbacks& callbacks, int done, int total) {
    callbacks.report(static_cast<double>(done) / total,
                     std::to_string(done) + " of " + std::to_string(total) + " heads");
}

} // namespace

RowMatrix measureEachHead(std::span<const int> headsPerLayer, const std::function<double(int, int)>& measure,
                          const Callbacks& callbacks) {
    const int total = std::accumulate(headsPerLayer.begin(), headsPerLayer.end(), 0);
    const int widest =
        headsPerLayer.empty() ? 0 : *std::max_element(headsPerLayer.begin(), headsPerLayer.end());
    RowMatrix out =
        RowMatrix::Constant(static_cast<Eigen::Index>(headsPerLayer.size()), widest, std::nanf(""));
    int done = 0;
    for (size_t l = 0; l < headsPerLayer.size(); ++l)
        for (int h = 0; h < headsPerLayer[l]; ++h) {
            callbacks.checkCancel();
            out(static_cast<Eigen::Index>(l), h) = static_cast<float>(measure(static_cast<int>(l), h));
            reportHead(callbacks, ++done, total);
        }
    return out;
}

VitHeadImportance vitHeadImportance(const VitModel& model, const Tensor& pixels, const Callbacks& callbacks) {
    if (!model.hasClassifier()) throw Error("ranking heads needs a classifier: this checkpoint has none");
    const VitConfig& c = model.config();
    VitRunOptions plain;
    plain.captureAttention = false;
    VitHeadImportance out;
    out.top = model.topK(model.forward(pixels, plain), 1).front();
    const double base = logOf(out.top.probability);
    const std::vector<int> heads(static_cast<size_t>(c.numLayers), c.numHeads);
    out.drop = measureEachHead(
        heads,
        [&](int l, int h) {
            VitRunOptions off = plain;
            off.offHeads = {{l, h}};
            const VitOutput o = model.forward(pixels, off);
            return base - logOf(o.probabilities.at({out.top.index}));
        },
        callbacks);
    return out;
}

double marianSequenceLogProb(const MarianModel& model, std::span<const int> source,
                             std::span<const int> target, const MarianAblation* ablation) {
    if (target.empty()) throw Error("sequence log-probability: no target tokens");
    const std::vector<int> input = model.forcedDecoderInput(target);
    const MarianEncoderOutput encoder = model.encode(source, false, ablation);
    const Tensor logits = model.decodeForced(input, encoder, ablation).logits; // [T, V]
    const ConstMatrixMap m = logits.matrix();
    double sum = 0;
    for (Eigen::Index t = 0; t < m.rows(); ++t) {
        const auto row = m.row(t);
        const float top = row.maxCoeff();
        const double z = (row.array() - top).exp().cast<double>().sum();
        sum += static_cast<double>(row(target[static_cast<size_t>(t)]) - top) - std::log(z);
    }
    return sum;
}

RowMatrix marianHeadImportance(const MarianModel& model, std::span<const int> source,
                               std::span<const int> target, AttentionKind kind, const Callbacks& callbacks) {
    const MarianConfig& c = model.config();
    const bool encoderSide = kind == AttentionKind::EncoderSelf;
    const int layers = encoderSide ? c.encoderLayers : c.decoderLayers;
    const int heads = encoderSide ? c.encoderHeads : c.decoderHeads;
    const double base = marianSequenceLogProb(model, source, target);
    return measureEachHead(
        std::vector<int>(static_cast<size_t>(layers), heads),
        [&](int l, int h) {
            MarianAblation one;
            one.add(kind, l, h, c);
            return base - marianSequenceLogProb(model, source, target, &one);
        },
        callbacks);
}

RowMatrix unetHeadImportance(const UNet2DModel& model, const Tensor& sample, float timestep,
                             std::optional<int> classLabel, const Callbacks& callbacks) {
    const std::vector<UNetAttentionInfo> layers =
        model.attentionLayers(static_cast<int>(sample.dim(1)), static_cast<int>(sample.dim(2)));
    std::vector<int> heads;
    for (const auto& l : layers)
        heads.push_back(l.heads);
    UNetRunOptions plain;
    plain.captureAttention = false;
    const Tensor base = model.forward(sample, timestep, classLabel, plain, &callbacks).noisePred;
    const double norm = base.matrix().norm();
    return measureEachHead(
        heads,
        [&](int l, int h) {
            UNetRunOptions off = plain;
            off.offHeads = {{l, h}};
            const Tensor eps = model.forward(sample, timestep, classLabel, off, &callbacks).noisePred;
            const double diff = (eps.matrix() - base.matrix()).norm();
            return norm > 0 ? diff / norm : diff;
        },
        callbacks);
}

} // namespace attnlens
