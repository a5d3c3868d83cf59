#include "core/io/model_folder.h"

#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/util/error.h"
#include "resource_paths.h" // generated: ATTNLENS_SOURCE_DIR, ATTNLENS_INSTALL_DATADIR

#include <algorithm>
#include <array>
#include <cstdlib>

namespace attnlens {

namespace {

const std::array<ModelFamily, 8> kFamilies = {{
    {"Marian", {"marian"}, ModelKind::Marian},
    {"ViT / DINOv2 / CLIP / SigLIP",
     {"vit", "dinov2", "dinov2_with_registers", "clip", "clip_vision_model", "siglip", "siglip_vision_model"},
     ModelKind::Vit},
    {"diffusers UNet2DModel", {}, ModelKind::Diffusion},
    {"Stable Diffusion pipelines", {}, ModelKind::TextToImage},
    {"BERT", {"bert"}, ModelKind::Text},
    {"GPT-2", {"gpt2"}, ModelKind::Text},
    {"Llama-style decoders", {"llama", "mistral", "qwen2", "qwen3", "gemma3_text"}, ModelKind::Text},
    {"CLIP text encoder", {"clip_text_model"}, ModelKind::Text},
}};

struct KindRow {
    ModelKind kind;
    std::string_view builtin, purpose;
};
const std::array<KindRow, 5> kKinds = {{
    {ModelKind::Marian, "marian-de-en-tiny", "translation"},
    {ModelKind::Vit, "vit-fashion-mnist", "vision"},
    {ModelKind::Diffusion, "ddpm-fashion-tiny", "diffusion"},
    {ModelKind::Text, "llama-en-tiny", "text"},
    {ModelKind::TextToImage, "sd-fashion-tiny", "text-to-image"},
}};

const KindRow* rowOf(ModelKind kind) {
    const auto it =
        std::find_if(kKinds.begin(), kKinds.end(), [kind](const KindRow& r) { return r.kind == kind; });
    return it == kKinds.end() ? nullptr : &*it;
}

} // namespace

std::span<const ModelFamily> modelFamilies() {
    return kFamilies;
}

const ModelFamily* familyOfModelType(std::string_view modelType) {
    for (const ModelFamily& f : kFamilies)
        if (std::find(f.modelTypes.begin(), f.modelTypes.end(), modelType) != f.modelTypes.end()) return &f;
    return nullptr;
}

std::string_view builtinModelName(ModelKind kind) {
    const KindRow* r = rowOf(kind);
    return r ? r->builtin : std::string_view();
}

std::string_view modelKindPurpose(ModelKind kind) {
    const KindRow* r = rowOf(kind);
    return r ? r->purpose : std::string_view("unknown");
}

std::string supportedFamilies() {
    // Families of one kind next to each other are joined: "BERT, GPT-2 and Llama-style decoders (text)".
    std::string out;
    for (size_t i = 0; i < kFamilies.size(); ++i) {
        const ModelFamily& f = kFamilies[i];
        const bool sameNext = i + 1 < kFamilies.size() && kFamilies[i + 1].kind == f.kind;
        const bool samePrevious = i > 0 && kFamilies[i - 1].kind == f.kind;
        if (!out.empty()) out += samePrevious && !sameNext ? " and " : ", ";
        out += f.name;
        if (!sameNext) out += " (" + std::string(modelKindPurpose(f.kind)) + ")";
    }
    return out;
}

void refuseGgufFile(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && GgufFile::isGguf(path))
        throw Error("'" + path.string() +
                    "': a GGUF file, where a model folder is expected (GGUF files open on "
                    "the Text page, in attnlens-cli text and inspect)");
}

ModelFolderInfo inspectModelFolder(const std::filesystem::path& dir) {
    refuseGgufFile(dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error("'" + dir.string() + "': not a model folder (directory not found)");
    ModelFolderInfo info;
    info.dir = dir;
    const auto configPath = dir / "config.json";
    if (!std::filesystem::exists(configPath, ec))
        throw Error("'" + dir.string() + "': config.json is missing (expected a Hugging Face model folder)");
    JsonConfig config(configPath);
    info.modelType = config.get<std::string>("model_type");
    if (const ModelFamily* family = familyOfModelType(info.modelType)) info.kind = family->kind;
    info.weights = findWeightsFile(dir, "model");
    return info;
}

std::filesystem::path findWeightsFile(const std::filesystem::path& dir, const std::string& stem) {
    std::error_code ec;
    const auto safetensors = dir / (stem + ".safetensors");
    if (std::filesystem::exists(safetensors, ec)) return safetensors;
    if (const auto index = dir / (stem + ".safetensors.index.json"); std::filesystem::exists(index, ec))
        return index;
    const std::string binName = (stem == "model" ? std::string("pytorch_model") : stem) + ".bin";
    if (std::filesystem::exists(dir / binName, ec)) return dir / binName;
    if (const auto index = dir / (binName + ".index.json"); std::filesystem::exists(index, ec)) return index;
    throw Error("'" + dir.string() + "': " + stem + ".safetensors is missing (and so is " + binName + ")");
}

namespace {

std::vector<std::filesystem::path> resourceRoots() {
    std::vector<std::filesystem::path> roots;
    if (const char* env = std::getenv("ATTNLENS_RESOURCES_DIR"); env && *env) roots.emplace_back(env);
    // An installed program finds its data beside it (PREFIX/bin/../share/attnlens), wherever the prefix was
    // chosen at install time (cmake --install --prefix P) and even if it was moved.
    std::error_code ec;
    if (const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec); !ec && exe.has_parent_path())
        roots.emplace_back(exe.parent_path().parent_path() / "share" / "attnlens");
    roots.emplace_back(std::filesystem::path(ATTNLENS_SOURCE_DIR) / "resources");
    roots.emplace_back(std::filesystem::path(ATTNLENS_INSTALL_DATADIR));
    return roots;
}

} // namespace

std::filesystem::path builtinModelDir(ModelKind kind) {
    return builtinModelDir(std::string(builtinModelName(kind)));
}

std::filesystem::path resourcesDir() {
    std::error_code ec;
    for (const auto& root : resourceRoots())
        if (std::filesystem::is_directory(root / "models", ec)) return root;
    throw Error(
        "resources folder not found (looked in $ATTNLENS_RESOURCES_DIR, the source tree and the install "
        "prefix)");
}

std::filesystem::path builtinModelDir(const std::string& name) {
    std::error_code ec;
    for (const auto& root : resourceRoots()) {
        const auto dir = root / "models" / name;
        if (std::filesystem::is_directory(dir, ec)) return dir;
    }
    throw Error("built-in model '" + name +
                "' not found (looked in $ATTNLENS_RESOURCES_DIR/models, the source "
                "tree and the install prefix)");
}

} // namespace attnlens
