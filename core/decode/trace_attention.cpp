#include "core/decode/trace_attention.h"

#include "core/analysis/value_weighting.h"
#include "core/analysis/word_merge.h"
#include "core/util/error.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace attnlens {

const Tensor& traceAttention(const TranslationTrace& trace, AttentionKind kind) {
    switch (kind) {
    case AttentionKind::EncoderSelf:
        return trace.encoderAttention;
    case AttentionKind::DecoderSelf:
        return trace.decoderAttention;
    case AttentionKind::Cross:
        break;
    }
    return trace.crossAttention;
}

Tensor traceValueWeighted(const TranslationTrace& trace, AttentionKind kind) {
    const Tensor& attention = traceAttention(trace, kind); // [L, H, Q, K]
    const Tensor& norms = kind == AttentionKind::EncoderSelf   ? trace.encoderValueNorms
                          : kind == AttentionKind::DecoderSelf ? trace.decoderValueNorms
                                                               : trace.crossValueNorms; // [L, H, K]
    if (attention.rank() != 4 || norms.rank() != 3) return {};
    if (norms.dim(0) != attention.dim(0) || norms.dim(1) != attention.dim(1) ||
        norms.dim(2) < attention.dim(3))
        throw Error("value weighting: the translation's norms " + shapeToString(norms.shape()) +
                    " do not fit its attention " + shapeToString(attention.shape()));
    Tensor weighted = attention.clone();
    for (int64_t l = 0; l < attention.dim(0); ++l)
        for (int64_t h = 0; h < attention.dim(1); ++h)
            valueWeightRows(weighted.slice2d({l, h}), norms.slice2d({l}).row(h).leftCols(attention.dim(3)));
    return weighted;
}

TraceAxes traceAxes(const TranslationTrace& trace, AttentionKind kind, const std::string& decoderStartPiece) {
    TraceAxes axes;
    switch (kind) {
    case AttentionKind::EncoderSelf:
        axes.rows = axes.columns = trace.sourceTokens;
        break;
    case AttentionKind::Cross:
        axes.rows = trace.targetTokens;
        axes.columns = trace.sourceTokens;
        break;
    case AttentionKind::DecoderSelf:
        axes.rows = trace.targetTokens;
        axes.columns.push_back(decoderStartPiece);
        if (!trace.targetTokens.empty())
            axes.columns.insert(axes.columns.end(), trace.targetTokens.begin(), trace.targetTokens.end() - 1);
        break;
    }
    return axes;
}

AttentionInputs traceAttentionInputs(const MarianModel& model, const TranslationTrace& trace,
                                     AttentionKind kind, int layer, const MarianAblation* ablation) {
    return model.attentionInputs(kind, layer, trace.sourceIds, model.forcedDecoderInput(trace.targetIds),
                                 ablation);
}

std::vector<std::vector<int>> pieceAlignment(const TranslationTrace& trace, std::string_view pharaoh) {
    const WordGroups source = groupPieces(trace.sourceTokens);
    const WordGroups target = groupPieces(trace.targetTokens);
    std::vector<std::vector<int>> out(trace.targetTokens.size());
    std::istringstream in{std::string(pharaoh)};
    for (std::string pair; in >> pair;) {
        const size_t dash = pair.find('-');
        int i = -1, j = -1;
        const auto parse = [](std::string_view text, int& value) {
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            return ec == std::errc() && ptr == text.data() + text.size() && value >= 0;
        };
        if (dash == std::string::npos || !parse(std::string_view(pair).substr(0, dash), i) ||
            !parse(std::string_view(pair).substr(dash + 1), j))
            throw Error("alignment: '" + pair + "' is not SOURCE-TARGET (word indices from 0)");
        if (i >= source.count() || j >= target.count())
            throw Error("alignment: '" + pair + "' is outside the " + std::to_string(source.count()) +
                        " source and " + std::to_string(target.count()) + " target words");
        for (size_t t = 0; t < target.wordOf.size(); ++t) {
            if (target.wordOf[t] != j) continue;
            for (size_t s2 = 0; s2 < source.wordOf.size(); ++s2)
                if (source.wordOf[s2] == i) out[t].push_back(static_cast<int>(s2));
        }
    }
    for (auto& keys : out) {
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    }
    return out;
}

} // namespace attnlens
