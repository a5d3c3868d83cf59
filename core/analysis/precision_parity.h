#pragma once
// How far a model packed in bf16 (LinearPrecision::Bf16, the opt-in fast mode) is from float32 on one
// input, measured rather than assumed: the same input runs twice, once as loaded and once with every
// linear layer on its plain float32 weight (Fp32ReferenceScope; the plain weights stay in memory, so a
// bf16 model needs no second copy to be checked). The CLI's `bench --precision bf16` and the GUI's
// status line after a bf16 load report it.

#include "core/decode/decode_session.h"
#include "core/models/text_models.h"
#include "core/models/unet_model.h"
#include "core/models/vit_model.h"

#include <functional>
#include <memory>
#include <span>
#include <string>

namespace attnlens {

struct PrecisionParity {
    // The output scores (ViT: class logits; Marian: teacher-forced logits; text: every position's logits, or
    // BERT's last hidden state where it has no LM head; a U-Net: the noise prediction).
    double maxAbsLogits = 0.0;
    double logitScale = 0.0;         // max |logit| of the float32 run: what maxAbsLogits is relative to
    double maxAbsAttention = 0.0;    // over every captured head
    bool attentionCompared = true;   // false: none was captured (a long text's heads kept on demand)
    bool sameResult = true;          // same top-1 class / same translation
    std::string quantity = "logits"; // what maxAbsLogits compares ("noise" for a U-Net)
    std::string reference;           // float32's result (top-1 label or translation)
    std::string result;              // the loaded model's result
    double referenceMs = 0.0;        // float32 run
    double resultMs = 0.0;           // run as loaded
};

// pixels: a preprocessed image [C, H, W] for this model; options as the run being checked used them.
PrecisionParity vitPrecisionParity(const VitModel& model, const Tensor& pixels,
                                   const VitRunOptions& options = {});

// Decodes `sentence` with `options` both ways; the logits are compared teacher-forced on float32's
// output (the same target for both), the attentions of that pass and of the encoder likewise.
PrecisionParity marianPrecisionParity(const std::shared_ptr<const MarianModel>& model,
                                      const std::shared_ptr<const MarianTokenizer>& tokenizer,
                                      const std::string& sentence, const DecodeOptions& options);

// Runs `ids` through a text model once as loaded and once on float32 weights (one forward pass over every id,
// as the Text page's run): the logits of every position (a model without an LM head: its last hidden state)
// and every head compared. The result (textParityResult names it): a decoder's most likely token after the
// last id; an encoder's top-1 prediction at every position (the first that differs is reported). Tokens are
// named by `name` (their id when no name is given).
PrecisionParity textPrecisionParity(const TextModel& model, std::span<const int> ids,
                                    const std::function<std::string(int)>& name = {});
// "next token" or "top-1 at every position": describeParity's `what` for textPrecisionParity.
std::string textParityResult(const TextModel& model);

// One U-Net forward both ways: the noise prediction and every captured attention map compared (no discrete
// result: quantity "noise", reference and result empty). referenceConditioning: what the float32 side is
// conditioned on when it differs (a text encoder's float32 states); nullptr: `conditioning`.
PrecisionParity unetPrecisionParity(const UNet2DModel& model, const Tensor& sample, float timestep,
                                    const UNetConditioning& conditioning, const UNetRunOptions& options = {},
                                    const UNetConditioning* referenceConditioning = nullptr);

// One line for a status bar or the CLI: "max |Δ logits| 0.031 (logits up to 14.2), max |Δ attention|
// 0.0042, same translation" (`what` names the result compared; a U-Net's: "max |Δ noise| … (noise up to …),
// max |Δ attention| …").
std::string describeParity(const PrecisionParity& parity, const std::string& what);

} // namespace attnlens
