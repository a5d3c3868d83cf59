#pragma once
// What a text-to-image run's cross-attention says, as maps over the image — the drawing the Text-to-image
// page and `attnlens-cli t2i` share, so an export shows the pixels the screen shows.
//
//   auto words = t2iWords(result);                         // "a", "sneaker", …, <start>, <end>, padding
//   T2iMapQuery q;  q.tokens = words[2].tokens;  q.step = -1;  q.layer = -1;      // DAAM's aggregate
//   RowMatrix m = t2iWordMap(result, q, 56, 56);           // [H, W] over the image
//   RgbImage px = renderT2iOverlay(t2iImageU8(result.image), m, options, q.half);
//
// A layer's map for a set of tokens is the sum of their columns ([h·w] per head), the heads fused (or one
// head), bicubic-upsampled to the image (DAAM's upsample-and-sum) and averaged over the chosen layers and
// steps. The difference half is cond − uncond of the same selection.

#include "core/analysis/attention_maps.h"
#include "core/diffusion/t2i_pipeline.h"
#include "core/export/overlay.h"
#include "core/vision/image_io.h"

#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// One chip of the prompt: a word (its CLIP pieces merged at "</w>"), or a special token.
struct T2iWord {
    enum class Kind { Word, Start, End, Padding };
    std::string text;        // "sneaker", "<start>", "<end>", "padding"
    std::vector<int> tokens; // positions among the 77
    Kind kind = Kind::Word;
    bool special() const { return kind != Kind::Word; }
};

// The prompt's words in order, between <start> and <end>, then one chip for all padding (if any).
std::vector<T2iWord> t2iWords(const T2iResult& result);
// The chip a user names (`--word`): the first whose text is `name`, else `name` read as an index from 0;
// -1 when it is neither.
int t2iFindWord(const std::vector<T2iWord>& words, std::string_view name);

enum class T2iHalf { Cond, Uncond, Difference };
std::string_view t2iHalfName(T2iHalf half); // "cond", "uncond", "cond-uncond"

struct T2iMapQuery {
    std::vector<int> tokens; // token positions whose maps are summed
    int step = -1;           // -1: mean over the steps
    int layer = -1;          // index among the cross-attention layers; -1: mean over them
    HeadSelection heads;     // one head needs a run that kept every head (T2iRequest::allHeads)
    T2iHalf half = T2iHalf::Cond;
    bool valueWeighted = false; // the value-weighted maps (a run that kept them: T2iRequest::valueWeighted)
};

// The cross-attention layers of the run (those of its first step), in execution order.
std::vector<UNetAttentionInfo> t2iCrossLayers(const T2iResult& result);
// Whether the run kept every head (else only their mean).
bool t2iHasAllHeads(const T2iResult& result);
// Whether the run kept the value-weighted maps too (T2iRequest::valueWeighted).
bool t2iHasValueWeighted(const T2iResult& result);

// The query's map over an image of height × width. Throws attnlens::Error for a bad step, layer, head,
// token or half (the unconditional half needs guidance).
RowMatrix t2iWordMap(const T2iResult& result, const T2iMapQuery& query, int height, int width);

// Which text tokens one image pixel attends to: the 77 weights of the pixel's position in each chosen layer
// (the query's tokens are ignored), averaged over the layers and steps chosen. Rows sum to 1 (cond, uncond).
std::vector<float> t2iPixelTokens(const T2iResult& result, const T2iMapQuery& query, int row, int col,
                                  int height, int width);
// The same summed per word (words as t2iWords gives them).
std::vector<float> t2iPixelWords(const T2iResult& result, const std::vector<T2iWord>& words,
                                 const T2iMapQuery& query, int row, int col, int height, int width);

// The self-attention of one layer at one step, replayed on demand (the run keeps no self-attention): the
// conditional half's U-Net call of that step again (its stored input, the prompt's encoder states
// condStates [77, D] as encodePrompt gives them) with only `layer` captured — an index among all attention
// layers of the U-Net in execution order, a self-attention one.  -> weights [heads, h·w, h·w].
// Throws for a step without its input or a layer that is not self-attention.
UNetAttentionMap t2iSelfAttention(const TextToImagePipeline& pipe, const Tensor& condStates,
                                  const T2iStep& step, int layer, const Callbacks* callbacks = nullptr);

// [3, H, W] in 0..1 → 8-bit RGB as the pipeline's numpy_to_pil rounds it (non-finite values black); a
// VAE with another channel count gives grey (1) or its first three channels.
ImageU8 t2iImageU8(const Tensor& image);
// A latent [C, h, w] as a picture for a step whose image is not decoded: its first three channels (one:
// grey), each stretched over its own range.
ImageU8 latentPreview(const Tensor& latents);

// A map over the image, blended as renderOverlay does; the difference half on the diverging colour map,
// symmetric around 0 (unless options set lo < hi).
RgbImage renderT2iOverlay(const ImageU8& image, const Eigen::Ref<const RowMatrix>& map,
                          OverlayOptions options, T2iHalf half);

} // namespace attnlens
