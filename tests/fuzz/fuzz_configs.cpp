// libFuzzer target: config.json / preprocessor_config.json / scheduler_config.json as a user's folder holds
// them — parsed as JSON, then read as a ViT / DINOv2 / CLIP / SigLIP vision tower, a CLIP or SigLIP
// text_config, a UNet2DModel / UNet2DConditionModel, an image processor, a diffusers scheduler config (and
// each text-to-image scheduler built from it), an AutoencoderKL config and a pipeline's model_index.json. Bad
// input: attnlens::Error only.
#include "core/diffusion/sampler.h"
#include "core/diffusion/scheduler.h"
#include "core/diffusion/t2i_pipeline.h"
#include "core/io/json_file.h"
#include "core/models/clip_text_model.h"
#include "core/models/unet_config.h"
#include "core/models/vae_decoder.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"
#include "core/vision/preprocess.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const attnlens::Json json = attnlens::Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return 0;
    const attnlens::JsonConfig config(json, "config.json");
    try {
        (void)attnlens::VitConfig::fromJson(config);
    } catch (const attnlens::Error&) {
    }
    try { // a CLIPModel's text_config (the vision_config is VitConfig's above)
        (void)attnlens::ClipTextConfig::fromNested(config);
    } catch (const attnlens::Error&) {
    }
    try { // a SiglipModel's text_config
        (void)attnlens::ClipTextConfig::fromSiglipNested(config);
    } catch (const attnlens::Error&) {
    }
    try {
        (void)attnlens::UNet2DConfig::fromJson(config);
    } catch (const attnlens::Error&) {
    }
    try {
        (void)attnlens::ImageProcessorConfig::fromJson(config);
    } catch (const attnlens::Error&) {
    }
    try {
        (void)attnlens::SchedulerConfig::fromJson(config);
    } catch (const attnlens::Error&) {
    }
    for (auto kind : {attnlens::SamplerKind::Pndm, attnlens::SamplerKind::Ddim, attnlens::SamplerKind::Euler,
                      attnlens::SamplerKind::DpmSolver}) {
        try {
            attnlens::Sampler sampler(kind, config);
            sampler.setTimesteps(7);
            (void)sampler.initNoiseSigma();
        } catch (const attnlens::Error&) {
        }
    }
    try {
        (void)attnlens::VaeConfig::fromJson(config);
    } catch (const attnlens::Error&) {
    }
    try {
        attnlens::checkTextToImageIndex(config);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
