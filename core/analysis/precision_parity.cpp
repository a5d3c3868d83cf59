#include "core/analysis/precision_parity.h"

#include "core/ops/nn.h"
#include "core/text/marian_tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

namespace attnlens {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
    if (a.numel() != b.numel()) return std::numeric_limits<double>::infinity();
    double worst = 0.0;
    for (int64_t i = 0; i < a.numel(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(a.data()[i] - b.data()[i])));
    return worst;
}

double maxAbs(const Tensor& a) {
    double worst = 0.0;
    for (int64_t i = 0; i < a.numel(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(a.data()[i])));
    return worst;
}

} // namespace

PrecisionParity vitPrecisionParity(const VitModel& model, const Tensor& pixels,
                                   const VitRunOptions& options) {
    PrecisionParity p;
    auto start = Clock::now();
    const VitOutput fast = model.forward(pixels, options);
    p.resultMs = msSince(start);
    VitOutput exact;
    {
        const Fp32ReferenceScope reference;
        start = Clock::now();
        exact = model.forward(pixels, options);
        p.referenceMs = msSince(start);
    }
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

std::string describeParity(const PrecisionParity& p, const std::string& what) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, "max |Δ logits| %.3g (logits up to %.3g), max |Δ attention| %.3g, ",
                  p.maxAbsLogits, p.logitScale, p.maxAbsAttention);
    std::string out = buffer;
    out += p.sameResult
               ? "same " + what
               : "different " + what + " (fp32: \"" + p.reference + "\", bf16: \"" + p.result + "\")";
    return out;
}

} // namespace attnlens
