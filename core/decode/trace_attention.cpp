#include "core/decode/trace_attention.h"

#include <algorithm>

namespace attnlens {

std::optional<AttentionKind> parseAttentionKind(std::string_view name) {
    if (name == "encoder") return AttentionKind::EncoderSelf;
    if (name == "decoder") return AttentionKind::DecoderSelf;
    if (name == "cross") return AttentionKind::Cross;
    return std::nullopt;
}

std::string_view attentionKindId(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::EncoderSelf:
        return "encoder";
    case AttentionKind::DecoderSelf:
        return "decoder";
    case AttentionKind::Cross:
        return "cross";
    }
    return {};
}

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

HeadStatsOptions headStatsOptions(const TranslationTrace& trace, AttentionKind kind) {
    HeadStatsOptions o;
    const int sourceEnd = std::max(0, static_cast<int>(trace.sourceTokens.size()) - 1);
    switch (kind) {
    case AttentionKind::EncoderSelf: o.sinkKeys = {sourceEnd}; break;
    case AttentionKind::DecoderSelf: o.sinkKeys = {0}; break;
    case AttentionKind::Cross:
        o.sinkKeys = {sourceEnd};
        o.selfAttention = false;
        break;
    }
    return o;
}

AttentionInputs traceAttentionInputs(const MarianModel& model, const TranslationTrace& trace, AttentionKind kind,
                                     int layer, const MarianAblation* ablation) {
    std::vector<int> input{model.config().decoderStartTokenId};
    if (!trace.targetIds.empty()) input.insert(input.end(), trace.targetIds.begin(), trace.targetIds.end() - 1);
    return model.attentionInputs(static_cast<int>(kind), layer, trace.sourceIds, input, ablation);
}

} // namespace attnlens
