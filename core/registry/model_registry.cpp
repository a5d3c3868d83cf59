#include "core/registry/model_registry.h"

#include "core/diffusion/diffusion_model.h"

namespace attnlens {

ModelKind detectModelKind(const std::filesystem::path& dir) {
    if (isDiffusionFolder(dir)) return ModelKind::Diffusion;
    return inspectModelFolder(dir).kind;
}

} // namespace attnlens
