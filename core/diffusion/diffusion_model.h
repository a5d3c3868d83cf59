#pragma once
// A diffusion model folder as users have it on disk:
//   * a pipeline folder (from the hub or DDPMPipeline.save_pretrained): model_index.json, unet/
//     (config.json + diffusion_pytorch_model.safetensors), scheduler/scheduler_config.json;
//   * a bare UNet folder (UNet2DModel.save_pretrained): config.json + diffusion_pytorch_model.safetensors,
//     which gets DDPMScheduler()'s default configuration.
//
//   DiffusionModel m = loadDiffusionModel(dir);     // throws attnlens::Error naming what is wrong
//   m.unet->forward(...);  Scheduler s(SchedulerKind::Ddim, m.scheduler);

#include "core/diffusion/scheduler.h"
#include "core/models/unet_model.h"

#include <filesystem>
#include <memory>
#include <string>

namespace attnlens {

struct DiffusionFolderInfo {
    std::filesystem::path dir;
    std::filesystem::path unetDir;         // dir itself for a bare UNet folder
    std::filesystem::path schedulerConfig; // empty when the folder has none
    bool pipeline = false;
    std::string pipelineClass; // model_index.json "_class_name" (pipelines only)
};

// Whether dir looks like a diffusers folder (model_index.json, unet/config.json, or a config.json
// whose _class_name names a diffusers model). Never throws.
bool isDiffusionFolder(const std::filesystem::path& dir);
// Describes the folder; throws attnlens::Error when it is not a loadable diffusers U-Net folder.
DiffusionFolderInfo inspectDiffusionFolder(const std::filesystem::path& dir);

struct DiffusionModel {
    DiffusionFolderInfo folder;
    std::shared_ptr<const UNet2DModel> unet;
    SchedulerConfig scheduler;

    // A class's name from the config's id2label, or its number.
    std::string className(int index) const;
};

DiffusionModel loadDiffusionModel(const std::filesystem::path& dir);

} // namespace attnlens
