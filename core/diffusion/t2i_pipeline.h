#pragma once
// Text-to-image: a diffusers StableDiffusionPipeline folder (model_index.json; tokenizer/ CLIPTokenizer,
// text_encoder/ CLIPTextModel, unet/ UNet2DConditionModel, vae/ AutoencoderKL, scheduler/; safety_checker/
// and feature_extractor/ ignored) run as StableDiffusionPipeline.__call__ runs it (diffusers v0.25), with the
// cross-attention of every U-Net call kept per step: which word lands where.
//
//   auto pipe = TextToImagePipeline::load(dir);
//   T2iRequest r;  r.prompt = "a sneaker above a bag";  r.steps = 25;  r.guidance = 7.5f;
//   T2iResult out = runTextToImage(*pipe, r, &callbacks, [](const T2iStep& s) { /* s.latents, s.maps */ });
//   out.image  // [3, H, W] in 0..1
//
// Semantics: the prompt (and the negative prompt, "" by default) padded to 77 CLIP tokens and truncated
// there; initial latents (given, or seeded normal noise) × the scheduler's init_noise_sigma; classifier-free
// guidance when guidance > 1 (the U-Net runs on the unconditional half, then the conditional one; noise =
// uncond + g · (cond − uncond)), none at 1; the image = decode(latents / scaling_factor) / 2 + 0.5, clamped.

#include "core/analysis/precision_parity.h"
#include "core/diffusion/sampler.h"
#include "core/models/clip_text_model.h"
#include "core/models/unet_model.h"
#include "core/models/vae_decoder.h"
#include "core/text/clip_tokenizer.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnlens {

// Whether `dir` holds a diffusers pipeline with a text encoder (its model_index.json names "text_encoder"):
// Stable Diffusion's layout, and the others this build refuses by name (SDXL, SD3). Never throws.
bool isTextToImageFolder(const std::filesystem::path& dir);

// Throws attnlens::Error when a model_index.json names components this build does not run (a second text
// encoder, a transformer denoiser, another U-Net / text encoder / tokenizer / VAE class, a missing one).
void checkTextToImageIndex(const JsonConfig& index);

class TextToImagePipeline {
public:
    // Throws attnlens::Error naming the folder and what is missing or unsupported (SDXL's second text
    // encoder, SD3 / Flux transformers, a cross_attention_dim other than the text encoder's width, …).
    static std::shared_ptr<const TextToImagePipeline> load(const std::filesystem::path& dir,
                                                           const Callbacks& callbacks = {});

    const std::filesystem::path& dir() const { return m_dir; }
    const std::string& className() const { return m_className; }
    const ClipTokenizer& tokenizer() const { return *m_tokenizer; }
    const ClipTextConfig& textEncoderConfig() const { return m_textConfig; }
    // The text encoder, read from text_encoder/ for each run: it is needed only to encode the prompts, and
    // kept it would hold its weights (0.5 GB for SD 1.x) through the whole denoising loop.
    std::shared_ptr<const ClipTextModel> loadTextEncoder() const;
    const UNet2DModel& unet() const { return *m_unet; }
    const AutoencoderKLDecoder& vae() const { return *m_vae; }
    const JsonConfig& schedulerConfig() const { return m_scheduler; }
    // The scheduler the folder names, or nullopt when it is one this build does not run (see className).
    std::optional<SamplerKind> folderSampler() const { return samplerOfClass(m_schedulerClass); }
    const std::string& schedulerClass() const { return m_schedulerClass; }
    // unet sample_size × the VAE's scale factor (512 for SD 1.x), or 0 when the U-Net has no sample_size.
    int defaultSize() const;
    // Image sizes must be divisible by this (the VAE's factor × the U-Net's).
    int sizeMultiple() const;

    // What the text encoder gives the U-Net for `prompt`: the last hidden state [77, D] of the prompt
    // padded (and truncated) to 77 tokens; ids: those 77 ids.
    Tensor encodePrompt(const ClipTextModel& text, std::string_view prompt,
                        std::vector<int>* ids = nullptr) const;

private:
    TextToImagePipeline() = default;
    std::filesystem::path m_dir;
    std::string m_className, m_schedulerClass;
    std::shared_ptr<const ClipTokenizer> m_tokenizer;
    ClipTextConfig m_textConfig;
    std::shared_ptr<const UNet2DModel> m_unet;
    std::shared_ptr<const AutoencoderKLDecoder> m_vae;
    JsonConfig m_scheduler;
};

// bf16 against float32 (Compute → BF16) on one guided step's conditional half: `prompt` encoded by the text
// encoder and a U-Net pass on seeded latents of sizeMultiple()'s latent size or 16, whichever is larger
// (small, so the check stays short on SD-sized models), each side in its own precision; noise and every
// captured map compared (core/analysis/precision_parity).
PrecisionParity t2iPrecisionParity(const TextToImagePipeline& pipe, std::string_view prompt);

struct T2iRequest {
    std::string prompt, negative;
    int steps = 25;
    float guidance = 7.5f;
    uint64_t seed = 0;
    std::optional<SamplerKind> sampler; // nullopt: the folder's own
    int height = 0, width = 0;          // 0: defaultSize()
    Tensor initLatents;                 // [C, h, w] before init_noise_sigma; empty: seeded normal noise
    bool captureMaps = true;            // the cross-attention of every step
    bool allHeads = false;              // keep every head's map (else the mean over heads)
    // Also keep the value-weighted maps (each head's row times its tokens' ‖v·W_O,hᵀ‖, renormalised, then the
    // heads as above; core/analysis/value_weighting.h): twice the maps' memory.
    bool valueWeighted = false;
    bool decode = true; // run the VAE at the end
};

// One cross-attention layer's maps at one step: pixels of its level over the 77 text tokens.
struct T2iCrossMap {
    UNetAttentionInfo layer;
    Tensor cond;   // [heads or 1, h·w, 77] (mean over heads unless allHeads)
    Tensor uncond; // the same for the unconditional half; empty without guidance
    // The same value-weighted (T2iRequest::valueWeighted; else empty).
    Tensor condWeighted, uncondWeighted;
};

struct T2iStep {
    int index = 0;      // 0-based step
    float timestep = 0; // the U-Net's timestep at this step
    Tensor input;       // [C, h, w] the U-Net's input at this step (scaled as the scheduler scales it)
    Tensor latents;     // [C, h, w] after the step
    std::vector<T2iCrossMap> maps;
};

// The prompt as the pipeline feeds it: 77 ids, padded and truncated.
struct T2iPrompt {
    std::vector<int> ids;            // the prompt's 77 padded ids
    std::vector<std::string> tokens; // their tokens
    int promptTokens = 0;            // BOS + pieces + EOS before padding / truncation
    bool truncated = false;          // the prompt had more than 75 pieces
};
T2iPrompt t2iPrompt(const TextToImagePipeline& pipe, std::string_view prompt);

struct T2iResult : T2iPrompt {
    SamplerKind sampler = SamplerKind::Pndm;
    std::vector<float> timesteps; // one per U-Net call (PLMS: steps + 1)
    std::vector<T2iStep> steps;   // one per U-Net call
    Tensor finalLatents;          // [C, h, w]
    Tensor image;                 // [3, H, W] in 0..1; empty when not decoded
};

// Runs the pipeline; onStep (may be empty) sees each step as it is made. Cancel is polled between U-Net
// blocks; a cancelled run throws Cancelled with the steps made so far reported already.
T2iResult runTextToImage(const TextToImagePipeline& pipe, const T2iRequest& request,
                         const Callbacks* callbacks, const std::function<void(const T2iStep&)>& onStep = {});

// The picture of latents [C, h, w] (a step's or the final ones): decode(latents / scaling_factor) / 2 + 0.5,
// clamped to 0..1 — as the pipeline makes its image.  -> [out channels, H, W]
Tensor decodeLatents(const TextToImagePipeline& pipe, const Tensor& latents,
                     const Callbacks* callbacks = nullptr);

// DAAM's aggregate: for each of the 77 tokens, the mean over steps and cross-attention layers of the
// conditional maps (mean over heads), each bicubic-upsampled to height × width.   -> [77, height, width]
Tensor aggregateWordMaps(const T2iResult& result, int height, int width);

} // namespace attnlens
