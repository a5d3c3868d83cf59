#include "core/diffusion/diffusion_model.h"

#include "core/io/json_file.h"
#include "core/util/error.h"

namespace attnlens {

namespace {

bool pathExists(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
}

} // namespace

bool isDiffusionFolder(const std::filesystem::path& dir) {
    if (pathExists(dir / "model_index.json") || pathExists(dir / "unet" / "config.json")) return true;
    if (!pathExists(dir / "config.json")) return false;
    try {
        const Json j = readJsonFile(dir / "config.json");
        return j.is_object() && j.contains("_class_name") && j.contains("_diffusers_version");
    } catch (const Error&) {
        return false;
    }
}

DiffusionFolderInfo inspectDiffusionFolder(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error("'" + dir.string() + "' is not a folder");
    DiffusionFolderInfo info;
    info.dir = dir;
    if (pathExists(dir / "model_index.json") || pathExists(dir / "unet")) {
        info.pipeline = true;
        if (pathExists(dir / "model_index.json")) {
            const JsonConfig index(dir / "model_index.json");
            info.pipelineClass = index.value<std::string>("_class_name", "");
            for (const char* part : {"vqvae", "vae", "text_encoder"})
                if (index.has(part))
                    throw Error("'" + dir.string() + "': a " +
                                (info.pipelineClass.empty() ? "pipeline" : info.pipelineClass) + " with a " +
                                part +
                                " is not supported (Attention Lens runs pixel-space UNet2DModel pipelines "
                                "such as DDPMPipeline and DDIMPipeline)");
            if (index.has("unet") && index.json()["unet"].is_array() && index.json()["unet"].size() == 2 &&
                index.json()["unet"][1].is_string() &&
                index.json()["unet"][1].get<std::string>() != "UNet2DModel")
                throw Error("'" + dir.string() + "': model_index.json names a " +
                            index.json()["unet"][1].get<std::string>() +
                            " as its unet; only UNet2DModel is supported");
        }
        info.unetDir = dir / "unet";
        if (!pathExists(info.unetDir / "config.json"))
            throw Error("'" + dir.string() +
                        "' looks like a diffusers pipeline folder but has no unet/config.json");
        if (pathExists(dir / "scheduler" / "scheduler_config.json"))
            info.schedulerConfig = dir / "scheduler" / "scheduler_config.json";
    } else {
        if (!pathExists(dir / "config.json"))
            throw Error("'" + dir.string() + "' has no config.json or model_index.json");
        info.unetDir = dir;
    }
    return info;
}

DiffusionModel loadDiffusionModel(const std::filesystem::path& dir) {
    DiffusionModel m;
    m.folder = inspectDiffusionFolder(dir);
    m.scheduler = m.folder.schedulerConfig.empty()
                      ? SchedulerConfig::defaults()
                      : SchedulerConfig::fromJson(JsonConfig(m.folder.schedulerConfig));
    m.unet = UNet2DModel::load(m.folder.unetDir);
    return m;
}

std::string DiffusionModel::className(int index) const {
    const auto& names = unet->config().classNames;
    if (index >= 0 && static_cast<size_t>(index) < names.size() && !names[static_cast<size_t>(index)].empty())
        return names[static_cast<size_t>(index)];
    return std::to_string(index);
}

} // namespace attnlens
