#include "core/analysis/head_importance.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
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

VitHeadImportance vitHeadImportance(const VitModel& model, const Tensor& pixels, const Callbacks& callbacks) {
    if (!model.hasClassifier()) throw Error("ranking heads needs a classifier: this checkpoint has none");
    const VitConfig& c = model.config();
    VitRunOptions plain;
    plain.captureAttention = false;
    VitHeadImportance out;
    out.top = model.topK(model.forward(pixels, plain), 1).front();
    const double base = logOf(out.top.probability);
    out.drop = RowMatrix(c.numLayers, c.numHeads);
    for (int l = 0; l < c.numLayers; ++l)
        for (int h = 0; h < c.numHeads; ++h) {
            callbacks.checkCancel();
            VitRunOptions off = plain;
            off.ablatedHeads = {{l, h}};
            const VitOutput o = model.forward(pixels, off);
            out.drop(l, h) = static_cast<float>(base - logOf(o.probabilities.at({out.top.index})));
            reportHead(callbacks, l * c.numHeads + h + 1, c.numLayers * c.numHeads);
        }
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
                               std::span<const int> target, int kind, const Callbacks& callbacks) {
    const MarianConfig& c = model.config();
    const int layers = kind == 0 ? c.encoderLayers : c.decoderLayers;
    const int heads = kind == 0 ? c.encoderHeads : c.decoderHeads;
    const double base = marianSequenceLogProb(model, source, target);
    RowMatrix drop(layers, heads);
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            callbacks.checkCancel();
            MarianAblation one;
            one.add(kind, l, h, c);
            drop(l, h) = static_cast<float>(base - marianSequenceLogProb(model, source, target, &one));
            reportHead(callbacks, l * heads + h + 1, layers * heads);
        }
    return drop;
}

RowMatrix unetHeadImportance(const UNet2DModel& model, const Tensor& sample, float timestep,
                             std::optional<int> classLabel, const Callbacks& callbacks) {
    const std::vector<UNetAttentionInfo> layers =
        model.attentionLayers(static_cast<int>(sample.dim(1)), static_cast<int>(sample.dim(2)));
    int heads = 0, total = 0;
    for (const auto& l : layers) {
        heads = std::max(heads, l.heads);
        total += l.heads;
    }
    UNetRunOptions plain;
    plain.captureAttention = false;
    const Tensor base = model.forward(sample, timestep, classLabel, plain, &callbacks).noisePred;
    const double norm = base.matrix().norm();
    RowMatrix out = RowMatrix::Constant(static_cast<Eigen::Index>(layers.size()), heads, std::nanf(""));
    int done = 0;
    for (size_t l = 0; l < layers.size(); ++l)
        for (int h = 0; h < layers[l].heads; ++h) {
            callbacks.checkCancel();
            UNetRunOptions off = plain;
            off.ablatedHeads = {{static_cast<int>(l), h}};
            const Tensor eps = model.forward(sample, timestep, classLabel, off, &callbacks).noisePred;
            const double diff = (eps.matrix() - base.matrix()).norm();
            out(static_cast<Eigen::Index>(l), h) = static_cast<float>(norm > 0 ? diff / norm : diff);
            reportHead(callbacks, ++done, total);
        }
    return out;
}

} // namespace attnlens
