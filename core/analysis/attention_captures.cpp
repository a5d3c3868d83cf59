#include "core/analysis/attention_captures.h"

#include "core/analysis/text_lenses.h"
#include "core/text/unicode_text.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace attnlens {

namespace {

constexpr float kUnplaced = std::numeric_limits<float>::quiet_NaN(); // a token off the patch grid (CLS)

// Centres of a grid of cells (cellHeight × cellWidth px), row-major, labelled "<noun> y,x".
void addGridCells(AttentionAxis& axis, int rows, int cols, double cellHeight, double cellWidth,
                  const char* noun) {
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) {
            axis.labels.push_back(std::string(noun) + " " + std::to_string(y) + "," + std::to_string(x));
            axis.points.push_back(
                {static_cast<float>((x + 0.5) * cellWidth), static_cast<float>((y + 0.5) * cellHeight)});
        }
}

// The positions of `labels` that are delimiters, the sinks left out.
std::vector<int> delimiterPositions(const std::vector<std::string>& labels, const std::vector<int>& sinks) {
    std::vector<int> out;
    for (size_t i = 0; i < labels.size(); ++i)
        if (isDelimiterToken(labels[i]) && std::find(sinks.begin(), sinks.end(), int(i)) == sinks.end())
            out.push_back(static_cast<int>(i));
    return out;
}

} // namespace

bool isDelimiterToken(std::string_view label) {
    if (!unicode::isValidUtf8(label)) return false;
    bool punctuation = false, lineBreak = false;
    for (const char32_t c : unicode::decodeUtf8(label)) {
        if (c == U'\n' || c == U'\r' || c == U'\t') {
            lineBreak = true;
        } else if (c == U'\u2581' || unicode::isWhiteSpace(c)) {
            continue;
        } else if (unicode::isPunctuationCategory(c)) {
            punctuation = true;
        } else {
            return false;
        }
    }
    return punctuation || lineBreak;
}

namespace {

AttentionAxis textAxis(const TextFolder& folder, const std::vector<int>& ids) {
    AttentionAxis tokens{"tokens", {}, {}, {}, true, {}};
    for (size_t i = 0; i < ids.size(); ++i) {
        tokens.labels.push_back(folder.tokenText(ids[i]));
        if (!folder.decoderOnly() && folder.tokenizer->framesText(ids[i]))
            tokens.sinks.push_back(static_cast<int>(i));
    }
    if (tokens.sinks.empty()) tokens.sinks = {0};
    tokens.delimiters = delimiterPositions(tokens.labels, tokens.sinks);
    return tokens;
}

} // namespace

AttentionCapture textCapture(const TextFolder& folder, const std::vector<int>& ids,
                             const Tensor& attentions) {
    AttentionCapture c;
    const int axis = c.addAxis(textAxis(folder, ids));
    c.addLayers(attentions, textAttentionKind(folder), axis, axis, "layer.");
    c.check();
    return c;
}

AttentionCapture textCapture(const TextFolder& folder, const std::vector<int>& ids, TextHeadMaker makeHead) {
    AttentionCapture c;
    const int axis = c.addAxis(textAxis(folder, ids));
    for (int l = 0; l < folder.layers(); ++l)
        c.blocks.push_back({"layer." + std::to_string(l), textAttentionKind(folder), l, Tensor(), axis, axis,
                            [makeHead, l](int h, float* out) { makeHead(l, h, out); }, folder.heads()});
    c.check();
    return c;
}

AttentionCapture vitCapture(const VitResult& result, int patch) {
    // SigLIP has no CLS and so no token that is a sink by design: then no position is special.
    AttentionAxis patches{"patches", {}, {}, {}, result.grid.hasCls(), {}};
    if (result.grid.hasCls()) {
        patches.labels.push_back("CLS");
        patches.points.push_back({kUnplaced, kUnplaced});
        patches.sinks.push_back(0);
    }
    for (int r = 0; r < result.grid.registers(); ++r) { // DINOv2's registers: sinks beside CLS, no place
        patches.labels.push_back("reg" + std::to_string(r));
        patches.points.push_back({kUnplaced, kUnplaced});
        patches.sinks.push_back(1 + r);
    }
    addGridCells(patches, result.grid.rows(), result.grid.cols(), patch, patch, "patch");
    AttentionCapture c;
    const int axis = c.addAxis(std::move(patches));
    c.addLayers(result.output.attentions, AttentionKind::EncoderSelf, axis, axis, "encoder.layer.");
    c.check();
    return c;
}

AttentionCapture translationCapture(const TranslationTrace& trace, const std::string& decoderStartPiece) {
    AttentionCapture c;
    const int sourceEnd = std::max(0, static_cast<int>(trace.sourceTokens.size()) - 1);
    const int source = c.addAxis({"source pieces",
                                  trace.sourceTokens,
                                  {},
                                  {sourceEnd},
                                  true,
                                  delimiterPositions(trace.sourceTokens, {sourceEnd})});
    AttentionAxis inputs{"decoder inputs", {decoderStartPiece}, {}, {0}, true, {}};
    for (size_t t = 0; t + 1 < trace.targetTokens.size(); ++t)
        inputs.labels.push_back(trace.targetTokens[t]);
    inputs.delimiters = delimiterPositions(inputs.labels, inputs.sinks);
    const int decoder = c.addAxis(std::move(inputs));
    c.addLayers(trace.encoderAttention, AttentionKind::EncoderSelf, source, source, "encoder.layers.");
    c.addLayers(trace.decoderAttention, AttentionKind::DecoderSelf, decoder, decoder, "decoder.layers.");
    c.addLayers(trace.crossAttention, AttentionKind::Cross, decoder, source, "decoder.layers.encoder_attn.");
    c.check();
    return c;
}

AttentionCapture unetCapture(const std::vector<UNetAttentionMap>& layers, int imageHeight, int imageWidth) {
    AttentionCapture c;
    std::map<std::pair<int, int>, int> axisOfLevel; // (height, width) -> axis
    for (size_t l = 0; l < layers.size(); ++l) {
        const UNetAttentionInfo& info = layers[l].info;
        const auto size = std::make_pair(info.height, info.width);
        if (!axisOfLevel.count(size)) {
            AttentionAxis pixels{"pixels " + std::to_string(info.height) + "×" + std::to_string(info.width),
                                 {},
                                 {},
                                 {},
                                 false,
                                 {}};
            addGridCells(pixels, info.height, info.width, double(imageHeight) / info.height,
                         double(imageWidth) / info.width, "pixel");
            axisOfLevel[size] = c.addAxis(std::move(pixels));
        }
        const int axis = axisOfLevel[size];
        c.blocks.push_back({info.name,
                            AttentionKind::EncoderSelf,
                            static_cast<int>(l),
                            layers[l].weights,
                            axis,
                            axis,
                            {},
                            0});
    }
    c.check();
    return c;
}

} // namespace attnlens
