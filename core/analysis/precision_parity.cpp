#include "core/analysis/precision_parity.h"

#include "core/ops/nn.h"
#include "core/text/marian_tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>

namespace attnlens {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double maxAbsDiff(std::span<const float> a, std::span<const float> b) {
    if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
    double worst = 0.0;
    for (size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    return worst;
}

double maxAbs(std::span<const float> a) {
    double worst = 0.0;
    for (const float v : a)
        worst = std::max(worst, static_cast<double>(std::fabs(v)));
    return worst;
}

std::span<const float> values(const Tensor& t) {
    return {t.data(), static_cast<size_t>(t.numel())};
}
std::span<const float> values(const RowMatrix& m) {
    return {m.data(), static_cast<size_t>(m.size())};
}
double maxAbsDiff(const Tensor& a, const Tensor& b) {
    return maxAbsDiff(values(a), values(b));
}
double maxAbs(const Tensor& a) {
    return maxAbs(values(a));
}

// run(reference) once as loaded (false) and once on float32 weights (true: inside an Fp32ReferenceScope),
// timing both into p; returns {as loaded, float32}.
template <class Run> auto bothWays(PrecisionParity& p, Run&& run) {
    auto start = Clock::now();
    auto fast = run(false);
    p.resultMs = msSince(start);
    decltype(fast) exact;
    {
        const Fp32ReferenceScope reference;
        start = Clock::now();
        exact = run(true);
        p.referenceMs = msSince(start);
    }
    return std::make_pair(std::move(fast), std::move(exact));
}

} // namespace

PrecisionParity vitPrecisionParity(const VitModel& model, const Tensor& pixels,
                                   const VitRunOptions& options) {
    PrecisionParity p;
    const auto [fast, exact] = bothWays(p, [&](bool) { return model.forward(pixels, options); });
    p.maxAbsLogits = maxAbsDiff(fast.logits, exact.logits);
    p.logitScale = maxAbs(exact.logits);
    p.maxAbsAttention = maxAbsDiff(fast.attentions, exact.attentions);
    const auto top = [&](const VitOutput& out) {
        const auto best = model.topK(out, 1);
        return best.empty() ? std::string() : best.front().label;
    };
    p.reference = top(exact);
    p.result = top(fast);
    p.sameResult = p.reference == p.result;
    return p;
}

PrecisionParity marianPrecisionParity(const std::shared_ptr<const MarianModel>& model,
                                      const std::shared_ptr<const MarianTokenizer>& tokenizer,
                                      const std::string& sentence, const DecodeOptions& options) {
    PrecisionParity p;
    auto start = Clock::now();
    DecodeSession fast(model, tokenizer, sentence, options);
    fast.run();
    const auto fastTrace = fast.trace();
    p.resultMs = msSince(start);
    std::shared_ptr<const TranslationTrace> exactTrace;
    {
        const Fp32ReferenceScope reference;
        start = Clock::now();
        DecodeSession exact(model, tokenizer, sentence, options);
        exact.run();
        exactTrace = exact.trace();
        p.referenceMs = msSince(start);
    }
    p.reference = exactTrace->translation;
    p.result = fastTrace->translation;
    p.sameResult = exactTrace->targetIds == fastTrace->targetIds;
    // Teacher-forced on float32's target: the same positions on both sides.
    const std::vector<int> input = model->forcedDecoderInput(exactTrace->targetIds);
    const auto forced = [&](bool reference) {
        std::optional<Fp32ReferenceScope> scope;
        if (reference) scope.emplace();
        const MarianEncoderOutput enc = model->encode(exactTrace->sourceIds);
        MarianForcedOutput out = model->decodeForced(input, enc);
        return std::make_pair(enc.selfAttention, std::move(out));
    };
    const auto [fastEnc, fastOut] = forced(false);
    const auto [exactEnc, exactOut] = forced(true);
    p.maxAbsLogits = maxAbsDiff(fastOut.logits, exactOut.logits);
    p.logitScale = maxAbs(exactOut.logits);
    p.maxAbsAttention =
        std::max({maxAbsDiff(fastEnc, exactEnc), maxAbsDiff(fastOut.selfAttention, exactOut.selfAttention),
                  maxAbsDiff(fastOut.crossAttention, exactOut.crossAttention)});
    return p;
}

PrecisionParity textPrecisionParity(const TextModel& model, std::span<const int> ids,
                                    const std::function<std::string(int)>& name) {
    PrecisionParity p;
    const bool logits = model.hasLmHead();
    if (!logits) p.quantity = "hidden state";
    const auto [fast, exact] = bothWays(p, [&](bool) { return model.forward(ids, logits); });
    const RowMatrix& fastOut = logits ? fast.logits : fast.hidden;
    const RowMatrix& exactOut = logits ? exact.logits : exact.hidden;
    p.maxAbsLogits = maxAbsDiff(values(fastOut), values(exactOut));
    p.logitScale = maxAbs(values(exactOut));
    p.maxAbsAttention = maxAbsDiff(fast.attentions, exact.attentions);
    p.attentionCompared = !exact.attentions.empty();
    if (!logits || exactOut.rows() == 0) return p;
    const auto top = [&](const RowMatrix& m, Eigen::Index row) {
        Eigen::Index best = 0;
        m.row(row).maxCoeff(&best);
        return static_cast<int>(best);
    };
    const auto named = [&](int id) { return name ? name(id) : "id " + std::to_string(id); };
    // a decoder: the next token; an encoder: every position's prediction, the first that differs reported
    const Eigen::Index first = model.decoderOnly() ? exactOut.rows() - 1 : 0;
    p.reference = p.result = named(top(exactOut, exactOut.rows() - 1));
    for (Eigen::Index r = first; r < exactOut.rows(); ++r) {
        const int a = top(exactOut, r), b = top(fastOut, r);
        if (a == b) continue;
        const std::string where = model.decoderOnly() ? "" : "position " + std::to_string(r) + ": ";
        p.reference = where + named(a);
        p.result = where + named(b);
        p.sameResult = false;
        break;
    }
    return p;
}

std::string textParityResult(const TextModel& model) {
    return model.decoderOnly() ? "next token" : "top-1 at every position";
}

PrecisionParity unetPrecisionParity(const UNet2DModel& model, const Tensor& sample, float timestep,
                                    const UNetConditioning& conditioning, const UNetRunOptions& options,
                                    const UNetConditioning* referenceConditioning) {
    PrecisionParity p;
    p.quantity = "noise";
    const auto [fast, exact] = bothWays(p, [&](bool reference) {
        return model.forward(sample, timestep,
                             reference && referenceConditioning ? *referenceConditioning : conditioning,
                             options);
    });
    p.maxAbsLogits = maxAbsDiff(fast.noisePred, exact.noisePred);
    p.logitScale = maxAbs(exact.noisePred);
    if (fast.attentions.size() != exact.attentions.size())
        p.maxAbsAttention = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < fast.attentions.size() && i < exact.attentions.size(); ++i)
        p.maxAbsAttention =
            std::max(p.maxAbsAttention, maxAbsDiff(fast.attentions[i].weights, exact.attentions[i].weights));
    return p;
}

std::string describeParity(const PrecisionParity& p, const std::string& what) {
    char buffer[200];
    const char* q = p.quantity.c_str();
    std::snprintf(buffer, sizeof buffer, "max |Δ %s| %.3g (%s up to %.3g), ", q, p.maxAbsLogits, q,
                  p.logitScale);
    std::string out = buffer;
    if (p.attentionCompared) {
        std::snprintf(buffer, sizeof buffer, "max |Δ attention| %.3g", p.maxAbsAttention);
        out += buffer;
    } else {
        out += "attention not compared (kept on demand)";
    }
    if (p.reference.empty() && p.result.empty()) return out; // no discrete result (a U-Net's noise)
    out += ", ";
    out += p.sameResult
               ? "same " + what
               : "different " + what + " (fp32: \"" + p.reference + "\", bf16: \"" + p.result + "\")";
    return out;
}

} // namespace attnlens
