#include "core/registry/model_registry.h"

#include "core/diffusion/diffusion_model.h"
#include "core/diffusion/t2i_pipeline.h"
#include "core/io/gguf.h"

namespace attnlens {

ModelKind detectModelKind(const std::filesystem::path& dir) {
    if (std::error_code ec; std::filesystem::is_regular_file(dir, ec) && GgufFile::isGguf(dir))
        return familyOfModelType("llama")->kind; // the Llama family's GGUF files (core/models/llama_gguf.h)
    if (isTextToImageFolder(dir)) return ModelKind::TextToImage;
    if (isDiffusionFolder(dir)) return ModelKind::Diffusion;
    return inspectModelFolder(dir).kind;
}

} // namespace attnlens
