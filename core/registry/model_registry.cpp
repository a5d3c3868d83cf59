#include "core/registry/model_registry.h"

#include "core/diffusion/diffusion_model.h"
#include "core/diffusion/t2i_pipeline.h"

namespace attnlens {

ModelKind detectModelKind(const std::filesystem::path& dir) {
    if (isTextToImageFolder(dir)) return ModelKind::TextToImage;
    if (isDiffusionFolder(dir)) return ModelKind::Diffusion;
    return inspectModelFolder(dir).kind;
}

} // namespace attnlens
