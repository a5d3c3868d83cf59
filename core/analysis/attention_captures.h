#pragma once
// The capture producers, one per family (issue 37): each turns what its run kept into the contract's
// AttentionCapture (core/contract/attention_capture.h), with the axes the lenses need — labels, positions for
// distances, the sink keys. A new family writes one more producer here; every lens that reads a capture
// (head statistics first: analysis/head_stats.h captureHeadStats) then works on it.
//
//   HeadStats s = captureHeadStats(translationCapture(*trace, "<pad>"), AttentionKind::Cross);

#include "core/contract/attention_capture.h"
#include "core/decode/decode_session.h"
#include "core/models/text_folder.h"
#include "core/models/unet_model.h"
#include "core/models/vit_model.h"

#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// A token that is a delimiter for the head statistics (labels as shown: " world", "▁,", "\n"): once spaces
// and SentencePiece's "▁" are set aside, nothing but punctuation (Unicode P*) is left, or nothing but a line
// break or tab was there.
bool isDelimiterToken(std::string_view label);

// Text (BERT, GPT-2, …): one axis of tokens; sinks [CLS] and [SEP] where the tokenizer frames the text,
// else the first token; delimiters the other tokens isDelimiterToken names. attentions [L, H, n, n] over ids
// (n = ids.size()).
AttentionCapture textCapture(const TextFolder& folder, const std::vector<int>& ids, const Tensor& attentions);
// The same with every block made on demand (issue 40): makeHead(layer, head, out) writes that head's [n, n]
// map; the folder's layers × heads. Nothing is materialised until a lens asks for a head.
using TextHeadMaker = std::function<void(int layer, int head, float* out)>;
AttentionCapture textCapture(const TextFolder& folder, const std::vector<int>& ids, TextHeadMaker makeHead);

// ViT: CLS (no position, the sink) then the grid's patches, row-major, at their centres in pixels of the
// model input (patch px per patch).
AttentionCapture vitCapture(const VitResult& result, int patch);

// A translation: the source pieces (sink: </s>, the last), the decoder inputs (the start piece, then every
// target piece but the last; sink: the start) — encoder self-attention over the source, decoder
// self-attention over the decoder inputs, cross-attention from the decoder inputs to the source.
AttentionCapture translationCapture(const TranslationTrace& trace, const std::string& decoderStartPiece);

// A U-Net: each attention layer over the pixels of its level, at their centres in pixels of the sample
// (imageHeight × imageWidth); no sinks. Blocks in execution order, named by diffusers' module paths.
AttentionCapture unetCapture(const std::vector<UNetAttentionMap>& layers, int imageHeight, int imageWidth);

} // namespace attnlens
